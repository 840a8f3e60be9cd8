"""Incident texts the driver premise tests share: nvidia-smi's header and CUDA's messages
that the installed driver is too old, with the runbook that answers them."""

from __future__ import annotations

TOO_OLD = ("cuda-driver-too-old", 0.9)
SMI = "| NVIDIA-SMI {v}              Driver Version: {v}      CUDA Version: {cuda}     |"
INSUFFICIENT = (
    "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"
)
FOUND_11040 = "RuntimeError: The NVIDIA driver on your system is too old (found version 11040)."
