"""Spool cost: what one request pays to spool its incidents (encode + write + fsync) while
the database is away, by record size and writer count, and how fast a replay reads back.

Writes go to a directory on the same disk as RCA_SPOOL_DIR would (default: .data/bench-spool),
so the fsync figure is this machine's disk. Each writer is a process of its own, as each
gunicorn worker is; with several, their fsyncs contend for the disk.

    .venv/bin/python bench/spool_append.py     # BENCH_APPENDS=300 per writer by default
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import time
from multiprocessing import get_context
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ingest.spool.directory import Spool  # noqa: E402

APPENDS = int(os.environ.get("BENCH_APPENDS", "300"))
DIRECTORY = Path(os.environ.get("BENCH_SPOOL_DIR", REPO / ".data" / "bench-spool"))
SIZES = {"1 KB single": (1, 1_000), "6 KB single": (1, 6_000), "batch 100 x 1 KB": (100, 1_000)}


def records(n: int, size: int, tag: str) -> list[dict]:
    return [
        {
            "project_id": 1,
            "source": "api",
            "event_id": f"{tag}-{i}",
            "payload": {"message": "x" * size},
            "received_at": "2026-12-04T15:00:00Z",
        }
        for i in range(n)
    ]


def writer(args: tuple[str, int, int, int]) -> tuple[list[float], float, float]:
    """Append `APPENDS` requests, one at a time: the seconds each `append` took, and when
    the first began and the last ended (so that process start-up is not counted)."""
    directory, n, size, seed = args
    spool = Spool(directory, 1 << 40)
    batches = [records(n, size, f"{seed}-{i}") for i in range(APPENDS)]
    took = []
    began = time.time()
    for batch in batches:
        start = time.perf_counter()
        spool.append(batch)
        took.append(time.perf_counter() - start)
    return took, began, time.time()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def run(label: str, n: int, size: int, writers: int) -> dict:
    shutil.rmtree(DIRECTORY, ignore_errors=True)
    DIRECTORY.mkdir(parents=True)
    with get_context("spawn").Pool(writers) as pool:
        results = pool.map(writer, [(str(DIRECTORY), n, size, w) for w in range(writers)])
    wall = max(r[2] for r in results) - min(r[1] for r in results)
    took = [t for r in results for t in r[0]]
    spool = Spool(DIRECTORY, 1 << 40)
    size_bytes = spool.size_bytes()
    replay_start = time.perf_counter()
    replayed = spool.replay(lambda batch: None)
    replay_s = time.perf_counter() - replay_start
    row = {
        "case": label,
        "writers": writers,
        "p50_ms": round(statistics.median(took) * 1000, 2),
        "p95_ms": round(percentile(took, 0.95) * 1000, 2),
        "p99_ms": round(percentile(took, 0.99) * 1000, 2),
        "appends_per_s": round(len(took) / wall),
        "incidents_per_s": round(len(took) * n / wall),
        "mb_spooled": round(size_bytes / 1e6, 1),
        "replay_records_per_s": round(replayed / replay_s),
    }
    print(
        f"{label:18} writers={writers}  append p50 {row['p50_ms']:6.2f} ms  p95 "
        f"{row['p95_ms']:6.2f} ms  p99 {row['p99_ms']:6.2f} ms  {row['appends_per_s']:6d} "
        f"appends/s  {row['incidents_per_s']:7d} incidents/s  replay "
        f"{row['replay_records_per_s']} records/s"
    )
    return row


def main() -> None:
    print(f"{APPENDS} appends per writer into {DIRECTORY} ({os.cpu_count()} cores)")
    rows = [run(label, n, size, w) for label, (n, size) in SIZES.items() for w in (1, 4)]
    shutil.rmtree(DIRECTORY, ignore_errors=True)
    print(json.dumps({"bench": "spool_append", "rows": rows}))


if __name__ == "__main__":
    main()
