"""Engineers' verdicts on suggestions: accept or reject (with a reason), kept as history.

The latest verdict is the suggestion's status; every verdict is a Decision row, so the
UI can show who decided what and when, and retrieval can learn from accepted fixes and
demote rejected runbook/incident pairs.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from rca.models import Decision, Suggestion

MAX_NOTE = 2000


class DecisionError(ValueError):
    """The verdict cannot be recorded as given; the message says what to change."""


def decide(suggestion: Suggestion, user, verdict: str, note: str = "") -> Decision:
    """Record `verdict` ("accepted" | "rejected") by `user`; rejecting needs a note."""
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
            suggestion=suggestion, user=user, verdict=verdict, note=note
        )
    suggestion.status = verdict
    suggestion.decided_at = now
    return decision
