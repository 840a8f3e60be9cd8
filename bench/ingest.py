"""Accepted incidents/s over real HTTP (gunicorn 2 workers x 16 threads, concurrent client).

Issue 19: every way in is measured against a floor taken in the same run, so a busy
machine moves the figures but not much their ratios. Four paths, the same failures:

* `healthz`: `GET /healthz` (touches nothing) with the same server and client: what one
  request costs before any ingest work; the single and envelope paths' target is >= 0.5x.
  Each of those two is also timed in BENCH_ROUNDS rounds on its own server, each round
  right after as many `GET /healthz` (`*_vs_floor_here`: the median of the rounds' ratios,
  `*_round_ratios`: each): on a machine others load, the floor moves more in a minute than
  the ratio does, and rounds a second apart see the same load;
* `single`: one incident per `POST /api/v1/incidents` (our SDK, curl);
* `envelope`: one event per `POST /api/<project>/envelope/`, the body a Sentry SDK sends
  (bench/sentry_envelopes.py), authenticated by the DSN's public key;
* `paced`: the single path at a modest BENCH_PACED_RATE (50/s), one client: how soon the
  processor (at nice 5, `RCA_INBOX_NICE`) stores what arrives when nothing saturates;
* `batch`: BENCH_BATCH incidents per `POST /api/v1/incidents/batch` (a buffering client),
  against `raw`: the same payloads inserted with psycopg, one committed INSERT each, into a
  scratch table: the floor cost of durably storing one, with no validation, parsing,
  grouping or enqueueing (target >= 1.0x);
* `durable`: that INSERT from BENCH_CLIENTS connections at once, one committed row each:
  the most the single and envelope paths could reach if a request were only its durable
  write (PostgreSQL shares WAL flushes between concurrent commits). Far above them, the
  paths are bound by CPU; near them, by the disk's flushes.

The real accept-then-process path, as `make run` runs it: each server runs with one
`manage.py process_inbox` beside it, sharing the 2 cores, which stores what the requests
accepted (scrub, parse, group, store, queue the analysis). Per path: the accept rate, then
how long the processor took to drain the inbox after the last answer, and the accept ->
stored latency of every incident (its answer's time to its `received_at`; p50/p95). The
client is stdlib `http.client`, one kept-alive connection per thread (TOOLCHAIN.md:
`requests` cannot reach the floor on 2 cores). Then the storm of bench/storm.py
(bench/storm_analyses.py): analyses run for 20,000 incidents of 20 issues (target <= 40).
Ends with one JSON line; the embedded broker, as `make run`.
"""

from __future__ import annotations

import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import _env
import sentry_envelopes
from raw_insert import bench_raw
from rounds import interleaved, paired
from storm_analyses import storm_analyses
from table_scans import incident_rows_scanned

from webapp.supervisor import gunicorn_argv

# 6,000 in 10 rounds (600 a round) rather than 2,000 in 5: a round of 400 lasted ~0.2 s of
# /healthz, short enough that one stall moved its ratio 0.3-0.8; longer rounds steady a run's
# median (2026-12-06: single 0.52-0.53, envelope 0.43-0.48 in two such runs at load 4-6).
N = int(os.environ.get("BENCH_N", "6000"))
# A storm's senders are many replicas at once: 64 keep both the floor and the paths at the
# server's capacity (with 8, neither was: the single path waited on WAL flushes while the CPU
# idled, and /healthz rose ~20% from 8 to 64 clients too). BENCH_CLIENTS=8 for the old figure.
CLIENTS = int(os.environ.get("BENCH_CLIENTS", "64"))
BATCH = int(os.environ.get("BENCH_BATCH", "100"))
# Batches go fast: more incidents than the single path, so a run lasts seconds, not 0.7 s.
BATCH_N = int(os.environ.get("BENCH_BATCH_N", "10000"))
PACED_RATE = float(os.environ.get("BENCH_PACED_RATE", "50"))
PACED_N = int(os.environ.get("BENCH_PACED_N", "250"))
STORM = os.environ.get("BENCH_STORM", "1") != "0"  # 0: skip the storm (minutes) while iterating
# Extra gunicorn options after make run's, e.g. "--workers 3 --threads 2" (floor included).
GUNICORN = os.environ.get("BENCH_GUNICORN", "").split()
WARM = 50  # incidents sent before timing each path: connections, caches
# Single and envelope paths: rounds alternating GET /healthz and the path on one server.
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "10"))


