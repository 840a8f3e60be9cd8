"""Engineers' verdicts on suggestions: accept or reject (with a reason), kept as history.

The latest verdict is the suggestion's status; every verdict is a Decision row, so the
UI can show who decided what and when, and retrieval can learn from accepted fixes and
demote rejected runbook/incident pairs.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from ingest import metrics
from rca.models import Decision, Suggestion

MAX_NOTE = 2000


class DecisionError(ValueError):
    """The verdict cannot be recorded as given; the message says what to change."""


def decide(
    suggestion: Suggestion,
    user: User | AnonymousUser | None,
    verdict: str,
    note: str = "",
    *,
    actor: str = "",
) -> Decision:
    """Record `verdict` ("accepted" | "rejected") by `user`; rejecting needs a note.

    `user` is the request's user: views let only signed-in members through, and a
    signed-out one is refused here too rather than failing on the row's foreign key.
    The API and Slack decide with no user but an `actor` saying who (a key, a Slack
    user); the same rules apply to them.
    """
    if not isinstance(user, User) and not actor:
        raise DecisionError("sign in to accept or reject a suggestion")
    note = (note or "").strip()
    if verdict not in Decision.Verdict.values:
        raise DecisionError("choose accept or reject")
    if verdict == Decision.Verdict.REJECTED and not note:
        raise DecisionError("say why you reject it: the note helps the next engineer")
    if len(note) > MAX_NOTE:
        raise DecisionError(f"keep the note under {MAX_NOTE} characters")
    now = timezone.now()
    with transaction.atomic():
        Suggestion.objects.filter(pk=suggestion.pk).update(status=verdict, decided_at=now)
        decision = Decision.objects.create(
            suggestion=suggestion,
            user=user if isinstance(user, User) else None,
            actor=actor[:200],
            verdict=verdict,
            note=note,
        )
    metrics.SUGGESTIONS.labels(verdict).inc()  # one of Decision.Verdict, checked above
    suggestion.status = verdict
    suggestion.decided_at = now
    return decision
