"""1,000,000 incidents: generation speed, then p50/p95 of the queries the UI and API run.

A cluster of its own (`.data/million`, never the dev or test clusters). Generates
BENCH_INCIDENTS incidents (default 1,000,000) over BENCH_ISSUES issues (2,000) in 5
projects, Zipf-skewed (a few hot issues hold most occurrences), received over 30 days,
with COPY (text format, rows made in Python). An existing data set of the right size is
reused; BENCH_REBUILD=1 makes a new one. Then times, BENCH_RUNS times each (50), the real
code paths: the timeline page and its htmx fragment with each filter, search, the issue
page (a hot issue, a cold one, one chosen incident) through the in-process Django client,
and the API's incident and issue lists (ingest/incident_list.py, ingest/issue_list.py:
count + one page). Prints a table and, last, one JSON line of the p95 figures (ms).
BENCH_ONLY=timeline,issue page times only the cases whose label holds one of the words.
"""

from __future__ import annotations

import io
import json
import os
import random
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("RCA_DATA_DIR", str(Path(__file__).resolve().parents[1] / ".data/million"))

import _env  # noqa: E402

INCIDENTS = int(os.environ.get("BENCH_INCIDENTS", "1000000"))
ISSUES = int(os.environ.get("BENCH_ISSUES", "2000"))
PROJECTS = 5
DAYS = 30
RUNS = int(os.environ.get("BENCH_RUNS", "50"))
CHUNK = 50_000
SERVICES = ["ranker", "embedder", "feature-store", "trainer", "gateway", "scorer", "reranker"]
ERRORS = ["RuntimeError", "torch.OutOfMemoryError", "ValueError", "KeyError", "TimeoutError"]


def _issue_payload(i: int, rng: random.Random) -> dict:
    service = SERVICES[i % len(SERVICES)]
    error = ERRORS[(i * 7) % len(ERRORS)]
    frames = [
        {
            "filename": f"/srv/{service}/model_{i % 13}.py",
            "function": "forward",
            "lineno": 40 + i % 50,
            "in_app": True,
        },
        {
            "filename": "torch/nn/modules/linear.py",
            "function": "forward",
            "lineno": 116,
            "in_app": False,
        },
    ]
    return {
        "service": service,
        "error_type": error,
        "title": f"{error}: mat1 and mat2 shapes cannot be multiplied ({i % 64}x256 and 512x10)",
        "culprit": f"/srv/{service}/model_{i % 13}.py in forward",
        "model_id": f"model-{i % 6}",
        "status": rng.choices(["open", "resolved", "ignored"], [80, 15, 5])[0],
        "exceptions": json.dumps(
            [{"type": error, "value": "shapes cannot be multiplied", "frames": frames}]
        ),
        "stacktrace_raw": json.dumps({"frames": frames}),
        "logs": json.dumps(
            [
                {
                    "ts": "2026-01-01T00:00:00Z",
                    "level": "ERROR",
                    "message": "forward failed",
                    "trace_id": f"t{i}",
                },
                {"ts": "2026-01-01T00:00:01Z", "level": "INFO", "message": "batch skipped"},
            ]
        ),
        "tags": json.dumps({"region": ["eu-west-1", "us-east-1"][i % 2], "gpu": "a100"}),
    }


def _copy_text(value: str) -> str:
    return (
        value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    )