def payloads(n: int) -> list[dict]:
    return [_env.bench_incident(i) for i in range(n)]


@dataclass
class Phase:
    """One path's run: its rate, and for ingest paths when each event id was answered."""

    rate: float
    accepted_at: dict[str, float] = field(default_factory=dict)  # event id -> time.time()
    last_answer: float = 0.0
    drain_s: float = 0.0  # from the last answer until the inbox was empty
    p50_ms: float = 0.0  # accept -> stored
    p95_ms: float = 0.0
    floor: float = 0.0  # GET /healthz per second on this server, rounds interleaved (interleaved)
    ratios: list[float] = field(default_factory=list)  # each round's rate over its floor's
    stored_ratios: list[float] = field(default_factory=list)  # the same, until stored


class Stack:
    """gunicorn (2 workers x 16 threads) plus one inbox processor, as `make run` runs them."""

    def __init__(self) -> None:
        self.port = _env.free_port()
        env = {**os.environ, "RCA_RATE_LIMIT_PER_MINUTE": "6000000"}
        env |= {"RCA_RATE_LIMIT_BURST": "100000", "RCA_INGEST_INLINE": "false"}
        web = [*gunicorn_argv(self.port), "--log-level", "warning", *GUNICORN]
        self.procs = [
            subprocess.Popen(web, cwd=_env.REPO, env=env),
            subprocess.Popen(
                [sys.executable, "manage.py", "process_inbox"],
                cwd=_env.REPO,
                env={**env, "LOG_LEVEL": "WARNING"},
            ),
        ]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                request(http.client.HTTPConnection("127.0.0.1", self.port), "GET", "/healthz")
                return
            except OSError:
                time.sleep(0.2)
        raise TimeoutError("the server did not answer /healthz")

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.wait(20)


def request(
    conn: http.client.HTTPConnection,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, bytes]:
    """One request on a kept-alive connection; once more on a new one if the server had
    closed it while idle (gunicorn's keep-alive timeout), as `requests` would."""
    for attempt in (1, 2):
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, resp.read()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            conn.close()
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def bench_http(work: list, project: Any, key: str, mode: str) -> Phase:
    """Requests/s for `mode`, each request carrying one item of `work` (counted per incident).

    `healthz`: `GET /healthz` once per item, the per-request floor of this server and client;
    `single`: one incident (JSON bytes) per `POST /api/v1/incidents`; `envelope`: one gzipped
    Sentry envelope per `POST /api/<project>/envelope/`, DSN key in `X-Sentry-Auth`;
    `batch`: JSON bytes of BENCH_BATCH incidents per `POST /api/v1/incidents/batch`.
    """
    stack = Stack()
    local = threading.local()
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
        "paced": ("POST", "/api/v1/incidents", bearer, 202),
        "envelope": ("POST", f"/api/{project.pk}/envelope/", sentry, 200),
        "batch": ("POST", "/api/v1/incidents/batch", bearer, 202),
    }
    method, path, headers, expected = routes[mode]
    accepted_at: dict[str, float] = {}

    def send(body: bytes | None) -> int:
        """1 if the request was accepted as the endpoint documents, else 0."""
        if not hasattr(local, "conn"):
            local.conn = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=60)
        status, answer = request(local.conn, method, path, body, headers)
        if status != expected:
            return 0
        if mode != "healthz":
            now, data = time.time(), json.loads(answer)
            if mode == "batch":
                ids = [r["event_id"] for r in data["results"] if r["status"] == 202]
            else:
                ids = [data["id"] if mode == "envelope" else data["event_id"]]
            accepted_at.update(dict.fromkeys(ids, now))  # one dict op: atomic under the GIL
        return 1

    def healthz(_: object) -> int:
        if not hasattr(local, "conn"):
            local.conn = http.client.HTTPConnection("127.0.0.1", stack.port, timeout=60)
        return int(request(local.conn, "GET", "/healthz")[0] == 200)

    try:
        with ThreadPoolExecutor(CLIENTS) as pool:  # warm-up: connections, caches
            warm = warm_requests(BATCH if mode == "batch" else 1)
            list(pool.map(send, work[:warm]))
            accepted_at.clear()
            timed = work[warm:]
            if mode in ("single", "envelope"):
                time.sleep(0.5)  # the processor has stored the warm-up
                rounds = interleaved(pool, send, healthz, timed, ROUNDS, settle)
                ok, elapsed, floor = rounds.ok, rounds.elapsed, rounds.floor
                ratios, stored_ratios = rounds.ratios, rounds.stored_ratios
            else:
                start = time.perf_counter()
                ok = sum(pool.map(send, timed)) if mode != "paced" else paced(send, timed)
                elapsed, floor, ratios = time.perf_counter() - start, 0.0, []
                stored_ratios = []
            last = time.time()
        if ok != len(timed):
            raise SystemExit(f"{mode}: {len(timed) - ok} of {len(timed)} requests not accepted")
        size = BATCH if mode == "batch" else 1
        phase = Phase(len(timed) * size / elapsed, dict(accepted_at), last, floor=floor)
        phase.ratios, phase.stored_ratios = ratios, stored_ratios
        if mode != "healthz":
            drain(phase)
        return phase
    finally:
        stack.stop()


