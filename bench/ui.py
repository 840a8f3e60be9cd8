"""Server time of the timeline with 10,000 incidents in 500 issues (in-process Django client).

Creates the data in a project of its own (`bench-ui`, recreated each run), then times the
full page and the htmx fragment (filtered, page 2) and counts their queries. The time is
what the server spends (URL routing, views, queries, templates): no network, no browser.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from datetime import timedelta

import _env

ISSUES = int(os.environ.get("BENCH_ISSUES", "500"))
INCIDENTS = int(os.environ.get("BENCH_INCIDENTS", "10000"))
RUNS = int(os.environ.get("BENCH_RUNS", "30"))


def build():
    from django.contrib.auth.models import User
    from django.db.models import F
    from django.utils import timezone

    from ingest.models import Incident, Issue, Project
    from rca.models import Analysis, Suggestion
    from webapp.models import Membership

    Project.objects.filter(slug="bench-ui").delete()
    project = Project.objects.create(name="Bench UI", slug="bench-ui")
    user, _ = User.objects.get_or_create(username="bench-ui")
    Membership.objects.create(user=user, project=project, role="responder")
    rng = random.Random(7)
    now = timezone.now()
    issues = Issue.objects.bulk_create(
        Issue(
            project=project,
            fingerprint=f"bench-{i}",
            title=f"mat1 and mat2 shapes cannot be multiplied ({i}x256 and 512x10)",
            error_type=rng.choice(["RuntimeError", "torch.OutOfMemoryError", "ValueError"]),
            culprit=f"/srv/svc/model_{i % 13}.py in forward",
            service=f"svc-{i % 9}",
            model_id=f"model-{i % 6}",
            first_seen=now - timedelta(days=6),
            last_seen=now - timedelta(minutes=i * 3),
            occurrence_count=INCIDENTS // ISSUES,
        )
        for i in range(ISSUES)
    )
    incidents = Incident.objects.bulk_create(
        (
            Incident(
                project=project,
                issue=issue,
                event_id=f"bench-{issue.pk}-{n}",
                service=issue.service,
                environment="prod",
                occurred_at=now - timedelta(minutes=rng.randrange(0, 7 * 24 * 60)),
                error_type=issue.error_type,
                message=issue.title,
                fingerprint=issue.fingerprint,
                model_id=issue.model_id,
                analysis_status="done",
            )
            for issue in issues
            for n in range(INCIDENTS // ISSUES)
        ),
        batch_size=2000,
    )
    Incident.objects.filter(project=project).update(received_at=F("occurred_at"))
    latest = {incident.issue_id: incident for incident in incidents}
    analyses = Analysis.objects.bulk_create(
        Analysis(incident=incident, issue_id=issue_id, status="done", provider="offline")
        for issue_id, incident in latest.items()
    )
    Suggestion.objects.bulk_create(
        Suggestion(
            analysis=analysis,
            issue_id=analysis.issue_id,
            incident=analysis.incident,
            action=f"Set in_features of the head to 256 in model_{analysis.issue_id % 13}.py",
            reason="The input has 256 features; the weight expects 512.",
            provider="offline",
        )
        for analysis in analyses
    )
    return user


def timed(client, url: str, **headers) -> tuple[list[float], int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.get(url, **headers)  # warm up
    times = []
    for _ in range(RUNS):
        with CaptureQueriesContext(connection) as queries:
            start = time.perf_counter()
            response = client.get(url, **headers)
            times.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, response.status_code
    return times, len(queries)


def main() -> None:
    _env.setup_django()
    from django.test import Client

    started = time.perf_counter()
    user = build()
    print(f"data: {ISSUES} issues, {INCIDENTS} incidents ({time.perf_counter() - started:.1f} s)")
    client = Client()
    client.force_login(user)
    for label, url, headers in [
        ("timeline full page", "/", {}),
        ("timeline htmx fragment", "/?service=svc-3&page=2", {"HTTP_HX_REQUEST": "true"}),
        ("timeline 30d range", "/?range=30d", {"HTTP_HX_REQUEST": "true"}),
    ]:
        times, queries = timed(client, url, **headers)
        times.sort()
        p95 = times[int(len(times) * 0.95) - 1]
        print(
            f"{label:24s} median {statistics.median(times):6.1f} ms  p95 {p95:6.1f} ms  "
            f"queries {queries}  ({RUNS} runs)"
        )


if __name__ == "__main__":
    main()