def generate() -> dict[str, float]:
    """Projects, issues (ORM), incidents (COPY); issue counts and first/last seen from them."""
    from django.db import connection
    from django.utils import timezone

    from ingest.models import Incident, Issue, Project
    from rca.models import Analysis, Suggestion

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE ingest_incident, ingest_issue, ingest_project CASCADE")
    rng = random.Random(19)
    now = timezone.now()
    projects = [
        Project.objects.create(name=f"Million {p}", slug=f"million-{p}") for p in range(PROJECTS)
    ]
    payloads = [_issue_payload(i, rng) for i in range(ISSUES)]
    issues = Issue.objects.bulk_create(
        Issue(
            project=projects[i % PROJECTS],
            fingerprint=f"fp-{i:05d}",
            title=p["title"],
            error_type=p["error_type"],
            culprit=p["culprit"],
            service=p["service"],
            model_id=p["model_id"],
            status=p["status"],
            first_seen=now,
            last_seen=now,
        )
        for i, p in enumerate(payloads)
    )
    # Zipf-like: issue k gets weight 1/(k+1)^1.1, so the hottest holds ~14% of the incidents.
    weights = [1 / (k + 1) ** 1.1 for k in range(ISSUES)]
    order = list(range(ISSUES))
    rng.shuffle(order)  # hot issues spread over projects and ids
    chosen = rng.choices(order, weights=weights, k=INCIDENTS)

    # Every column of the model, so a field added later gets its default, not an error.
    fields = [f for f in Incident._meta.concrete_fields if not f.primary_key]
    template = Incident()
    defaults: dict[str, str] = {}
    for f in fields:
        value = (
            f.pre_save(template, True)
            if f.column in ("received_at", "analysis_updated_at")
            else f.get_default()
        )
        if value is None:
            defaults[f.column] = "\\N"
        elif isinstance(value, bool):
            defaults[f.column] = "t" if value else "f"
        elif isinstance(value, (dict, list)):
            defaults[f.column] = _copy_text(json.dumps(value))
        else:
            defaults[f.column] = _copy_text(str(value))
    columns = [f.column for f in fields]
    sql = f"COPY ingest_incident ({', '.join(columns)}) FROM STDIN"
    statuses = ["done"] * 97 + ["failed"] * 2 + ["pending"]
    started = time.perf_counter()
    made = 0.0
    with connection.cursor() as cursor:
        for start in range(0, INCIDENTS, CHUNK):
            t0 = time.perf_counter()
            buf = io.StringIO()
            for n in range(start, min(start + CHUNK, INCIDENTS)):
                i = chosen[n]
                p = payloads[i]
                issue = issues[i]
                received = now - timedelta(seconds=rng.random() * DAYS * 86400)
                stamp = received.isoformat()
                row = dict(defaults)
                row.update(
                    project_id=str(issue.project_id),
                    issue_id=str(issue.pk),
                    event_id=f"{n:032x}",
                    service=p["service"],
                    environment="prod",
                    occurred_at=(received - timedelta(seconds=2)).isoformat(),
                    received_at=stamp,
                    error_type=p["error_type"],
                    message=f"mat1 and mat2 shapes cannot be multiplied ({n % 64}x256 and 512x10)",
                    stacktrace_raw=_copy_text(p["stacktrace_raw"]),
                    exceptions=_copy_text(p["exceptions"]),
                    logs=_copy_text(p["logs"]),
                    tags=p["tags"],
                    model_id=p["model_id"],
                    fingerprint=issue.fingerprint,
                    analysis_status=statuses[n % 100],
                    analysis_updated_at=stamp,
                )
                buf.write("\t".join(row[c] for c in columns))
                buf.write("\n")
            made += time.perf_counter() - t0
            with cursor.cursor.copy(sql) as copy:
                copy.write(buf.getvalue())
    loaded = time.perf_counter() - started
    with connection.cursor() as cursor:
        cursor.execute(
            """UPDATE ingest_issue i SET first_seen = s.first, last_seen = s.last,
                   occurrence_count = s.n
               FROM (SELECT issue_id, min(received_at) AS first, max(received_at) AS last,
                            count(*) AS n FROM ingest_incident GROUP BY issue_id) s
               WHERE s.issue_id = i.id"""
        )
    # The latest incident of a quarter of the issues has an analysis and a suggestion.
    latest = {}
    for issue_id, pk in (
        Incident.objects.filter(issue_id__in=[x.pk for x in issues[::4]])
        .order_by("issue_id", "-received_at")
        .distinct("issue_id")
        .values_list("issue_id", "pk")
    ):
        latest[issue_id] = pk
    analyses = Analysis.objects.bulk_create(
        Analysis(incident_id=pk, issue_id=issue_id, status="done", provider="offline")
        for issue_id, pk in latest.items()
    )
    Suggestion.objects.bulk_create(
        Suggestion(
            analysis=a,
            issue_id=a.issue_id,
            incident_id=a.incident_id,
            action="Set in_features to 256",
            reason="256 vs 512",
            provider="offline",
        )
        for a in analyses
    )
    t0 = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE ingest_incident")
        cursor.execute("VACUUM ANALYZE ingest_issue")
        # The chart's rollups, filled by the trigger: their visibility map makes the sums
        # index-only scans, as autovacuum would after a while (migration 0005).
        cursor.execute("VACUUM ANALYZE webapp_incidenthour")
        cursor.execute("VACUUM ANALYZE webapp_incidentday")
    return {
        "generate_s": made,
        "load_s": loaded,
        "rows_per_s": INCIDENTS / loaded,
        "vacuum_s": time.perf_counter() - t0,
    }


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    fn()  # warm up
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[max(0, int(len(times) * 0.95) - 1)]