def paced(send: Any, bodies: list) -> int:
    """`send` each body from one thread, PACED_RATE a second on a fixed schedule."""
    start, ok = time.perf_counter(), 0
    for i, body in enumerate(bodies):
        if (wait := start + i / PACED_RATE - time.perf_counter()) > 0:
            time.sleep(wait)
        ok += send(body)
    return ok


def settle() -> None:
    """Return once the processor has stored everything accepted (inbox and spool empty)."""
    from ingest import spool
    from ingest.models import InboxItem

    while InboxItem.objects.filter(failed_at__isnull=True).exists() or spool.count():
        time.sleep(0.02)


def drain(phase: Phase) -> None:
    """Wait for the processor to empty the inbox and the spool (Sentry events spooled first,
    RCA_SENTRY_SPOOL_FIRST); record how long that took after the last answer, and each
    incident's accept -> stored latency (a failure if any is missing)."""
    from ingest.models import Incident

    settle()
    phase.drain_s = max(0.0, time.time() - phase.last_answer)
    stored = dict(
        Incident.objects.filter(event_id__in=list(phase.accepted_at)).values_list(
            "event_id", "received_at"
        )
    )
    if len(stored) != len(phase.accepted_at):
        raise SystemExit(f"{len(phase.accepted_at) - len(stored)} accepted incidents not stored")
    latencies = sorted(stored[e].timestamp() - t for e, t in phase.accepted_at.items())
    phase.p50_ms = 1000 * statistics.median(latencies)
    phase.p95_ms = 1000 * latencies[int(0.95 * (len(latencies) - 1))]


