"""POST -> suggestion stored: latency p50/p95 with the offline provider and a warm worker.

Real processes: gunicorn (2 workers) and a prefork Celery worker (concurrency 1) on the
bench cluster; incidents are the dev-set errors (each a distinct issue, so each one is
really analysed). Also prints the worker's resident memory with the model loaded.
Goal (issue 5): p50 <= 300 ms, p95 <= 1 s.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

import _env

from webapp.supervisor import gunicorn_argv

os.environ.setdefault("RCA_DATA_DIR", str(_env.REPO / ".data" / "bench-pipeline"))

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))


def cases() -> list[dict]:
    path = _env.REPO / "tests" / "data" / "dev_cases.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def payload(case: dict, tag: str) -> dict:
    return {
        "service": f"bench-{tag}",
        "error_type": case["exception_type"],
        "message": case["message"],
        "stacktrace": case["traceback"] or None,
        "logs": case["logs"],
        # a fingerprint per run: every POST opens a new issue and gets its own analysis
        "fingerprint": [tag, case["id"]],
    }


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def worker_rss_mb(proc: subprocess.Popen) -> float:
    import psutil

    parent = psutil.Process(proc.pid)
    return sum(p.memory_info().rss for p in [parent, *parent.children(recursive=True)]) / 2**20


def run(broker_url: str | None, name: str, key: str) -> None:
    import requests
    from django.db import connection

    from ingest.models import Incident
    from rca.models import Suggestion

    env = {**os.environ, "PYTHONUNBUFFERED": "1", "RCA_RATE_LIMIT_PER_MINUTE": "0"}
    if broker_url:
        env["CELERY_BROKER_URL"] = broker_url
    port = _env.free_port()
    log = open(Path(os.environ["RCA_DATA_DIR"]) / f"pipeline-{name.split()[0]}.log", "wb")  # noqa: SIM115
    web = subprocess.Popen(
        gunicorn_argv(port, "--log-level", "warning"),
        cwd=_env.REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    worker = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "webapp",
            "worker",
            "--concurrency",
            "1",
            "--loglevel",
            "WARNING",
            "-n",
            f"bench-{uuid.uuid4().hex[:6]}@%h",
        ],
        cwd=_env.REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}/api/v1/incidents"
    headers = {"Authorization": f"Bearer {key}"}
    session = requests.Session()

    def once(case: dict, tag: str) -> float:
        started = time.perf_counter()
        resp = session.post(url, json=payload(case, tag), headers=headers, timeout=30)
        resp.raise_for_status()
        incident_id = resp.json()["incident_id"]
        while not Suggestion.objects.filter(incident_id=incident_id).exists():
            status = Incident.objects.values_list("analysis_status", flat=True).get(pk=incident_id)
            if status == "failed":
                raise SystemExit(f"analysis of incident {incident_id} failed")
            if time.perf_counter() - started > 120:
                raise SystemExit(f"no suggestion for incident {incident_id} after 120 s")
            time.sleep(0.005)
        return time.perf_counter() - started

    try:
        for _ in range(100):
            try:
                session.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
                break
            except requests.RequestException:
                time.sleep(0.2)
        all_cases = cases()
        warm = [once(case, f"warm-{uuid.uuid4().hex[:6]}") for case in all_cases[:3]]
        times = []
        for _ in range(ROUNDS):
            tag = uuid.uuid4().hex[:8]
            times += [once(case, tag) for case in all_cases]
        rss = worker_rss_mb(worker)
        print(
            f"{name:40} n={len(times):3}  p50 {percentile(times, 0.5) * 1000:6.0f} ms  "
            f"p95 {percentile(times, 0.95) * 1000:6.0f} ms  "
            f"mean {statistics.mean(times) * 1000:6.0f} ms"
            f"  (first, cold: {warm[0]:.1f} s)  worker RSS {rss:.0f} MiB"
        )
    finally:
        connection.close()
        for proc in (web, worker):
            proc.terminate()
        for proc in (web, worker):
            proc.wait(20)
        log.close()


def main() -> None:
    _env.setup_django()
    from ingest.keys import create_key
    from ingest.models import Project
    from rca.corpus.embeddings import embed_missing_chunks
    from rca.corpus.store import load_runbooks

    load_runbooks()
    embed_missing_chunks()
    project, _ = Project.objects.get_or_create(slug="bench-pipeline", defaults={"name": "Bench"})
    _, key = create_key(project, "bench")
    print(f"POST -> suggestion stored, offline provider, load {os.getloadavg()[0]:.1f}")
    run(None, "embedded broker (SQLAlchemy, 50 ms poll)", key)
    if _env.redis_reachable():
        run("redis://127.0.0.1:6379/13", "Redis broker", key)


if __name__ == "__main__":
    main()