def main() -> None:
    _env.setup_django()
    from django.contrib.auth.models import User
    from django.db.models import Count
    from django.test import Client
    from django.utils import timezone

    from ingest.incident_list import IncidentFilters, find_incidents
    from ingest.issue_list import IssueFilters, find_issues
    from ingest.models import Incident, Issue, Project
    from webapp.models import Membership

    existing = Incident.objects.filter(project__slug__startswith="million-").count()
    if existing != INCIDENTS or os.environ.get("BENCH_REBUILD") == "1":
        figures = generate()
        print(
            f"generated {INCIDENTS:,} incidents over {ISSUES:,} issues: rows made in "
            f"{figures['generate_s']:.1f} s, made + COPY in {figures['load_s']:.1f} s "
            f"({figures['rows_per_s']:,.0f} rows/s), VACUUM ANALYZE {figures['vacuum_s']:.1f} s"
        )
    else:
        print(f"reusing {existing:,} incidents (BENCH_REBUILD=1 for new ones)")
    user, _ = User.objects.get_or_create(username="bench-million")
    for project in Project.objects.filter(slug__startswith="million-"):
        Membership.objects.get_or_create(user=user, project=project, defaults={"role": "responder"})
    client = Client()
    client.force_login(user)
    hot = Issue.objects.order_by("-occurrence_count").first()
    cold = Issue.objects.order_by("occurrence_count").first()
    assert hot and cold
    busiest = Project.objects.annotate(n=Count("incidents")).order_by("-n").first()
    assert busiest
    some = Incident.objects.filter(issue=hot).order_by("-received_at")[500]
    day_ago = timezone.now() - timedelta(days=1)
    fragment = {"HTTP_HX_REQUEST": "true"}

    def page(url: str, **headers: str) -> Callable[[], object]:
        def get() -> object:
            response = client.get(url, **headers)
            assert response.status_code == 200, (url, response.status_code)
            return response

        return get

    def incidents(**kw: object) -> Callable[[], object]:
        return lambda: (lambda r: (r[0], list(r[1])))(
            find_incidents(busiest, IncidentFilters(**kw))
        )  # type: ignore[arg-type]

    def issues(**kw: object) -> Callable[[], object]:
        return lambda: (lambda r: (r[0], list(r[1])))(find_issues(busiest, IssueFilters(**kw)))  # type: ignore[arg-type]

    cases: list[tuple[str, Callable[[], object]]] = [
        ("timeline page (7d)", page("/")),
        ("timeline fragment 30d", page("/?range=30d", **fragment)),
        ("timeline 24h", page("/?range=24h", **fragment)),
        ("timeline service", page(f"/?service={hot.service}", **fragment)),
        ("timeline error type", page(f"/?error_type={hot.error_type}", **fragment)),
        ("timeline status resolved", page("/?status=resolved", **fragment)),
        ("timeline search", page("/?q=shapes+cannot&range=30d", **fragment)),
        ("timeline page 3", page("/?range=30d&page=3", **fragment)),
        ("issue page hot", page(f"/issues/{hot.pk}")),
        ("issue page cold", page(f"/issues/{cold.pk}")),
        ("issue page incident", page(f"/issues/{hot.pk}?incident={some.pk}")),
        ("api incidents", incidents()),
        ("api incidents service", incidents(service=hot.service)),
        ("api incidents issue", incidents(issue_id=hot.pk)),
        ("api incidents 24h", incidents(since=day_ago)),
        ("api incidents event id", incidents(event_id=some.event_id)),
        ("api incidents offset 5000", incidents(offset=5000)),
        ("api issues", issues()),
        ("api issues status+service", issues(status="open", service=hot.service)),
        ("api issues 24h", issues(since=day_ago)),
    ]
    print(
        f"hot issue {hot.pk}: {hot.occurrence_count:,} incidents; busiest project "
        f"{busiest.slug}: {busiest.n:,}; {RUNS} runs each"
    )  # type: ignore[attr-defined]
    print(f"{'query':28s} {'p50 ms':>8s} {'p95 ms':>8s}")
    p95s = {}
    only = [word for word in os.environ.get("BENCH_ONLY", "").split(",") if word]
    for label, fn in cases:
        if only and not any(word in label for word in only):
            continue
        p50, p95 = timed(fn)
        p95s[label] = round(p95, 1)
        flag = "  > 100 ms" if p95 > 100 else ""
        print(f"{label:28s} {p50:8.1f} {p95:8.1f}{flag}")
    print(
        json.dumps(
            {
                "incidents": INCIDENTS,
                "p95_ms": p95s,
                "at": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        )
    )


if __name__ == "__main__":
    main()