def warm_requests(size: int) -> int:
    """Untimed requests first (connections, caches): WARM incidents, at least one per client."""
    return max(CLIENTS, WARM // size)


def main() -> None:
    _env.setup_django()
    from ingest.keys import create_key
    from ingest.models import InboxItem, Project

    project, _ = Project.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
    project.incidents.all().delete()
    project.issues.all().delete()
    InboxItem.objects.all().delete()  # what an earlier, interrupted run left waiting
    _, key = create_key(project, "bench")
    load_start = load()
    scanned = incident_rows_scanned()
    single = payloads(N + WARM)
    batched = payloads(BATCH_N + warm_requests(BATCH) * BATCH)
    print(
        f"{os.cpu_count()} cores, load average {load_start} at start;"
        f" gunicorn {' '.join(gunicorn_argv(0)[-6:] + GUNICORN)} and one inbox processor,"
        f" {CLIENTS} client threads (http.client), same machine, embedded broker (make run's);"
        f" {N} requests per path one incident each, {BATCH_N} incidents in batches of {BATCH}"
    )
    raw = bench_raw(batched)
    print(f"raw psycopg INSERT loop (1 connection, autocommit): {raw:8.1f} inserts/s")
    durable = bench_raw(single, CLIENTS)
    print(f"the same from {CLIENTS} connections at once: {durable:8.1f} inserts/s")
    bodies = [json.dumps(item).encode() for item in single]
    phases = {"healthz": bench_http([None] * len(bodies), project, key, "healthz")}
    phases["single"] = bench_http(bodies, project, key, "single")
    envelopes = [sentry_envelopes.envelope_body(item) for item in single]
    phases["envelope"] = bench_http(envelopes, project, key, "envelope")
    slow = [json.dumps(item).encode() for item in payloads(PACED_N + WARM)]
    phases["paced"] = bench_http(slow, project, key, "paced")
    chunks = [batched[i : i + BATCH] for i in range(0, len(batched), BATCH)]
    batch_bodies = [json.dumps({"incidents": chunk}).encode() for chunk in chunks]
    phases["batch"] = bench_http(batch_bodies, project, key, "batch")
    rates = {mode: phase.rate for mode, phase in phases.items()}
    for mode, label in (
        ("healthz", "GET /healthz (touches nothing): the per-request floor"),
        ("single", "POST /api/v1/incidents, one incident each"),
        ("envelope", "POST /api/<project>/envelope/, one Sentry SDK envelope each (gzip)"),
        ("paced", f"POST /api/v1/incidents at {PACED_RATE:g}/s, one client"),
        ("batch", f"POST /api/v1/incidents/batch, {BATCH} incidents each"),
    ):
        line = f"{label}: {rates[mode]:8.1f} incidents/s"
        if mode in ("single", "envelope"):
            line += (
                f" ({rates[mode] / phases['healthz'].rate:.2f}x the floor;"
                f" {paired(phases[mode].ratios):.2f}x the GET /healthz of the same server in"
                f" {len(phases[mode].ratios)} alternated rounds, median, and"
                f" {paired(phases[mode].stored_ratios):.2f}x counted until stored; its floor"
                f" {phases[mode].floor:.0f}/s)"
            )
        if mode != "healthz":
            p = phases[mode]
            line += (
                f"; accept -> stored p50 {p.p50_ms:.0f} ms, p95 {p.p95_ms:.0f} ms;"
                f" inbox drained {p.drain_s:.2f} s after the last answer"
            )
        print(line)
    scanned = incident_rows_scanned(settle=1.0) - scanned
    print(f"incident rows read by sequential scans during these paths: {scanned}")
    # The ingest runs queued analyses nobody consumed; the storm's workers must not inherit
    # them (the storm purges the broker; these rows would still be pending).
    project.incidents.all().delete()
    project.issues.all().delete()
    storm: dict[str, Any] = {"storm_analyses": None, "storm_incidents": 0, "storm_issues": 0}
    if STORM:
        import inspect

        import storm as storm_module

        if "process_inbox" not in inspect.getsource(storm_module.Stack):
            # A storm stack without an inbox processor: its server stores in the request.
            os.environ["RCA_INGEST_INLINE"] = "true"
        storm = storm_analyses()
        print(
            f"storm: {storm['storm_incidents']} incidents of {storm['storm_issues']} issues,"
            f" {storm['storm_analyses']} analyses run (target <= {2 * storm['storm_issues']})"
        )
    latency = {
        f"{mode}_{what}": round(getattr(phases[mode], what), 2 if what == "drain_s" else 1)
        for mode in ("single", "envelope", "paced", "batch")
        for what in ("p50_ms", "p95_ms", "drain_s")
    }
    print(
        json.dumps(
            {
                "healthz_per_s": round(rates["healthz"], 1),
                "single_per_s": round(rates["single"], 1),
                "envelope_per_s": round(rates["envelope"], 1),
                "batch_per_s": round(rates["batch"], 1),
                "raw_per_s": round(raw, 1),
                "durable_per_s": round(durable, 1),  # CLIENTS connections committing rows
                "single_vs_healthz": round(rates["single"] / rates["healthz"], 2),
                "envelope_vs_healthz": round(rates["envelope"] / rates["healthz"], 2),
                # against GET /healthz on the same server moments before (less load drift)
                "single_vs_floor_here": round(paired(phases["single"].ratios), 2),
                "envelope_vs_floor_here": round(paired(phases["envelope"].ratios), 2),
                "single_round_ratios": [round(r, 2) for r in phases["single"].ratios],
                "envelope_round_ratios": [round(r, 2) for r in phases["envelope"].ratios],
                # the same rounds counted until the processor had stored each round's incidents
                "single_stored_vs_floor_here": round(paired(phases["single"].stored_ratios), 2),
                "envelope_stored_vs_floor_here": round(paired(phases["envelope"].stored_ratios), 2),
                "batch_vs_raw": round(rates["batch"] / raw, 2),
                "incident_rows_seq_scanned": scanned,  # bench/table_scans.py
                "storm_analyses": storm["storm_analyses"],
                "storm_incidents": storm["storm_incidents"],
                "storm_issues": storm["storm_issues"],
                **latency,
                "gunicorn": " ".join(gunicorn_argv(0)[-6:] + GUNICORN),
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
