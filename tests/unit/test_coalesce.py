"""Each stored occurrence is decided against its issue: analyse first, join, reuse, re-analyse.

On the database, through `store_incidents` (which runs the decision in its transaction, as
ingest does); no worker: an analysis "finishes" by the same updates the pipeline makes.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings

from ingest.models import Incident, Issue, Project
from ingest.store import store_incidents
from rca.models import Analysis
from rca.queue import coalesce
from rca.reuse import answering_analysis
from tests.support.factories import shape_error

pytestmark = pytest.mark.django_db


def occurrence(batch: int = 4, kind: int = 0) -> dict[str, Any]:
    """An occurrence of issue `kind`; `batch` changes its shape diff (a material change)."""
    payload = shape_error(batch=batch)
    payload["stacktrace"] = payload["stacktrace"].replace("model.py", f"model_{kind}.py")
    return payload


@pytest.fixture
def project() -> Project:
    return Project.objects.create(name="Ranker", slug="ranker")


@pytest.fixture
def published(monkeypatch) -> list[tuple[str | None, list[int]]]:
    """What intake publishes, by queue (no broker needed to see the decision)."""
    from rca.queue import intake

    sent: list[tuple[str | None, list[int]]] = []
    monkeypatch.setattr(
        intake, "publish_analyses_on_commit", lambda ids, queue=None: sent.append((queue, ids))
    )
    return sent


def store(project: Project, *payloads: dict[str, Any]) -> list[Incident]:
    return [s.incident for s in store_incidents(project, list(payloads))]


def finish(incident: Incident) -> Analysis:
    """What the pipeline leaves behind for a successful analysis, then its settle step."""
    analysis = Analysis.objects.create(
        incident=incident, issue_id=incident.issue_id, status=Analysis.Status.DONE
    )
    Incident.objects.filter(pk=incident.pk).update(analysis_status=Incident.Analysis.DONE)
    coalesce.settle_incident(incident.pk)
    return analysis


def status(incident: Incident) -> tuple[str, bool]:
    incident.refresh_from_db()
    return incident.analysis_status, incident.analysis_joined


def test_a_first_occurrence_is_the_issues_one_pending_analysis_on_the_fresh_queue(
    project, published
) -> None:
    [first] = store(project, occurrence())
    assert published == [(settings.RCA_QUEUE_FRESH, [first.pk])]
    assert Issue.objects.get(pk=first.issue_id).analysis_leader_id == first.pk
    assert status(first) == ("pending", False)


def test_repeats_while_it_is_pending_join_it_without_a_message_then_answer_with_it(
    project, published
) -> None:
    [first, same] = store(project, occurrence(), occurrence())  # one batch
    [later, different] = store(project, occurrence(), occurrence(batch=9))  # another request
    assert published == [(settings.RCA_QUEUE_FRESH, [first.pk])]
    assert [status(i) for i in (same, later, different)] == [("pending", True)] * 3

    analysis = finish(first)
    # The same ones are answered by it; the materially different one is the next analysis.
    assert [status(i) for i in (same, later)] == [("done", False)] * 2
    assert answering_analysis(same).analysis == analysis
    assert answering_analysis(same).reused
    assert status(different) == ("pending", False)
    assert Issue.objects.get(pk=first.issue_id).analysis_leader_id == different.pk


def test_a_repeat_after_the_analysis_reuses_it_at_once_and_a_different_one_reanalyses(
    project, published
) -> None:
    [first] = store(project, occurrence())
    analysis = finish(first)
    assert Issue.objects.get(pk=first.issue_id).analysis_leader_id is None
    published.clear()

    [same] = store(project, occurrence())
    assert published == []
    assert status(same) == ("done", False)
    assert answering_analysis(same).analysis == analysis

    [different, joins] = store(project, occurrence(batch=9), occurrence(batch=9))
    assert published == [(settings.RCA_QUEUE_REPEAT, [different.pk])]
    assert status(joins) == ("pending", True)


def test_a_leader_that_failed_for_good_hands_over_to_a_waiting_occurrence(
    project, published
) -> None:
    [first, waiting] = store(project, occurrence(), occurrence())
    Incident.objects.filter(pk=first.pk).update(analysis_status=Incident.Analysis.FAILED)
    coalesce.settle_incident(first.pk)
    assert status(waiting) == ("pending", False)
    assert Issue.objects.get(pk=first.issue_id).analysis_leader_id == waiting.pk


def test_issues_are_decided_apart_and_settling_twice_changes_nothing(project, published) -> None:
    incidents = store(project, *(occurrence(kind=k) for k in range(3) for _ in range(2)))
    leaders = sorted(pk for _, ids in published for pk in ids)
    assert leaders == sorted(incidents[k].pk for k in (0, 2, 4))
    finish(incidents[0])
    assert coalesce.settle(incidents[0].issue_id) is None
    assert status(incidents[1]) == ("done", False)
    assert [status(incidents[k]) for k in (3, 5)] == [("pending", True)] * 2


def test_the_sweeper_settles_occurrences_left_waiting_for_a_finished_analysis(
    project, published
) -> None:
    from datetime import timedelta

    from rca.queue.sweeper import sweep

    [first, waiting] = store(project, occurrence(), occurrence())
    # The worker died between finishing and settling: done, analysis stored, not settled.
    Analysis.objects.create(incident=first, issue_id=first.issue_id, status="done")
    Incident.objects.filter(pk=first.pk).update(analysis_status=Incident.Analysis.DONE)
    assert sweep(stuck_after=timedelta(0)) == []  # the joined one has no message to resend
    assert status(waiting) == ("done", False)
