"""The oldest driver that reports a CUDA release: a lower bound on the installed driver when
the incident shows only the CUDA release it supports ("found version 11060", nvidia-smi's
"CUDA Version: 12.2").

A driver reports the newest CUDA release it supports, and the first driver to support a
release is the one NVIDIA packages with that toolkit (CUDA Toolkit Release Notes, Table 3,
"CUDA Toolkit and Corresponding Driver Versions"; the rows, with their source, are
``rca/knowledge/cuda-toolkit-drivers.toml``). So a driver reporting CUDA 11.6 is at least
510.39.01, not merely the 450.80.02 every 11.x application runs on under minor-version
compatibility: that family minimum (``rca/knowledge/compatibility/cuda-driver.toml``) says
what a build *needs*, this table what a driver that reports a release *is*.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

from rca.suggestion.version_numbers import padded, parse_version

__all__ = ["DATA", "driver_floor", "load_rows"]

DATA = Path(__file__).resolve().parent.parent / "knowledge" / "cuda-toolkit-drivers.toml"


@functools.cache
def load_rows(path: Path = DATA) -> tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]:
    """(CUDA release, oldest driver listed with it) per row, newest release first; a row that
    does not parse is skipped, and a file that does not gives none."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return ()
    rows = []
    for raw in data.get("rows", []) if isinstance(data.get("rows"), list) else []:
        if isinstance(raw, dict) and isinstance(raw.get("cuda"), str):
            cuda, driver = parse_version(raw["cuda"]), parse_version(str(raw.get("driver", "")))
            if cuda and driver:
                rows.append((cuda, driver))
    return tuple(sorted(rows, key=lambda row: padded(row[0]), reverse=True))


def driver_floor(cuda: str) -> tuple[int, ...]:
    """The oldest driver that reports CUDA release ``cuda`` ("11.6" -> (510, 39, 1)): the row
    of that release, else of the newest release before it (a driver reporting 13.1 reports
    more than 13.0 does); () for a release older than every row, or no release."""
    version = parse_version(cuda)
    for release, driver in load_rows() if version else ():
        if padded(release) <= padded(version):
            return driver
    return ()
