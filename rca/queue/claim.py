"""Claiming work with a conditional UPDATE: exactly one worker wins an incident.

The status transition happens in the database, so two workers (or a sweeper re-enqueue
racing a slow worker) can never analyse the same incident at the same time. Each claim
is an attempt, counted in the same UPDATE: a worker SIGKILLed mid-analysis has already
spent its attempt, so an incident that kills every worker that touches it (or always
raises) runs at most RCA_ANALYSIS_MAX_ATTEMPTS times and then stays `failed`.
A claim holds a lease (rca/queue/lease.py) that the running analysis renews; the
sweeper takes back an `analyzing` incident only once its lease has lapsed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import F, QuerySet
from django.utils import timezone

from ingest.models import Incident
from rca.queue import lease

Status = Incident.Analysis
MAX_ERROR = 2000  # characters of an error kept on the incident (the Analysis row has more)
WORKER_LOST = "worker lost mid-analysis (killed, out of memory or over the time limit)"


def max_attempts() -> int:
    configured: int = settings.RCA_ANALYSIS_MAX_ATTEMPTS
    return max(1, configured)


def error_text(exc: BaseException) -> str:
    """`Type: message`, truncated: our own exception text, shown (escaped) in the UI."""
    return f"{type(exc).__name__}: {exc}"[:MAX_ERROR]


def claim(incident_id: int, *, force: bool = False) -> datetime | None:
    """pending -> analyzing (also done/failed -> analyzing when forced); the claim's token
    (the `analysis_updated_at` written, which a lease renewal matches) if we won, else None.

    Never past the attempt limit, forced or not: only `reset_attempts` (a responder's
    Re-analyse) opens an exhausted incident again, so no stray message can loop it.
    """
    allowed = [Status.PENDING] + ([Status.DONE, Status.FAILED] if force else [])
    now = timezone.now()
    won = Incident.objects.filter(
        pk=incident_id, analysis_status__in=allowed, analysis_attempts__lt=max_attempts()
    ).update(
        analysis_status=Status.ANALYZING,
        analysis_updated_at=now,
        analysis_lease_until=lease.expiry(now),
        analysis_attempts=F("analysis_attempts") + 1,
    )
    return now if won == 1 else None


def finish(incident_id: int, status: str, token: datetime) -> bool:
    """analyzing -> `status` if the claim made with `token` is still ours; False otherwise.

    A worker whose lease lapsed while it was frozen (a long GC pause, a stopped VM) may wake
    up after the sweeper gave the incident to another worker: its result must not
    overwrite the newer claim's. A success clears the last error (the count stays)."""
    extra = {"analysis_error": ""} if status == Status.DONE else {}
    return (
        _mine(incident_id, token).update(
            analysis_status=status, analysis_updated_at=timezone.now(), **extra
        )
        == 1
    )


class ClaimLost(Exception):
    """The claim this worker held was taken back (lease lapsed) and maybe given to another."""


def _mine(incident_id: int, token: datetime) -> QuerySet[Incident]:
    """The incident, while it is still `analyzing` under the claim made with `token` (the
    `analysis_updated_at` that claim wrote; renewals touch only the lease)."""
    return Incident.objects.filter(
        pk=incident_id, analysis_status=Status.ANALYZING, analysis_updated_at=token
    )


@dataclass(frozen=True)
class Failure:
    """What became of an incident after a failed attempt."""

    attempts: int
    gave_up: bool  # True: `failed` for good; False: `pending`, a retry is due


def fail(incident_id: int, error: str, token: datetime) -> Failure | None:
    """analyzing -> failed at the attempt limit, else back to pending; None if the claim
    made with `token` is no longer ours (see `finish`)."""
    now = timezone.now()
    mine = _mine(incident_id, token)
    if mine.filter(analysis_attempts__gte=max_attempts()).update(
        analysis_status=Status.FAILED, analysis_error=error[:MAX_ERROR], analysis_updated_at=now
    ):
        gave_up = True
    elif mine.update(
        analysis_status=Status.PENDING, analysis_error=error[:MAX_ERROR], analysis_updated_at=now
    ):
        gave_up = False
    else:
        return None
    attempts = Incident.objects.filter(pk=incident_id).values_list("analysis_attempts", flat=True)
    return Failure(attempts=attempts.first() or 0, gave_up=gave_up)


def retry_countdown(attempts: int) -> float:
    """Seconds before the next attempt: doubling from RCA_ANALYSIS_RETRY_BACKOFF, capped."""
    delay = settings.RCA_ANALYSIS_RETRY_BACKOFF * 2 ** max(0, attempts - 1)
    return float(min(delay, settings.RCA_ANALYSIS_RETRY_BACKOFF_MAX))


def reset_attempts(incident_id: int) -> None:
    """A responder asked again: the incident gets a fresh set of attempts."""
    Incident.objects.filter(pk=incident_id).update(analysis_attempts=0)
