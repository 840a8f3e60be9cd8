"""The one place Rootcause's Prometheus metrics are declared, and how `/metrics` renders them.

Here in ingest, the lowest layer, so that ingest, rca and webapp can all import it
without importing upward. Adding a metric is one line below (a counter or histogram under
"Counted where it happens", or a `Scraped` entry for a gauge read from the database when
`/metrics` is asked for), plus the line that counts it where the thing happens.

Every gunicorn worker and Celery pool process counts: with `PROMETHEUS_MULTIPROC_DIR` set
before prometheus_client is first imported (`make run` sets it under the data dir and
empties it at start, docker-compose gives each container a directory on a shared
volume), every process writes its values to files there and `render()` sums them. Unset
(tests, `manage.py shell`), the metrics live in the process that counts them.

Label values are bounded: code constants or admin-created slugs, never request text, so
that a client cannot create a new time series per request.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from django.db import DatabaseError
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

from ingest import broker_depth
from ingest.inbox import depth as inbox_depth

log = logging.getLogger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
# Containers share no PID namespace, so each writes to its own subdirectory of one shared
# volume (docker-compose.yml); set to that volume, `render()` sums every subdirectory.
SHARED_ENV = "RCA_METRICS_SHARED_DIR"

# --- Counted where it happens (one line each) ---------------------------------------------

INCIDENTS_RECEIVED = Counter(
    "rootcause_incidents_received_total",
    "Incidents stored (retries of one already stored not counted), by project slug and source.",
    ["project", "source"],
)
INGEST_REJECTED = Counter(
    "rootcause_ingest_rejected_total",
    "Ingest requests refused, by reason (REFUSAL_REASONS); invalid_item: items refused in a"
    " batch that was accepted.",
    ["reason"],
)
ANALYSIS_SECONDS = Histogram(
    "rootcause_analysis_seconds",
    "Time to analyse one incident (retrieval, LLM, validation), by outcome (done | failed).",
    ["outcome"],
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300),
)
SUGGESTIONS = Counter(
    "rootcause_suggestions_total",
    "Suggestions proposed by analyses and verdicts on them (proposed | accepted | rejected).",
    ["verdict"],
)
LLM_TOKENS = Counter(
    "rootcause_llm_tokens_total",
    "Tokens the LLM provider reported using, by kind (prompt | completion).",
    ["kind"],
)
NOTIFICATIONS = Counter(
    "rootcause_notifications_total",
    "Slack notifications by outcome (sent | failed | suppressed | retry).",
    ["outcome"],
)
SPOOLED = Counter(
    "rootcause_spooled_incidents_total",
    "Incidents accepted into the on-disk spool while the database was away (ingest/spool/).",
)
REPLAYED = Counter(
    "rootcause_replayed_incidents_total",
    "Spooled incidents handed back to the database once it answered (replays after a crash"
    " count again).",
)

# --- Restarts, recorded by `make run`'s supervisor in a file the scrape reads ---------------

# Not a prometheus_client Counter: the supervisor imports prometheus_client (via this module)
# before it creates and empties the multiprocess directory, so a Counter there would count in
# its own memory, which no scrape sees. A JSON file that only the supervisor writes
# (atomically, by rename) and every scrape reads works whatever the import order, and needs
# no database, which is itself one of the processes that restart.
RESTARTS_FILE = "process-restarts.json"
# webapp/supervisor.py's units
PROCESSES = ("postgres", "worker", "fresh", "notify", "inbox", "web")


def count_restart(directory: Path, process: str) -> None:
    """One more restart of `process` in `directory`'s file (the supervisor's own thread only)."""
    counts = _restarts(directory)
    key = bounded(process, PROCESSES)
    counts[key] = counts.get(key, 0) + 1
    part = directory / f".{RESTARTS_FILE}.tmp"
    part.write_text(json.dumps(counts))
    part.replace(directory / RESTARTS_FILE)


def _restarts(directory: Path) -> dict[str, int]:
    try:
        counts = json.loads((directory / RESTARTS_FILE).read_text())
    except (OSError, ValueError):  # none yet (no restart this run), or not ours to read
        return {}
    return {str(k): int(v) for k, v in counts.items()} if isinstance(counts, dict) else {}


class _Restarts:
    """`rootcause_process_restarts_total{process}` from the files under `directories`."""

    def __init__(self, directories: Iterable[Path]) -> None:
        self.directories = list(directories)

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(
            "rootcause_process_restarts",
            "Restarts of each process by `make run`'s supervisor since it started"
            " (postgres | worker | fresh | inbox | web).",
            labels=["process"],
        )
        totals = dict.fromkeys(PROCESSES, 0)
        for directory in self.directories:
            for process, n in _restarts(directory).items():
                totals[process] = totals.get(process, 0) + n
        for process, n in totals.items():
            family.add_metric([process], n)
        yield family


# --- Bounded label values -------------------------------------------------------------------

SOURCES = frozenset({"api", "sentry", "alertmgr"})  # alertmgr: ingest/alertmanager/
NOTIFICATION_OUTCOMES = frozenset({"sent", "failed", "suppressed", "retry"})
INVALID_ITEM = "invalid_item"
REFUSAL_REASONS = {
    400: "invalid",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


VERDICTS = ("proposed", "accepted", "rejected")
# Known label values start at 0, so a dashboard shows 0 rather than "no data".
for _metric, _values in (
    (INGEST_REJECTED, [*REFUSAL_REASONS.values(), INVALID_ITEM]),
    (ANALYSIS_SECONDS, ["done", "failed"]),
    (SUGGESTIONS, VERDICTS),
    (LLM_TOKENS, ["prompt", "completion"]),
    (NOTIFICATIONS, NOTIFICATION_OUTCOMES),
):
    for _value in _values:
        _metric.labels(_value)


def bounded(value: str, allowed: Iterable[str]) -> str:
    """`value` if it is one of `allowed`, else "other": a label never takes a new value."""
    return value if value in allowed else "other"


def count_refusal(status: int) -> None:
    """One refused ingest request, its reason named from the status it was answered with."""
    INGEST_REJECTED.labels(REFUSAL_REASONS.get(status, "other")).inc()


def count_notification(outcome: str) -> None:
    NOTIFICATIONS.labels(bounded(outcome, NOTIFICATION_OUTCOMES)).inc()


# --- Read from the database and the broker at scrape time --------------------------------------


class Scrape:
    """What one scrape reads once and several gauges share (the broker's answer)."""

    @cached_property
    def broker(self) -> dict[str, float] | None:
        """Messages waiting per configured queue, or None when the broker did not answer."""
        return broker_depth.read()


def _queue_depth(_: Scrape) -> dict[tuple[str, ...], float]:
    """Incidents waiting for analysis or being analysed (served by a partial index)."""
    from django.db.models import Count

    from ingest.models import Incident

    waiting = (Incident.Analysis.PENDING, Incident.Analysis.ANALYZING)
    depth: dict[tuple[str, ...], float] = {(str(state),): 0.0 for state in waiting}
    rows = (
        Incident.objects.filter(analysis_status__in=waiting)
        .values_list("analysis_status")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for state, n in rows:
        depth[(state,)] = float(n)
    return depth


def _oldest_waiting(_: Scrape) -> dict[tuple[str, ...], float]:
    """Seconds since the longest-waiting pending incident became pending; 0 with none.
    `analysis_updated_at` is when it was queued (or re-queued), and the partial index on
    pending/analyzing incidents answers the MIN without reading the table."""
    from django.db.models import Min
    from django.utils import timezone

    from ingest.models import Incident

    pending = Incident.objects.filter(analysis_status=Incident.Analysis.PENDING)
    oldest = pending.aggregate(oldest=Min("analysis_updated_at"))["oldest"]
    age = (timezone.now() - oldest).total_seconds() if oldest else 0.0
    return {(): max(0.0, age)}


def _broker_queue_depth(scrape: Scrape) -> dict[tuple[str, ...], float]:
    depths = scrape.broker
    return {} if depths is None else {(name,): n for name, n in depths.items()}


def _broker_up(scrape: Scrape) -> dict[tuple[str, ...], float]:
    return {(): 0.0 if scrape.broker is None else 1.0}


def _spool_bytes(_: Scrape) -> dict[tuple[str, ...], float]:
    from ingest.spool.directory import default

    return {(): float(default().size_bytes())}


def _spool_records(_: Scrape) -> dict[tuple[str, ...], float]:
    from ingest.spool.directory import default

    return {(): float(default().count())}


@dataclass(frozen=True)
class Scraped:
    """A gauge computed when `/metrics` is scraped: right across processes by construction,
    since the database (or the broker) is the source of truth. `query` maps label values to
    the value; it gets the scrape's shared reads."""

    name: str
    help: str
    labels: tuple[str, ...]
    query: Callable[[Scrape], dict[tuple[str, ...], float]]


SCRAPED = [
    Scraped(
        "rootcause_analysis_queue_depth",
        "Incidents waiting for analysis, by state (pending | analyzing).",
        ("state",),
        _queue_depth,
    ),
    Scraped(
        "rootcause_oldest_waiting_seconds",
        "Age of the oldest incident still pending analysis (since it was queued); 0 when none.",
        (),
        _oldest_waiting,
    ),
    Scraped(
        "rootcause_inbox_depth",
        "Incidents accepted, not yet processed, by state: waiting (for manage.py"
        " process_inbox) | failed (could not be stored; kept, see the processor's log).",
        ("state",),
        inbox_depth.by_state,
    ),
    Scraped(
        "rootcause_inbox_oldest_seconds",
        "Age of the oldest incident waiting in the inbox; 0 when none.",
        (),
        inbox_depth.oldest,
    ),
    Scraped(
        "rootcause_queue_depth",
        "Messages waiting in each configured Celery queue, read from the broker (absent when"
        " the broker does not answer). Repeats joining a queued analysis have no message.",
        ("queue",),
        _broker_queue_depth,
    ),
    Scraped(
        "rootcause_broker_up",
        "1 if the broker answered the queue-depth read within its timeout, else 0.",
        (),
        _broker_up,
    ),
    Scraped(
        "rootcause_spool_bytes",
        "Bytes in this host's ingest spool (RCA_SPOOL_DIR) waiting for the database; 0 normally.",
        (),
        _spool_bytes,
    ),
    Scraped(
        "rootcause_spool_records",
        "Incidents in this host's ingest spool waiting for the database; 0 normally.",
        (),
        _spool_records,
    ),
]


class _ScrapedCollector:
    def collect(self) -> Iterator[Metric]:
        scrape = Scrape()
        for gauge in SCRAPED:
            try:  # with the database away its gauges are absent; the spool's still answer
                measured = gauge.query(scrape)
            except DatabaseError:
                continue
            family = GaugeMetricFamily(gauge.name, gauge.help, labels=list(gauge.labels))
            for values, value in measured.items():
                family.add_metric(list(values), value)
            yield family


class _SharedVolume:
    """Every container's files under one parent directory, summed as one multiprocess dir."""

    def __init__(self, parent: str) -> None:
        self.parent = Path(parent)

    def collect(self) -> Iterable[Metric]:
        files = [str(f) for f in sorted(self.parent.glob("*/*.db"))]
        merge = MultiProcessCollector.merge
        merged: Iterable[Metric] = merge(files, accumulate=True)  # type: ignore[no-untyped-call]
        return merged


class _ThisProcess:
    """The default registry's metrics (single-process mode) inside a registry of our own."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


# --- Exposition -------------------------------------------------------------------------------


def render(multiproc_dir: str | None = None) -> tuple[bytes, str]:
    """The exposition text and its content type: every process's counts summed from
    `multiproc_dir` (default: the environment's) or, without one, this process's."""
    path = multiproc_dir or os.environ.get(MULTIPROC_ENV)
    registry = CollectorRegistry()
    if not multiproc_dir and (shared := os.environ.get(SHARED_ENV)):
        registry.register(_SharedVolume(shared))
        registry.register(_Restarts(p for p in Path(shared).glob("*") if p.is_dir()))
    elif path:
        MultiProcessCollector(registry, path)  # type: ignore[no-untyped-call]  # unannotated
        registry.register(_Restarts([Path(path)]))
    else:
        registry.register(_ThisProcess())
        registry.register(_Restarts([]))
    registry.register(_ScrapedCollector())
    return generate_latest(registry), CONTENT_TYPE_LATEST


def reset_dir(path: Path) -> Path:
    """An empty multiprocess directory, as prometheus_client asks at start: files left by a
    previous run's processes would be summed into this run's counts."""
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def mark_process_dead(pid: int) -> None:
    """A worker process ended: drop its live gauges (gunicorn's child_exit, Celery's
    worker_process_shutdown). Counters and histograms stay summed in."""
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)  # type: ignore[no-untyped-call]  # unannotated
