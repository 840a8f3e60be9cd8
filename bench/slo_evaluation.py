"""SLO evaluation cost: what a stored batch pays on ingest, and what the periodic pass pays,
as a project's window fills with incidents (half out-of-memory, half other errors, ~1 KB
messages). On ingest: the batch that opens a breach (a full count for the message), one
while the rule is breached (no count), and one under a threshold the window never
reaches (the worst case: every matching row counted). Prints one JSON line per size.

    RCA_DATA_DIR=.data/bench-slo .venv/bin/python bench/slo_evaluation.py
    (BENCH_SLO_SIZES=1000,10000,50000 by default)
"""

from __future__ import annotations

import json
import os
import statistics
import time
import uuid

from _env import setup_django

SIZES = [int(n) for n in os.environ.get("BENCH_SLO_SIZES", "1000,10000,50000").split(",")]
REPEAT = 20


def _fill(project, issue, n: int) -> None:
    from ingest.models import Incident

    now = __import__("django.utils.timezone", fromlist=["now"]).now()
    rows = [
        Incident(
            project=project,
            issue=issue,
            event_id=uuid.uuid4().hex,
            service="chat",
            occurred_at=now,
            error_type="torch.OutOfMemoryError" if i % 2 else "ValueError",
            message=("CUDA out of memory. " if i % 2 else "bad value ") + "x" * 1000,
            fingerprint=issue.fingerprint,
        )
        for i in range(n)
    ]
    Incident.objects.bulk_create(rows, batch_size=5000)


def _ms(fn) -> float:
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(n: int) -> dict[str, float]:
    """Median milliseconds of each path with `n` incidents in the window."""
    from django.db import connection, transaction
    from django.utils import timezone

    from ingest.models import Incident, Issue, Project
    from rca.slo.defaults import rules_of
    from rca.slo.evaluate import evaluate, evaluate_stored
    from rca.slo.models import SloBreach, SloRule

    project = Project.objects.create(name="bench slo", slug=f"bench-slo-{uuid.uuid4().hex[:8]}")
    now = timezone.now()
    issue = Issue.objects.create(
        project=project, fingerprint="fp", title="t", first_seen=now, last_seen=now
    )
    rules_of(project)
    _fill(project, issue, n)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE ingest_incident")
    batch = list(Incident.objects.filter(project=project)[:100])

    def stored_opening() -> None:
        with transaction.atomic():
            evaluate_stored(project, batch)
            transaction.set_rollback(True)  # the breach opens every time (full count)

    opening = _ms(stored_opening)
    oom = SloRule.objects.get(project=project, name="OOM frequency")
    SloRule.objects.filter(pk=oom.pk).update(threshold=n)  # out of reach: counts all
    below = _ms(lambda: evaluate_stored(project, batch))
    SloRule.objects.filter(pk=oom.pk).update(threshold=3)
    evaluate(project)  # opens the OOM breach
    breached = _ms(lambda: evaluate_stored(project, batch))
    periodic = _ms(lambda: evaluate(project))
    assert SloBreach.objects.filter(project=project, ended_at__isnull=True).count() == 1
    result = {
        "incidents_in_window": n,
        "ingest_batch_of_100_ms_opening_breach": round(opening, 2),
        "ingest_batch_of_100_ms_below_high_threshold": round(below, 2),
        "ingest_batch_of_100_ms_rule_breached": round(breached, 2),
        "periodic_pass_3_rules_ms": round(periodic, 2),
    }
    project.delete()
    return result


def main() -> None:
    setup_django()
    for n in SIZES:
        print(json.dumps(measure(n)), flush=True)


if __name__ == "__main__":
    main()
