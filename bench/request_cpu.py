"""CPU per ingest request in-process (issue 19): where one accept request's time goes.

Runs `GET /healthz`, one-incident `POST /api/v1/incidents` and one-event Sentry envelope
`POST`s through Django's full handler (`django.test.Client`, every middleware) against the
migrated database of RCA_DATA_DIR, with RCA_INGEST_INLINE=0 so a request only accepts.
Prints ms of CPU per request for each; with BENCH_PROFILE=1 also a cProfile of each path
(sorted by BENCH_SORT, default tottime; top BENCH_TOP rows). Figures only: the machine is
shared, read the load average printed with them.

BENCH_COMMITTER=1 writes through the group committer, as gunicorn workers do
(`webapp/gunicorn_conf.py`): the insert then runs on the process's committing connection,
not the request's (no per-request connection health check). Without it (the default, as
before) each request inserts on its own connection and pays Django's health check, a
round trip more than in production.
"""

from __future__ import annotations

import cProfile
import os
import time
from collections.abc import Callable

os.environ.setdefault("RCA_INGEST_INLINE", "0")
os.environ.setdefault("RCA_RATE_LIMIT_PER_MINUTE", "6000000")
os.environ.setdefault("RCA_RATE_LIMIT_BURST", "100000")

import _env  # noqa: E402

_env.setup_django()

import json  # noqa: E402

import sentry_envelopes  # noqa: E402
from django.test import Client  # noqa: E402

from ingest.keys import create_key  # noqa: E402
from ingest.models import Project  # noqa: E402

N = int(os.environ.get("BENCH_N", "500"))
if os.environ.get("BENCH_COMMITTER", "0") == "1":
    from ingest.inbox.write import enable_group_commit

    enable_group_commit()
PROFILE = os.environ.get("BENCH_PROFILE", "0") == "1"


def run(name: str, send: Callable[[int], int], expected: int) -> None:
    for i in range(N, N + 20):  # warm (connections, caches) on items the timed run never sends
        send(i)
    prof = cProfile.Profile(time.process_time) if PROFILE else None  # CPU, not waits
    start = time.process_time()
    if prof:
        prof.enable()
    for i in range(N):
        status = send(i)
        assert status == expected, (name, status)
    if prof:
        prof.disable()
    ms = (time.process_time() - start) * 1000 / N
    print(f"{name:10s} {ms:.3f} ms CPU per request{' (profiled)' if prof else ''}")
    if prof:
        _env.print_profile(prof)


def main() -> None:
    project, _ = Project.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
    _, key = create_key(project, "request-cpu")
    client = Client()
    bodies = [json.dumps(_env.bench_incident(i)).encode() for i in range(N + 20)]
    envelopes = [sentry_envelopes.envelope_body(_env.bench_incident(i)) for i in range(N + 20)]
    sentry = {
        "HTTP_CONTENT_ENCODING": "gzip",
        "HTTP_USER_AGENT": f"sentry.python/{sentry_envelopes.SDK['version']}",
        "HTTP_X_SENTRY_AUTH": sentry_envelopes.auth_header(project.sentry_key),
    }
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    run("healthz", lambda i: client.get("/healthz").status_code, 200)
    run(
        "single",
        lambda i: (
            client.post(
                "/api/v1/incidents", bodies[i], content_type="application/json", **bearer
            ).status_code
        ),
        202,
    )
    run(
        "envelope",
        lambda i: (
            client.post(
                f"/api/{project.pk}/envelope/",
                envelopes[i],
                content_type="application/x-sentry-envelope",
                **sentry,
            ).status_code
        ),
        200,
    )
    committer = " (group committer)" if os.environ.get("BENCH_COMMITTER") == "1" else ""
    print(f"load average{committer}:", os.getloadavg())


if __name__ == "__main__":
    main()
