"""An incident in Rootcause's JSON schema, built from an exception and what was recorded.

The traceback goes as the text Python prints (the server parses it, causes included);
the failing module's path, its inputs and the shape diff go in the fields the server
groups and retrieves by. Text is cut to the server's limits here, so a huge message
still arrives rather than being refused.
"""

from __future__ import annotations

import platform
import traceback
import uuid
from datetime import datetime, timezone
from typing import Any

MAX_MESSAGE = 65_536
MAX_TRACE = 262_144


def error_type(exc: BaseException) -> str:
    kind = type(exc)
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def build(
    exc: BaseException,
    *,
    service: str,
    environment: str = "",
    context: dict[str, Any] | None = None,
    failure: dict[str, Any] | None = None,
    gpu: dict[str, float] | None = None,
) -> dict[str, Any]:
    """The JSON body for `POST /api/v1/incidents`.

    `failure` is what the recorder knows: `module` (dotted path), `inputs` (shape, dtype,
    device per tensor) and `shape_diff` (schema items); `gpu` is CUDA memory in MiB.
    """
    failure = failure or {}
    trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    inference = {k: v for k, v in (context or {}).items() if v not in (None, "")}
    if failure.get("inputs"):
        inference["inputs"] = failure["inputs"]
        inference.setdefault("device", failure["inputs"][0].get("device", ""))
    if gpu:
        inference["cuda_memory_mb"] = gpu
    tags = {"host": platform.node()[:200]}
    if failure.get("module"):
        tags["module"] = str(failure["module"])[:1000]
    incident: dict[str, Any] = {
        "service": service[:200] or "unknown",
        "environment": environment[:100],
        "event_id": uuid.uuid4().hex,
        "occurred_at": datetime.now(timezone.utc).isoformat(),
        "error_type": error_type(exc)[:255],
        "message": str(exc)[:MAX_MESSAGE] or error_type(exc)[:255],
        "stacktrace": trace[-MAX_TRACE:],
        "inference_context": inference,
        "tags": tags,
    }
    if failure.get("shape_diff"):
        incident["shape_diff"] = failure["shape_diff"]
    if gpu and gpu.get("allocated_mb") is not None:
        incident["resource_impact"] = {"gpu_memory_used_mb": gpu["allocated_mb"]}
    return incident
