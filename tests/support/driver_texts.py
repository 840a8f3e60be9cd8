"""Incident texts the driver premise tests share: nvidia-smi's header and CUDA's messages
that the installed driver is too old, with the runbook that answers them."""

from __future__ import annotations

from rca.suggestion.context import AnalysisContext
from tests.support.evidence import message_context

TOO_OLD = ("cuda-driver-too-old", 0.9)
SMI = "| NVIDIA-SMI {v}              Driver Version: {v}      CUDA Version: {cuda}     |"
INSUFFICIENT = (
    "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"
)
FOUND_11040 = "RuntimeError: The NVIDIA driver on your system is too old (found version 11040)."
#: torch's wording when only the CUDA release the driver supports is shown: 11.6 and 12.2.
FOUND_11060 = (
    "RuntimeError: The NVIDIA driver on your system is too old (found version 11060). Please"
    " update your GPU driver"
)
FOUND_12020 = FOUND_11060.replace("11060", "12020")


def installed_535(*logs: str) -> AnalysisContext:
    """A CUDA runtime too new for the installed 535 driver nvidia-smi shows (plus ``logs``)."""
    return message_context(
        INSUFFICIENT, TOO_OLD, logs=(SMI.format(v="535.104.05", cuda="12.2"), *logs)
    )
