"""CPU per incident of the inbox processor in-process (issue 19): where storing one goes.

`bench/ingest.py` runs `manage.py process_inbox` beside the gunicorn workers on the same 2
cores, so every ms the processor spends per incident is taken from the requests that
accept. Here the inbox is filled through Django's full handler (`django.test.Client`,
RCA_INGEST_INLINE=0: the requests only accept) with BENCH_N incidents per kind: one JSON
incident per `POST /api/v1/incidents` and one-event Sentry envelopes, the payloads
bench/ingest.py sends; then `process_pending` (what the runner calls) drains it in
batches of each size of BENCH_BATCHES (the runner takes what arrived since its last turn:
a few rows while requests keep coming, up to RCA_INBOX_BATCH in a backlog).

Prints, per kind and batch size, ms of CPU per incident in this process and in the
database server's backend (read from /proc: the embedded cluster runs on this machine and
shares its cores); with BENCH_PROFILE=1 also a cProfile of the processing (sorted by
BENCH_SORT, default tottime; top BENCH_TOP rows); with BENCH_STATEMENTS=1 the
database's CPU by statement (`log_statement_stats`, sent back as notices: parse, plan and execute of
each statement Django's cursors run, a COMMIT counted with the statement before it; the
kernel charges CPU by ticks, so only sums over hundreds of statements mean anything; needs a
superuser, as the embedded cluster's is; it adds CPU of its own to both figures). Filling
is not timed. Figures only: the machine is shared, read the load average printed with them.
"""

from __future__ import annotations

import contextlib
import cProfile
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("RCA_INGEST_INLINE", "0")
os.environ.setdefault("RCA_RATE_LIMIT_PER_MINUTE", "6000000")
os.environ.setdefault("RCA_RATE_LIMIT_BURST", "100000")

import _env  # noqa: E402

_env.setup_django()

import json  # noqa: E402

import sentry_envelopes  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from ingest.inbox.process import process_pending  # noqa: E402
from ingest.keys import create_key  # noqa: E402
from ingest.models import InboxItem, Project  # noqa: E402

N = int(os.environ.get("BENCH_N", "1000"))
BATCHES = [int(b) for b in os.environ.get("BENCH_BATCHES", "10,500").split(",")]
PROFILE = os.environ.get("BENCH_PROFILE", "0") == "1"
STATEMENTS = os.environ.get("BENCH_STATEMENTS", "0") == "1"
_TICK = os.sysconf("SC_CLK_TCK")


def backend_cpu_s() -> float:
    """CPU seconds the database backend serving this connection has used (0: not local)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime


class StatementCpu:
    """The backend's CPU per statement text while active (BENCH_STATEMENTS=1)."""

    _USAGE = re.compile(r"([\d.]+) s user, ([\d.]+) s system")

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.count: dict[str, int] = {}
        self._current = "(before the first statement)"

    def _wrap(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self._current = re.sub(r'"s\d+_x\d+"', "<name>", sql.strip().splitlines()[0])[:72]
        self.count[self._current] = self.count.get(self._current, 0) + 1
        return execute(sql, params, many, context)

    def _notice(self, diag: Any) -> None:
        if found := self._USAGE.search(f"{diag.message_primary} {diag.message_detail or ''}"):
            cpu = float(found.group(1)) + float(found.group(2))
            self.seconds[self._current] = self.seconds.get(self._current, 0.0) + cpu

    @contextlib.contextmanager
    def measuring(self) -> Iterator[None]:
        with connection.cursor() as cursor:
            cursor.execute("SET client_min_messages = log")
            cursor.execute("SET log_statement_stats = on")
        connection.connection.add_notice_handler(self._notice)
        try:
            with connection.execute_wrapper(self._wrap):
                yield
        finally:
            connection.connection.remove_notice_handler(self._notice)
            with connection.cursor() as cursor:
                cursor.execute("RESET log_statement_stats")
                cursor.execute("RESET client_min_messages")

    def print(self, done: int) -> None:
        for text, seconds in sorted(self.seconds.items(), key=lambda kv: -kv[1]):
            runs = self.count.get(text, 0)
            print(f"  {seconds * 1e6 / done:7.1f} us/incident {runs:6d}x  {text}")


def drain(batch: int) -> int:
    done = 0
    while n := process_pending(batch):
        done += n
    return done


def run(name: str, fill: Callable[[int], None], batch: int) -> None:
    fill(N)
    waiting = InboxItem.objects.filter(failed_at__isnull=True).count()
    prof = cProfile.Profile(time.process_time) if PROFILE else None  # CPU, not waits
    stats = StatementCpu() if STATEMENTS else None
    db_start = backend_cpu_s()
    start = time.process_time()
    if prof:
        prof.enable()
    with stats.measuring() if stats else contextlib.nullcontext():
        done = drain(batch)
    if prof:
        prof.disable()
    cpu = time.process_time() - start
    db = backend_cpu_s() - db_start
    assert done == waiting, (done, waiting)
    print(
        f"{name:9s} batch {batch:4d}: {cpu * 1000 / done:.3f} ms CPU per incident here, "
        f"{db * 1000 / done:.3f} ms in the database ({done} incidents)"
        f"{' (profiled)' if prof else ''}",
        flush=True,
    )
    if stats:
        stats.print(done)
    if prof:
        _env.print_profile(prof)


def main() -> None:
    project, _ = Project.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
    _, key = create_key(project, "process-cpu")
    client = Client()
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    sentry = {
        "HTTP_CONTENT_ENCODING": "gzip",
        "HTTP_USER_AGENT": f"sentry.python/{sentry_envelopes.SDK['version']}",
        "HTTP_X_SENTRY_AUTH": sentry_envelopes.auth_header(project.sentry_key),
    }

    def single(n: int) -> None:
        for i in range(n):
            body = json.dumps(_env.bench_incident(i)).encode()
            response = client.post(
                "/api/v1/incidents", body, content_type="application/json", **bearer
            )
            assert response.status_code == 202, response.status_code

    def envelope(n: int) -> None:
        for i in range(n):
            response = client.post(
                f"/api/{project.pk}/envelope/",
                sentry_envelopes.envelope_body(_env.bench_incident(i)),
                content_type="application/x-sentry-envelope",
                **sentry,
            )
            assert response.status_code == 200, response.status_code

    drain(500)  # whatever an earlier, interrupted run left
    single(20)  # warm: connections, caches, the issues of these failures
    envelope(20)
    drain(500)
    for batch in BATCHES:
        run("single", single, batch)
        run("envelope", envelope, batch)
    print("load average:", os.getloadavg())


if __name__ == "__main__":
    main()
