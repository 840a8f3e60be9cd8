"""Analyses run for a storm of known failures: `storm_analyses` of bench/storm.py, alone.

Starts the stack of `make run` (`storm.Stack`), warms both workers up as bench/storm.py
does, posts BENCH_STORM_N incidents of BENCH_STORM_ISSUES issues (`storm.incident`)
through the batch endpoint, waits until none is pending, and counts the analyses run for
them. No new-error probes and no Slack: bench/ingest.py wants this one figure in its run
without bench/storm.py's minutes of waiting for digests.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import _env
import storm


def storm_analyses(slug: str = "storm-count") -> dict[str, Any]:
    """Run the storm on a fresh project; `storm_analyses` (target <= 2 per issue) and its size."""
    from django.core.management import call_command

    from ingest.keys import create_key
    from ingest.models import InboxItem, Incident, Project
    from rca.models import Analysis
    from webapp.celery import app

    call_command("runbooks", "load", "--embed-now", verbosity=0)
    project, _ = Project.objects.get_or_create(slug=slug, defaults={"name": slug})
    InboxItem.objects.filter(project=project).delete()  # an interrupted run's, not stored
    project.incidents.all().delete()
    project.issues.all().delete()
    _, key = create_key(project, slug)
    app.control.purge()  # messages earlier benches left for incidents long gone

    port = _env.free_port()
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {key}"}
    stack = storm.Stack(port, Path(os.environ["RCA_DATA_DIR"]))
    try:
        storm.wait(lambda: all(" ready." in stack.log(w) for w in ("worker", "fresh")), 120)
        storm.wait(lambda: storm.healthy(base), 60)
        # Warm-up, not counted: each worker loads its embedding model on its first analysis.
        for k in range(storm.ISSUES, storm.ISSUES + 6):
            pk = storm.post_one(base, headers, storm.incident(k, service="warmup"))
            storm.wait(lambda pk=pk: storm.suggestion(base, headers, pk), 180)
            if all("succeeded" in stack.log(w) for w in ("worker", "fresh")):
                break
        warm_ids = set(Incident.objects.filter(project=project).values_list("pk", flat=True))

        items = [storm.incident(i % storm.ISSUES) for i in range(storm.N)]
        chunks = [items[i : i + storm.BATCH] for i in range(0, storm.N, storm.BATCH)]

        def send(chunk: list[dict[str, Any]]) -> int:
            return storm.post_batch(base, headers, chunk)

        with ThreadPoolExecutor(storm.CLIENTS) as pool:
            accepted = sum(pool.map(send, chunks))
        incidents = Incident.objects.filter(project=project).exclude(pk__in=warm_ids)
        storm.analysed(incidents, accepted)
        analyses = Analysis.objects.filter(incident__in=incidents).count()
    finally:
        stack.stop()
    return {
        "storm_analyses": analyses,
        "storm_incidents": accepted,
        "storm_issues": storm.ISSUES,
    }
