"""CUDA memory at the moment of failure: what an OOM report needs and a shape report can use.

Read only when torch is already imported by the service and CUDA is present; every call
is guarded, because this runs while the service is failing.
"""

from __future__ import annotations

import sys
from typing import Any

MIB = 1024 * 1024


def memory_stats(device: Any = None) -> dict[str, float]:
    """Allocated, reserved, peak, free and total MiB of `device` (the current one if None)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return {}
    try:
        if not torch.cuda.is_available():
            return {}
        stats = {
            "allocated_mb": torch.cuda.memory_allocated(device) / MIB,
            "reserved_mb": torch.cuda.memory_reserved(device) / MIB,
            "max_allocated_mb": torch.cuda.max_memory_allocated(device) / MIB,
        }
        free, total = torch.cuda.mem_get_info(device)
        stats.update(free_mb=free / MIB, total_mb=total / MIB)
        return {k: round(v, 1) for k, v in stats.items()}
    except Exception:  # a broken CUDA context is often the failure itself
        return {}
