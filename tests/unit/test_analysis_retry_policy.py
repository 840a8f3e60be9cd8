"""The analysis task's retry policy: doubling backoff with a cap, errors kept short."""

from __future__ import annotations

from rca.queue.claim import MAX_ERROR, error_text, retry_countdown


def test_backoff_doubles_per_attempt_and_stops_at_the_cap(settings) -> None:
    settings.RCA_ANALYSIS_RETRY_BACKOFF = 10.0
    settings.RCA_ANALYSIS_RETRY_BACKOFF_MAX = 60.0
    assert [retry_countdown(n) for n in (1, 2, 3, 4, 5)] == [10.0, 20.0, 40.0, 60.0, 60.0]


def test_the_error_kept_is_type_and_message_truncated() -> None:
    assert error_text(FileNotFoundError("Path /models/x not found")) == (
        "FileNotFoundError: Path /models/x not found"
    )
    assert len(error_text(RuntimeError("x" * 10_000))) == MAX_ERROR
