"""One pending analysis per issue: a repeat joins it, reuses a finished one, or re-analyses.

Why: in a storm every replica reports the same failure. Queueing one analysis per
occurrence ran hundreds of analyses for fifteen issues and kept a new failure waiting
behind them for minutes (issues 19 and 22). So each stored occurrence is decided here,
in the transaction that stores it (`admit`), with its issue's row locked:

* **join**: the issue already has an analysis queued or running (its `analysis_leader`
  is pending or analyzing). The occurrence stays `pending` with `analysis_joined` set
  and gets no message.
* **reuse**: no analysis pending, and the issue's latest finished analysis was of a
  materially same occurrence (rca/reuse.py). Marked `done` at once, no message;
  `answering_analysis` shows the issue's analysis for it.
* **analyse**: otherwise it becomes the issue's leader and is published: on the fresh
  queue when it opened the issue (new or regressed) or the issue has no finished
  analysis yet, else on the repeat queue (a materially different repeat).

When a leader's analysis ends (done, or failed for good) `settle` runs with the issue
locked again: joined occurrences that the issue's latest analysis now answers are marked
`done`; the first one it does not answer becomes the next leader, and the rest wait for
it. Both sides take the issue's row lock, so an occurrence either joins a leader that has
not settled yet, or sees that leader's outcome: none is left waiting for nobody. Should a
worker die between finishing and settling, the sweeper settles the issue later.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from ingest.models import Incident, Issue
from rca.models import Analysis
from rca.reuse import latest_finished, materially_same

Status = Incident.Analysis
LIVE = (Status.PENDING, Status.ANALYZING)


def queue_for(incident: Incident, latest: Analysis | None) -> str:
    """Fresh: the occurrence opened its issue, or the issue has no finished analysis yet.

    Depends only on the issue's state, never on the error's text or service.
    """
    if incident.opened_issue or latest is None:
        return str(settings.RCA_QUEUE_FRESH)
    return str(settings.RCA_QUEUE_REPEAT)


@dataclass
class Admission:
    """What `admit` decided for a batch: ids to publish per queue, and the counts."""

    publish: dict[str, list[int]] = field(default_factory=dict)
    joined: int = 0
    reused: int = 0


# `admit` runs once per stored batch, inside the inbox processor's transaction: its three
# statements are written out rather than built by the ORM each time (building them cost
# more CPU than storing a small batch; issue 19). Same statements, same order, same locks.
_ISSUES, _INCIDENTS = Issue._meta.db_table, Incident._meta.db_table
_LOCK_ISSUES = (
    f"SELECT id, analysis_leader_id FROM {_ISSUES} WHERE id = ANY(%s)"  # noqa: S608
    " ORDER BY id FOR NO KEY UPDATE"
)
_LIVE = (
    f"SELECT id FROM {_INCIDENTS} WHERE id = ANY(%s)"  # noqa: S608
    " AND analysis_status = ANY(%s)"
)
_JOIN = f"UPDATE {_INCIDENTS} SET analysis_joined = true WHERE id = ANY(%s)"  # noqa: S608


def _live(leader_ids: list[int]) -> set[int]:
    """Those of these incidents whose analysis is pending or running."""
    if not leader_ids:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(_LIVE, [leader_ids, [str(status) for status in LIVE]])
        return {pk for (pk,) in cursor.fetchall()}


def _live_leaders(issues: Iterable[Issue]) -> set[int]:
    return _live([i.analysis_leader_id for i in issues if i.analysis_leader_id is not None])


def admit(incidents: list[Incident]) -> Admission:
    """Decide join / reuse / analyse for incidents just stored (in the storing transaction)."""
    by_issue: dict[int, list[Incident]] = {}
    for incident in incidents:
        by_issue.setdefault(incident.issue_id, []).append(incident)
    # NO KEY: serialises admit/settle per issue without blocking inserts that merely
    # reference the issue (suggestions, notifications), which would invite deadlocks.
    with connection.cursor() as cursor:
        cursor.execute(_LOCK_ISSUES, [list(by_issue)])
        leaders: dict[int, int | None] = dict(cursor.fetchall())  # issue id -> its leader
    live = _live([leader for leader in leaders.values() if leader is not None])
    outcome = Admission()
    joined: list[int] = []
    reused: list[int] = []
    for issue_id, group in by_issue.items():
        leader = leaders[issue_id]
        leader = leader if leader in live else None
        latest = None if leader is not None else latest_finished(issue_id)
        for incident in group:
            if leader is not None:
                joined.append(incident.pk)
                incident.analysis_joined = True
            elif latest is not None and materially_same(latest.incident, incident):
                reused.append(incident.pk)
                incident.analysis_status = Status.DONE
            else:
                leader = incident.pk
                outcome.publish.setdefault(queue_for(incident, latest), []).append(leader)
                Issue.objects.filter(pk=issue_id).update(analysis_leader_id=leader)
    now = timezone.now()
    if joined:
        with connection.cursor() as cursor:
            cursor.execute(_JOIN, [joined])
    if reused:
        Incident.objects.filter(pk__in=reused).update(
            analysis_status=Status.DONE, analysis_updated_at=now
        )
    outcome.joined, outcome.reused = len(joined), len(reused)
    return outcome


def settle_incident(incident_id: int) -> None:
    """After `incident_id`'s analysis ended: settle its issue (see `settle`)."""
    issue_id = Incident.objects.filter(pk=incident_id).values_list("issue_id", flat=True).first()
    if issue_id is not None:
        settle(issue_id)


def settle(issue_id: int) -> int | None:
    """Hand the issue's joined occurrences their outcome once no analysis is pending.

    Returns the new leader's id when one was queued. Safe to call any time, any number
    of times: with a live leader it does nothing.
    """
    from rca.queue.enqueue import publish_analysis_on_commit

    with transaction.atomic():
        issue = Issue.objects.select_for_update(no_key=True).filter(pk=issue_id).first()
        if issue is None or _live_leaders([issue]):
            return None
        waiting = list(
            Incident.objects.filter(
                issue_id=issue_id, analysis_joined=True, analysis_status=Status.PENDING
            )
            .order_by("pk")
            .only("pk", "issue_id", "error_type", "shape_diff", "opened_issue")
        )
        latest = latest_finished(issue_id)
        answered = [i.pk for i in waiting if latest and materially_same(latest.incident, i)]
        rest = [i for i in waiting if i.pk not in set(answered)]
        now = timezone.now()
        if answered:
            Incident.objects.filter(pk__in=answered).update(
                analysis_status=Status.DONE, analysis_joined=False, analysis_updated_at=now
            )
        leader = rest[0] if rest else None
        if leader is not None:
            Incident.objects.filter(pk=leader.pk).update(
                analysis_joined=False, analysis_updated_at=now
            )
            publish_analysis_on_commit(leader.pk, queue=queue_for(leader, latest))
        Issue.objects.filter(pk=issue_id).update(
            analysis_leader_id=leader.pk if leader is not None else None
        )
        return leader.pk if leader is not None else None
