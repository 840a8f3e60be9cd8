"""Accepted incidents/s over real HTTP (gunicorn, 2 workers, concurrent client), in one run.

Issue 19: every way in is measured against a floor taken in the same run, so a busy
machine moves the figures but not much their ratios. Four paths, the same failures:

* `healthz`: `GET /healthz` (touches nothing) with the same server and client: what one
  request costs before any ingest work; the single and envelope paths' target is >= 0.5x;
* `single`: one incident per `POST /api/v1/incidents` (our SDK, curl);
* `envelope`: one event per `POST /api/<project>/envelope/`, the body a Sentry SDK sends
  (bench/sentry_envelopes.py), authenticated by the DSN's public key;
* `batch`: BENCH_BATCH incidents per `POST /api/v1/incidents/batch` (a buffering client),
  against `raw`: the same payloads inserted with psycopg, one committed INSERT each, into a
  scratch table: the floor cost of durably storing one, with no validation, parsing,
  grouping or enqueueing (target >= 1.0x).

Every incident is scrubbed, parsed, grouped, stored and queued for analysis. Then the storm
of bench/storm.py (bench/storm_analyses.py): analyses run for 20,000 incidents of 20
issues (target <= 40). Ends with one JSON line; the embedded broker, as `make run`.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import _env
import sentry_envelopes
from storm_analyses import storm_analyses

from webapp.supervisor import gunicorn_argv

if TYPE_CHECKING:
    from ingest.models import Project

N = int(os.environ.get("BENCH_N", "2000"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "8"))
BATCH = int(os.environ.get("BENCH_BATCH", "100"))
# Batches go fast: more incidents than the single path, so a run lasts seconds, not 0.7 s.
BATCH_N = int(os.environ.get("BENCH_BATCH_N", "10000"))
WARM = 50  # incidents sent before timing each path: connections, caches


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


def bench_http(work: list, project: Project, key: str, mode: str) -> float:
    """Requests/s for `mode`, each request carrying one item of `work` (counted per incident).

    `healthz`: `GET /healthz` (touches nothing) once per item, the per-request floor of
    this server and client; `single`: one incident per `POST /api/v1/incidents`;
    `envelope`: one gzipped Sentry envelope (bytes) per `POST /api/<project>/envelope/`,
    DSN key in `X-Sentry-Auth`; `batch`: lists of incidents to `POST /api/v1/incidents/batch`.
    """
    import threading

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
        },
    )
    base = f"http://127.0.0.1:{port}"
    bearer = {"Authorization": f"Bearer {key}"}
    sentry = {
        "Content-Type": "application/x-sentry-envelope",
        "Content-Encoding": "gzip",
        "User-Agent": f"sentry.python/{sentry_envelopes.SDK['version']}",
        "X-Sentry-Auth": sentry_envelopes.auth_header(project.sentry_key),
    }
    local = threading.local()

    def session() -> requests.Session:
        if not hasattr(local, "session"):
            local.session = requests.Session()
        return local.session

    def send(item: Any) -> int:
        """1 if the request was accepted as the endpoint documents, else 0."""
        s = session()
        if mode == "healthz":
            return int(s.get(f"{base}/healthz", timeout=30).status_code == 200)
        if mode == "single":
            resp = s.post(f"{base}/api/v1/incidents", json=item, headers=bearer, timeout=30)
            return int(resp.status_code == 202)
        if mode == "envelope":
            resp = s.post(
                f"{base}/api/{project.pk}/envelope/", data=item, headers=sentry, timeout=30
            )
            return int(resp.status_code == 200 and len(resp.json()["ids"]) == 1)
        resp = s.post(
            f"{base}/api/v1/incidents/batch", json={"incidents": item}, headers=bearer, timeout=60
        )
        return int(resp.status_code == 202 and resp.json()["accepted"] == len(item))

    try:
        wait_http(f"{base}/healthz")
        size = BATCH if mode == "batch" else 1
        requests_ = [work[i : i + size] for i in range(0, len(work), size)] if size > 1 else work
        with ThreadPoolExecutor(CLIENTS) as pool:  # warm-up: connections, caches
            warm = warm_requests(size)
            list(pool.map(send, requests_[:warm]))
            timed = requests_[warm:]
            start = time.perf_counter()
            ok = sum(pool.map(send, timed))
            elapsed = time.perf_counter() - start
        if ok != len(timed):
            raise SystemExit(f"{mode}: {len(timed) - ok} of {len(timed)} requests not accepted")
        return len(timed) * size / elapsed
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
        for item in items[WARM:]:
            conn.execute("INSERT INTO bench_raw (body) VALUES (%s)", (json.dumps(item),))
        elapsed = time.perf_counter() - start
        conn.execute("DROP TABLE bench_raw")
    return (len(items) - WARM) / elapsed


def warm_requests(size: int) -> int:
    """Untimed requests first (connections, caches): WARM incidents, at least one per client."""
    return max(CLIENTS, WARM // size)


def main() -> None:
    _env.setup_django()
    from ingest.keys import create_key
    from ingest.models import Project

    project, _ = Project.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
    project.incidents.all().delete()
    project.issues.all().delete()
    _, key = create_key(project, "bench")
    load_start = load()
    single = payloads(N + WARM)
    batched = payloads(BATCH_N + warm_requests(BATCH) * BATCH)
    print(
        f"{os.cpu_count()} cores, load average {load_start} at start;"
        f" gunicorn 2 workers x 4 threads, {CLIENTS} concurrent clients, same machine,"
        " embedded broker (make run's default);"
        f" {N} requests per path one incident each, {BATCH_N} incidents in batches of {BATCH}"
    )
    raw = bench_raw(batched)
    print(f"raw psycopg INSERT loop (1 connection, autocommit): {raw:8.1f} inserts/s")
    rates = {"healthz": bench_http(single, project, key, "healthz")}
    rates["single"] = bench_http(single, project, key, "single")
    envelopes = [sentry_envelopes.envelope_body(item) for item in single]
    rates["envelope"] = bench_http(envelopes, project, key, "envelope")
    rates["batch"] = bench_http(batched, project, key, "batch")
    rates["raw"] = raw
    for mode, label in (
        ("healthz", "GET /healthz (touches nothing): the per-request floor"),
        ("single", "POST /api/v1/incidents, one incident each"),
        ("envelope", "POST /api/<project>/envelope/, one Sentry SDK envelope each (gzip)"),
        ("batch", f"POST /api/v1/incidents/batch, {BATCH} incidents each"),
    ):
        print(f"{label}: {rates[mode]:8.1f} incidents/s")
    # The ingest runs queued analyses nobody consumed; the storm's workers must not inherit
    # them (the storm purges the broker; these rows would still be pending).
    project.incidents.all().delete()
    project.issues.all().delete()
    storm = storm_analyses()
    print(
        f"storm: {storm['storm_incidents']} incidents of {storm['storm_issues']} issues,"
        f" {storm['storm_analyses']} analyses run (target <= {2 * storm['storm_issues']})"
    )
    print(
        json.dumps(
            {
                "healthz_per_s": round(rates["healthz"], 1),
                "single_per_s": round(rates["single"], 1),
                "envelope_per_s": round(rates["envelope"], 1),
                "batch_per_s": round(rates["batch"], 1),
                "raw_per_s": round(raw, 1),
                "single_vs_healthz": round(rates["single"] / rates["healthz"], 2),
                "envelope_vs_healthz": round(rates["envelope"] / rates["healthz"], 2),
                "batch_vs_raw": round(rates["batch"] / raw, 2),
                "storm_analyses": storm["storm_analyses"],
                "storm_incidents": storm["storm_incidents"],
                "storm_issues": storm["storm_issues"],
                "cores": os.cpu_count(),
                "load_start": load_start,
                "load_end": load(),
            }
        )
    )


def load() -> list[float]:
    """1, 5 and 15 minute load averages: the figures mean little on a busy machine."""
    return [round(x, 2) for x in os.getloadavg()]


if __name__ == "__main__":
    main()
