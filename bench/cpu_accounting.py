"""CPU per request of every process on the machine, by role (issue 19).

On 2 shared cores the single and envelope paths' ratio to `GET /healthz` is, once CPU
bound, the floor's total CPU per request over an ingest path's total CPU per accepted and
stored incident: the client, gunicorn, `process_inbox`, every PostgreSQL backend and
auxiliary process (walwriter, checkpointer, autovacuum), the kernel's threads. Wall rates
move 2x between hours on this machine (others' jobs); CPU time moves much less. So this
runs one server, as bench/ingest.py does (gunicorn 2x4 plus one `process_inbox`, both
with the bench's rate limit), and for BENCH_ROUNDS rounds times healthz, single and
envelope in turn (BENCH_N requests each, BENCH_CLIENTS client threads, an ingest phase
timed until the processor has emptied the inbox), snapshotting utime+stime of every
process in /proc before and after each phase, and the cluster's WAL flushes. It prints ms
of CPU per request per role, each phase's rate, the ratio the CPU predicts (healthz CPU
per request over the path's) and requests per WAL flush: on a quiet machine the accepts'
fsyncs (~5 ms each here), not CPU, bound the single and envelope paths, so how many
requests share one (the inbox's group commit; the processor's commits take some) matters.

Roles: `client` (this process: the client threads, also the drain's polling), `gunicorn`
(the master and its workers), `processor`, `pg:web` / `pg:processor` / `pg:bench`
(PostgreSQL backends by application_name, set per process with PGAPPNAME, which libpq and
so every connection of that process honours), `pg:aux:<kind>` (walwriter, checkpointer,
background writer, autovacuum, the postmaster with its exited children), `kernel`
(children of kthreadd: kworkers, the filesystem journal that fsyncs), `irq` (time the
kernel spent in (soft)interrupts, /proc/stat: loopback TCP is partly there) and `other`
(everything else: other engineers' jobs; left out of the ratio). A process that starts
and ends within a phase is counted only through its parent's cutime (the postmaster's).

    SECRET_KEY=x .venv/bin/python bench/cpu_accounting.py
    RCA_SENTRY_SPOOL_FIRST=1 ...  # Sentry events spooled first (ingest/inbox/spool_first.py)
    BENCH_GUNICORN="--workers 3 --threads 2" ...  # another shape of the web server
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import _env
import sentry_envelopes

from webapp.supervisor import gunicorn_argv

N = int(os.environ.get("BENCH_N", "2000"))
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "8"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
MODES = os.environ.get("BENCH_MODES", "healthz,single,envelope").split(",")
# Extra gunicorn options, after make run's (the last --workers/--threads given wins).
GUNICORN = os.environ.get("BENCH_GUNICORN", "").split()
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
_PROCESS_ROLES = {"client", "gunicorn", "processor", "pg"}
HEALTHZ = ("GET", "/healthz", None, {})
AUX = ("walwriter", "checkpointer", "background writer", "autovacuum", "logical", "archiver")


def _stat(pid: str) -> tuple[int, str, int, int] | None:
    """(ppid, command name, utime+stime, cutime+cstime) in ticks, or None if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    name = raw[raw.index("(") + 1 : raw.rindex(")")]
    fields = raw[raw.rindex(")") + 2 :].split()
    # fields[0] is the state (field 3 of proc(5)): ppid 4, utime 14, stime 15, cutime 16
    ppid, ticks, children = fields[1], fields[11:13], fields[13:15]
    return int(ppid), name, sum(map(int, ticks)), sum(map(int, children))


def _cmdline(pid: str) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace")


def _irq_ticks() -> int:
    cpu = Path("/proc/stat").read_text().splitlines()[0].split()
    return int(cpu[6]) + int(cpu[7])  # irq, softirq


class Roles:
    """Which role each pid plays, given the stack's processes and the cluster's postmaster."""

    def __init__(self, web: int, processor: int, postmaster: int) -> None:
        self.web, self.processor, self.postmaster = web, processor, postmaster
        self.app_names: dict[int, str] = {}

    def refresh_backends(self) -> None:
        """application_name of every backend now connected (web / processor / bench)."""
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SELECT pid, application_name FROM pg_stat_activity")
            self.app_names.update({pid: name for pid, name in cursor.fetchall()})

    def role(self, pid: int, ppid: int, name: str, parents: dict[int, int]) -> str:
        if pid == os.getpid():
            return "client"
        if pid == self.processor:
            return "processor"
        if pid == self.web or ppid == self.web:
            return "gunicorn"
        if pid == self.postmaster:
            return "pg:aux:postmaster"
        if ppid == self.postmaster:
            cmd = _cmdline(str(pid))
            for aux in AUX:
                if aux in cmd:
                    return f"pg:aux:{aux}"
            app = self.app_names.get(pid, "")
            if app == "rootcause process_inbox":  # the runner's own connection names itself
                return "pg:processor"
            if app == "rca-processor":  # its other connections (the broker's publishes)
                return "pg:processor-other"
            return "pg:" + (app.removeprefix("rca-") if app.startswith("rca-") else "unknown")
        if ppid == 2 or pid == 2:  # by name without its cpu number: ksoftirqd, kworker, jbd2
            return "kernel:" + name.split("/")[0].split(":")[0]
        return "other"


