"""Turn what a demo program raised into the incident a service would POST."""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from types import ModuleType
from typing import Any


class _Collect(logging.Handler):
    """Keeps the log records emitted while a program runs, as the incident's logs."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.entries: list[dict[str, Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.entries.append(
            {
                "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
                "level": record.levelname,
                "logger": record.name,
                "message": record.getMessage(),
            }
        )


@contextmanager
def collected_logs() -> Iterator[list[dict[str, Any]]]:
    handler = _Collect()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield handler.entries
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


def error_type(exc: BaseException) -> str:
    """`RuntimeError` for builtins, `torch.OutOfMemoryError` for the rest, as SDKs send it."""
    cls = type(exc)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


def incident(
    name: str, program: ModuleType, exc: BaseException, logs: list[dict[str, Any]]
) -> dict[str, Any]:
    """The incident for `exc`, labelled as a demo: environment "demo" and a `demo` tag."""
    report: dict[str, Any] = dict(getattr(program, "REPORT", {}))
    body: dict[str, Any] = {
        "service": report.pop("service", "demo"),
        "environment": "demo",
        "event_id": f"demo-{name.replace('_', '-')}",
        "error_type": error_type(exc),
        "message": str(exc),
        "stacktrace": "".join(traceback.format_exception(exc)),
        "tags": {"demo": True, "program": f"demo/programs/{name}.py"},
        **report,
    }
    if logs:
        body["logs"] = logs
    body["inference_context"] = {
        "framework": "torch",
        **body.get("inference_context", {}),
    }
    return body
