"""CPU per ingest request in-process (issue 19): where one accept request's time goes.

Runs `GET /healthz`, one-incident `POST /api/v1/incidents` and one-event Sentry envelope
`POST`s through Django's full handler (`django.test.Client`, every middleware) against the
migrated database of RCA_DATA_DIR, with RCA_INGEST_INLINE=0 so a request only accepts.
Prints ms of CPU per request for each; with BENCH_PROFILE=1 also a cProfile of each path
(sorted by BENCH_SORT, default tottime; top BENCH_TOP rows). Figures only: the machine is
shared, read the load average printed with them.

BENCH_WSGI=1 calls `webapp.wsgi.application` with the environ gunicorn builds, instead of
`django.test.Client`: the lean accept dispatch (`ingest/accept_handler.py`) and the chunked
body wrapper as served, and none of the test client's own work (its request factory, the
response's copy of every template and signal it records), implies BENCH_COMMITTER=1.

BENCH_COMMITTER=1 writes through the group committer, as gunicorn workers do
(`webapp/gunicorn_conf.py`): the insert then runs on the process's committing connection,
not the request's (no per-request connection health check). Without it (the default, as
before) each request inserts on its own connection and pays Django's health check, a
round trip more than in production.
"""

from __future__ import annotations

import cProfile
import io
import os
import sys
import time
from collections.abc import Callable
from typing import Any

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
WSGI = os.environ.get("BENCH_WSGI", "0") == "1"
if WSGI:
    os.environ["BENCH_COMMITTER"] = "1"
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


class WsgiClient:
    """`client.get` / `client.post` as gunicorn calls the application: an environ, a body
    stream, the response iterated and closed. Only the status is kept."""

    def __init__(self) -> None:
        from webapp.wsgi import application

        self.app = application

    def _call(self, method: str, path: str, body: bytes, extra: dict[str, str]) -> Any:
        environ = {
            "REQUEST_METHOD": method,
            "SCRIPT_NAME": "",
            "PATH_INFO": path,
            "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "127.0.0.1:8000",
            "HTTP_USER_AGENT": "Python-urllib/3.11",
            "HTTP_ACCEPT_ENCODING": "identity",
            "wsgi.input": io.BytesIO(body),
            "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
            "wsgi.version": (1, 0),
            **extra,
        }
        if body:
            environ["CONTENT_LENGTH"] = str(len(body))
        status: list[str] = []
        result = self.app(environ, lambda s, h, e=None: status.append(s))
        try:
            for _ in result:
                pass
        finally:
            if hasattr(result, "close"):
                result.close()
        return _Status(int(status[0].split()[0]))

    def get(self, path: str) -> Any:
        return self._call("GET", path, b"", {})

    def post(self, path: str, body: bytes, content_type: str, **extra: str) -> Any:
        return self._call("POST", path, body, {"CONTENT_TYPE": content_type, **extra})


class _Status:
    def __init__(self, code: int) -> None:
        self.status_code = code


def main() -> None:
    project, _ = Project.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
    _, key = create_key(project, "request-cpu")
    client: Any = WsgiClient() if WSGI else Client()
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
    committer += " (webapp.wsgi.application)" if WSGI else ""
    print(f"load average{committer}:", os.getloadavg())


if __name__ == "__main__":
    main()
