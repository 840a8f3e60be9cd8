"""Accepted incidents/s over real HTTP (gunicorn, 2 workers, concurrent client) vs raw inserts.

Prints both rates and their ratio (target >= 0.5). The raw loop inserts the same JSON
payloads with psycopg, one committed INSERT each, into a scratch table: the floor cost
of durably storing a request, with no validation, parsing, grouping or enqueueing.

Two ways in are measured: one incident per `POST /api/v1/incidents`, and the same
payloads as `POST /api/v1/incidents/batch` requests of BENCH_BATCH incidents (what a
buffering client sends). The single path runs twice: with the analysis message published
by the request itself (RCA_PUBLISH_IN_BACKGROUND=false) and by the background publisher.
Every incident is scrubbed, parsed, grouped, stored and queued for analysis either way.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import _env

from webapp.supervisor import gunicorn_argv

N = int(os.environ.get("BENCH_N", "2000"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "8"))
BATCH = int(os.environ.get("BENCH_BATCH", "100"))
# Batches go fast: more incidents than the single path, so a run lasts seconds, not 0.7 s.
BATCH_N = int(os.environ.get("BENCH_BATCH_N", "10000"))


def payloads(n: int) -> list[dict]:
    out = []
    for i in range(n):
        batch = 1 + i % 64
        message = f"mat1 and mat2 shapes cannot be multiplied ({batch}x256 and 512x10)"
        out.append(
            {
                "service": f"svc-{i % 5}",
                "error_type": "RuntimeError",
                "message": message,
                "stacktrace": (
                    "Traceback (most recent call last):\n"
                    f'  File "/srv/app/model_{i % 7}.py", line 41, in forward\n'
                    "    return self.head(x)\n"
                    f"RuntimeError: {message}"
                ),
                "logs": [f"ERROR step={i} trace_id=t{i} error_code=E_SHAPE"],
                "inference_context": {"model_id": "ranker-v3", "batch_size": batch},
            }
        )
    return out


def wait_http(url: str, timeout: float = 30) -> None:
    import requests

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=1)
            return
        except requests.RequestException:
            time.sleep(0.2)
    raise TimeoutError(url)


def bench_http(
    items: list[dict], key: str, broker_url: str | None, batch: int, env: dict | None = None
) -> float:
    """Incidents/s; `batch` > 1 sends them `batch` at a time to the batch endpoint.

    `batch` 0 measures the floor instead: as many `GET /healthz` (which touches nothing)
    as there are incidents, with the same server and client: what one request costs
    before any ingest work.
    """
    import requests

    port = _env.free_port()
    server = subprocess.Popen(
        gunicorn_argv(
            port, "--worker-class", "gthread", "--threads", "4", "--log-level", "warning"
        ),
        cwd=_env.REPO,
        env={
            **os.environ,
            "RCA_RATE_LIMIT_PER_MINUTE": "6000000",
            "RCA_RATE_LIMIT_BURST": "100000",
            **({"CELERY_BROKER_URL": broker_url} if broker_url else {}),
            **(env or {}),
        },
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/healthz")
        url = f"http://127.0.0.1:{port}/api/v1/incidents"
        headers = {"Authorization": f"Bearer {key}"}
        sessions: dict[int, requests.Session] = {}

        import threading

        def send(item: dict) -> int:
            s = sessions.setdefault(threading.get_ident(), requests.Session())
            return s.post(url, json=item, headers=headers, timeout=30).status_code

        def probe(_: dict) -> int:
            s = sessions.setdefault(threading.get_ident(), requests.Session())
            code = s.get(f"http://127.0.0.1:{port}/healthz", timeout=30).status_code
            return 202 if code == 200 else code

        def send_batch(chunk: list[dict]) -> int:
            s = sessions.setdefault(threading.get_ident(), requests.Session())
            resp = s.post(f"{url}/batch", json={"incidents": chunk}, headers=headers, timeout=60)
            if resp.status_code != 202 or resp.json()["accepted"] != len(chunk):
                return resp.status_code if resp.status_code != 202 else 207
            return 202

        with ThreadPoolExecutor(CLIENTS) as pool:  # warm-up: connections, caches
            list(pool.map(send, items[:50]))
            work = items[50:]
            start = time.perf_counter()
            if batch > 1:
                chunks = [work[i : i + batch] for i in range(0, len(work), batch)]
                codes = list(pool.map(send_batch, chunks))
            else:
                codes = list(pool.map(send if batch == 1 else probe, work))
            elapsed = time.perf_counter() - start
        bad = [c for c in codes if c != 202]
        if bad:
            raise SystemExit(f"{len(bad)} requests not accepted, e.g. {bad[:5]}")
        return len(work) / elapsed
    finally:
        server.terminate()
        server.wait(10)


def bench_raw(items: list[dict]) -> float:
    import psycopg
    from django.db import connection

    db = connection.settings_dict
    conninfo = f"dbname={db['NAME']} user={db['USER']} host={db['HOST']}"
    if db.get("PORT"):
        conninfo += f" port={db['PORT']}"
    if db.get("PASSWORD"):
        conninfo += f" password={db['PASSWORD']}"
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_raw (id bigserial PRIMARY KEY, body jsonb)")
        conn.execute("TRUNCATE bench_raw")
        start = time.perf_counter()
        for item in items[50:]:
            conn.execute("INSERT INTO bench_raw (body) VALUES (%s)", (json.dumps(item),))
        elapsed = time.perf_counter() - start
        conn.execute("DROP TABLE bench_raw")
    return (len(items) - 50) / elapsed


def main() -> None:
    _env.setup_django()
    from ingest.keys import create_key
    from ingest.models import Project

    project, _ = Project.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
    project.incidents.all().delete()
    project.issues.all().delete()
    _, key = create_key(project, "bench")
    items = payloads(max(N, BATCH_N) + 50)
    raw = bench_raw(items)
    print(
        f"gunicorn 2 workers x 4 threads, {CLIENTS} concurrent clients, same machine;"
        f" {N} incidents one per request, {BATCH_N} in batches, the raw loop {len(items) - 50}"
    )
    print(f"raw psycopg INSERT loop (1 connection, autocommit): {raw:8.1f} inserts/s")
    floor = bench_http(items[: N + 50], key, None, 0)
    print(
        f"floor: GET /healthz (touches nothing), same server and client: {floor:8.1f} requests/s,"
        f" ratio {floor / raw:.2f}"
    )
    brokers = [("embedded broker (SQLAlchemy on PostgreSQL)", None)]
    if _env.redis_reachable():
        brokers.append(("Redis broker", "redis://127.0.0.1:6379/14"))
    for name, url in brokers:
        for how, batch, env in (
            ("one per request, publishing inline", 1, {"RCA_PUBLISH_IN_BACKGROUND": "false"}),
            (
                "one per request, publishing in the background",
                1,
                {"RCA_PUBLISH_IN_BACKGROUND": "true"},
            ),
            (f"batches of {BATCH}", BATCH, {}),
        ):
            http = bench_http(items if batch > 1 else items[: N + 50], key, url, batch, env)
            print(
                f"ingest over HTTP, {name}, {how}: {http:8.1f} incidents/s,"
                f" ratio {http / raw:.2f} (target >= 0.5)"
            )
        if url:  # drop the queued analyses: nobody consumes this bench queue
            import redis

            redis.Redis.from_url(url).flushdb()


if __name__ == "__main__":
    main()
