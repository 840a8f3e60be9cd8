"""Queue rows of the embedded (SQLAlchemy) broker, created safely by many processes at once.

kombu's SQLAlchemy channel looks a queue up and inserts it when missing, under a lock that
only holds within one process, and recovers only from ``OperationalError``. Two processes
that declare the same new queue at the same moment (``make run`` starts the general and the
fresh worker together, both consuming the fresh queue) race: the loser's INSERT hits the
unique name and raises ``IntegrityError``, and that worker exits at start. The row it
wanted exists by then, so the fix is to roll back and look again.
"""

from __future__ import annotations

from typing import Any

__all__ = ["make_queue_creation_race_safe"]


def make_queue_creation_race_safe() -> None:
    """Wrap the channel's get-or-create once: on a lost race, roll back and read the row."""
    from kombu.transport import sqlalchemy
    from sqlalchemy.exc import IntegrityError

    channel = sqlalchemy.Channel
    if getattr(channel._get_or_create, "race_safe", False):
        return
    original = channel._get_or_create

    def get_or_create(self: Any, queue: str) -> Any:
        try:
            return original(self, queue)
        except IntegrityError:  # another process inserted it after our lookup
            self.session.rollback()
            return original(self, queue)

    get_or_create.race_safe = True  # type: ignore[attr-defined]
    channel._get_or_create = get_or_create  # type: ignore[method-assign]
