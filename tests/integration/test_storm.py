"""A storm of known failures is cheap, and a new failure is analysed before it.

The session's real worker (tests/conftest.py) consumes every queue, like `make run`'s
general worker: a storm costs one analysis per issue (repeats join the pending one), and a
new error queued behind a backlog of re-analyses is taken before that backlog is through.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db.models import Count

from ingest.models import Incident, Issue, Project
from ingest.store import store_incidents
from rca.models import Analysis
from rca.queue import coalesce
from rca.reuse import answering_analysis
from tests.support.corpus import store_embedded_runbooks
from tests.support.factories import shape_error
from tests.support.processes import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

ISSUES = 10  # each first analysis takes the worker ~1.5 s
PER_ISSUE = 200
BATCH = 100


@pytest.fixture(autouse=True)
def corpus(transactional_db, settings):
    store_embedded_runbooks()
    settings.RCA_PUBLISH_IN_BACKGROUND = False  # published at commit, in storing order


@pytest.fixture
def project() -> Project:
    return Project.objects.create(name="Fleet", slug="fleet")


def occurrence(kind: int, batch: int = 4) -> dict[str, Any]:
    """An occurrence of issue `kind` (its own stack); `batch` changes the shape diff."""
    payload = shape_error(batch=batch)
    payload["stacktrace"] = payload["stacktrace"].replace("model.py", f"model_{kind}.py")
    return payload


def unfinished(project: Project) -> int:
    return Incident.objects.filter(
        project=project,
        analysis_status__in=[Incident.Analysis.PENDING, Incident.Analysis.ANALYZING],
    ).count()


def test_a_storm_of_known_failures_costs_one_analysis_per_issue(project, celery_worker) -> None:
    payloads = [occurrence(kind) for _ in range(PER_ISSUE) for kind in range(ISSUES)]
    for start in range(0, len(payloads), BATCH):
        store_incidents(project, payloads[start : start + BATCH])

    wait_for(lambda: unfinished(project) == 0, timeout=120, interval=0.3)
    incidents = list(Incident.objects.filter(project=project))
    assert len(incidents) == ISSUES * PER_ISSUE
    counts = Issue.objects.filter(project=project).values_list("occurrence_count", flat=True)
    assert sorted(counts) == [PER_ISSUE] * ISSUES  # nothing dropped or sampled
    analyses = Analysis.objects.filter(issue__project=project)
    assert analyses.count() <= 2 * ISSUES, celery_worker.log()[-3000:]
    assert {i.analysis_status for i in incidents} == {"done"}
    for incident in incidents:
        shown = answering_analysis(incident).analysis
        assert shown is not None and shown.status == "done"
        assert shown.issue_id == incident.issue_id
    assert (
        not Issue.objects.filter(project=project, analysis_leader__isnull=False)
        .exclude(analysis_leader__analysis_status="done")
        .exists()
    )


def already_analysed(project: Project, kinds: range, monkeypatch) -> None:
    """Issues whose first occurrence has a finished analysis (stored as the pipeline does,
    without queueing it: the worker would only find it done)."""
    from rca.queue import intake

    with monkeypatch.context() as patched:
        patched.setattr(intake, "publish_analyses_on_commit", lambda *_, **__: None)
        stored = [s.incident for s in store_incidents(project, [occurrence(k) for k in kinds])]
    for incident in stored:
        Analysis.objects.create(incident=incident, issue_id=incident.issue_id, status="done")
        Incident.objects.filter(pk=incident.pk).update(analysis_status="done")
        coalesce.settle_incident(incident.pk)


def test_a_new_error_is_analysed_while_a_backlog_of_reanalyses_waits(
    project, celery_worker, monkeypatch
) -> None:
    backlog = range(8)
    already_analysed(project, backlog, monkeypatch)
    # Materially different repeats (another shape): one re-analysis each, on the repeat queue.
    repeats = [s.incident.pk for s in store_incidents(project, [occurrence(k, 9) for k in backlog])]
    [new] = [s.incident.pk for s in store_incidents(project, [occurrence(len(backlog))])]

    def analysed(pk: int) -> bool:
        return Incident.objects.get(pk=pk).analysis_status == "done"

    wait_for(lambda: analysed(new), timeout=60, interval=0.05)
    still = Incident.objects.filter(pk__in=repeats, analysis_status__in=["pending", "analyzing"])
    waiting = still.count()
    wait_for(lambda: unfinished(project) == 0, timeout=120, interval=0.3)  # leave nothing running

    assert waiting > 0, "the new error waited for the whole backlog"
    assert Analysis.objects.filter(incident_id=new, status="done").exists()
    per_issue = (
        Analysis.objects.filter(issue__project=project).values("issue").annotate(n=Count("pk"))
    )
    assert sorted(row["n"] for row in per_issue) == [1] + [2] * len(backlog)