def wal_flushes() -> int:
    """WAL flushes (fsyncs) so far on the cluster, by every process (pg_stat_wal.wal_sync).
    Backends publish their counts within a second of going idle: read after STATS_LAG."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT wal_sync FROM pg_stat_wal")
        return int(cursor.fetchone()[0])


STATS_LAG = 1.2


def snapshot() -> dict[int, tuple[int, str, int, int]]:
    procs = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit() and (st := _stat(pid)) is not None:
            procs[int(pid)] = st
    return procs


def account(roles: Roles, before: dict, after: dict) -> dict[str, float]:
    """CPU ms per role between two snapshots (new processes count from zero)."""
    parents = {pid: st[0] for pid, st in after.items()}
    out: dict[str, float] = defaultdict(float)
    for pid, (ppid, name, ticks, children) in after.items():
        prev = before.get(pid)
        used = ticks - (prev[2] if prev and prev[1] == name else 0)
        if pid == roles.postmaster:  # exited backends, autovacuum workers
            used += children - (prev[3] if prev else 0)
        if used:
            out[roles.role(pid, ppid, name, parents)] += used * TICK_MS
    return out


def request(conn: http.client.HTTPConnection, method: str, path: str, body, headers) -> int:
    for attempt in (1, 2):
        try:
            conn.request(method, path, body=body, headers=headers)
            resp = conn.getresponse()
            resp.read()
            return resp.status
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            conn.close()
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def main() -> None:
    os.environ["PGAPPNAME"] = "rca-bench"
    _env.setup_django()
    from ingest.keys import create_key
    from ingest.models import InboxItem, Project
    from webapp.embedded import postmaster_pid

    project, _ = Project.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
    project.incidents.all().delete()
    project.issues.all().delete()
    InboxItem.objects.all().delete()
    _, key = create_key(project, "bench")
    port = _env.free_port()
    env = {**os.environ, "RCA_RATE_LIMIT_PER_MINUTE": "6000000"}
    env |= {"RCA_RATE_LIMIT_BURST": "100000", "RCA_INGEST_INLINE": "false"}
    web = subprocess.Popen(
        [*gunicorn_argv(port), "--log-level", "warning", *GUNICORN],
        cwd=_env.REPO,
        env={**env, "PGAPPNAME": "rca-web"},
    )
    processor = subprocess.Popen(
        [sys.executable, "manage.py", "process_inbox"],
        cwd=_env.REPO,
        env={**env, "LOG_LEVEL": "WARNING", "PGAPPNAME": "rca-processor"},
    )
    pm = postmaster_pid()
    assert pm is not None
    roles = Roles(web.pid, processor.pid, pm)
    bearer = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    sentry = {
        "Content-Type": "application/x-sentry-envelope",
        "Content-Encoding": "gzip",
        "User-Agent": f"sentry.python/{sentry_envelopes.SDK['version']}",
        "X-Sentry-Auth": sentry_envelopes.auth_header(project.sentry_key),
    }
    routes = {
        "healthz": ("GET", "/healthz", {}, 200),
        "single": ("POST", "/api/v1/incidents", bearer, 202),
        "envelope": ("POST", f"/api/{project.pk}/envelope/", sentry, 200),
    }
    local = threading.local()

    def send(mode: str, body: bytes | None) -> int:
        if not hasattr(local, "conn"):
            local.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        method, path, headers, expected = routes[mode]
        return int(request(local.conn, method, path, body, headers) == expected)

    def bodies(mode: str, n: int) -> list[bytes | None]:
        items = [_env.bench_incident(i) for i in range(n)]
        if mode == "single":
            return [json.dumps(item).encode() for item in items]
        if mode == "envelope":
            return [sentry_envelopes.envelope_body(item) for item in items]
        return [None] * n

    def drained() -> None:
        """Until the processor has stored everything: the inbox and the spool are empty."""
        from ingest import spool

        while InboxItem.objects.filter(failed_at__isnull=True).exists() or spool.count():
            time.sleep(0.02)

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if request(http.client.HTTPConnection("127.0.0.1", port), *HEALTHZ) == 200:
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        load = os.getloadavg()[0]
        print(f"{os.cpu_count()} cores, load {load:.2f}; {N} requests a phase, {CLIENTS} clients")
        results: dict[str, list[tuple[float, dict[str, float]]]] = defaultdict(list)
        per_flush: dict[str, list[float]] = defaultdict(list)
        with ThreadPoolExecutor(CLIENTS) as pool:
            for mode in MODES:  # warm-up: connections, caches, the key
                list(pool.map(lambda b, m=mode: send(m, b), bodies(mode, 50)))
            drained()
            for r in range(ROUNDS):
                for mode in MODES:
                    work = bodies(mode, N)
                    time.sleep(STATS_LAG)
                    flushes = wal_flushes()
                    roles.refresh_backends()
                    before, irq0, start = snapshot(), _irq_ticks(), time.perf_counter()
                    ok = sum(pool.map(lambda b, m=mode: send(m, b), work))
                    rate = N / (time.perf_counter() - start)
                    if mode != "healthz":
                        drained()
                    after, irq1 = snapshot(), _irq_ticks()
                    roles.refresh_backends()
                    assert ok == N, f"{mode}: {N - ok} failed"
                    cpu = account(roles, before, after)
                    cpu["irq"] = (irq1 - irq0) * TICK_MS
                    time.sleep(STATS_LAG)
                    flushed = wal_flushes() - flushes
                    results[mode].append((rate, cpu))
                    per_flush[mode].append(N / max(flushed, 1))
                    ours = sum(v for k, v in cpu.items() if k != "other")
                    print(
                        f"round {r} {mode:8s} {rate:7.0f}/s  ours {ours / N:.3f} ms/req"
                        f"  {N / max(flushed, 1):.1f} req/WAL flush"
                        f"  load {os.getloadavg()[0]:.1f}",
                        flush=True,
                    )
    finally:
        web.terminate()
        processor.terminate()
        web.wait(20)
        processor.wait(20)
    report(results, per_flush)


def report(
    results: dict[str, list[tuple[float, dict[str, float]]]], per_flush: dict[str, list[float]]
) -> None:
    """Median over rounds of ms per request per role, for each phase side by side."""
    import statistics

    modes = list(results)
    names = sorted({k for runs in results.values() for _, cpu in runs for k in cpu})
    med = {
        m: {k: statistics.median(cpu.get(k, 0.0) / N for _, cpu in results[m]) for k in names}
        for m in modes
    }
    print(f"\nms of CPU per request, median of {ROUNDS} rounds")
    print(f"{'role':24s}" + "".join(f"{m:>10s}" for m in modes))
    for k in names:
        print(f"{k:24s}" + "".join(f"{med[m][k]:10.3f}" for m in modes))
    totals = {
        m: statistics.median(
            sum(v for k, v in cpu.items() if k != "other") / N for _, cpu in results[m]
        )
        for m in modes
    }
    print(f"{'ours (all but other)':24s}" + "".join(f"{totals[m]:10.3f}" for m in modes))
    # Without the kernel's threads and interrupts: kdamond and most kworkers run for the
    # whole machine, so their share grows with a phase's length, not with its requests.
    procs = {m: sum(med[m][k] for k in names if k.split(":")[0] in _PROCESS_ROLES) for m in modes}
    print(f"{'our processes':24s}" + "".join(f"{procs[m]:10.3f}" for m in modes))
    rates = {m: statistics.median(r for r, _ in results[m]) for m in modes}
    print(f"{'rate /s (median)':24s}" + "".join(f"{rates[m]:10.0f}" for m in modes))
    summary = {"load_end": os.getloadavg()[0]}
    if "healthz" in totals:
        for m in modes:
            if m != "healthz":
                summary[f"{m}_cpu_ratio"] = round(totals["healthz"] / totals[m], 3)
                summary[f"{m}_wall_ratio"] = round(rates[m] / rates["healthz"], 3)
                summary[f"{m}_process_cpu_ratio"] = round(procs["healthz"] / procs[m], 3)
    summary |= {f"{m}_ms": round(totals[m], 3) for m in modes}
    summary |= {
        f"{m}_per_wal_flush": round(statistics.median(per_flush[m]), 1)
        for m in modes
        if m != "healthz"
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
