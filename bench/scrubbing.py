"""Scrubbing cost: µs per incident on the dev cases, and the worst ms per KB on hostile text.

Every string of every incident is scrubbed before it is stored, so the per-incident figure
is a floor of ingest CPU; the hostile figures show that no input makes scrubbing
super-linear (ms per KiB stays flat as the input grows from 16 KiB to 1 MiB, and drops
once the match budget, ``ingest.scrubbing.MAX_MATCHES``, cuts text made only of findings).

    .venv/bin/python bench/scrubbing.py            # BENCH_ROUNDS=200 by default
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ingest.scrubbing import scrub  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "200"))
SIZES_KIB = (16, 64, 256, 1024)

# Each builds a string of about n characters from a repeated hostile unit.
HOSTILE = {
    "a=a=a=": lambda n: "a=" * (n // 2),
    "password=password=": lambda n: "password=" * (n // 9),
    "key: key: key:": lambda n: "_KEY: " * (n // 6),
    "xoxb-----": lambda n: "xoxb" + "-" * n,
    "sk-sk-sk-": lambda n: "sk-" * (n // 3),
    "aaaa...@": lambda n: "a" * n + "@",
    "a.a.a.a@": lambda n: "a." * (n // 2) + "@b.c",
    "://:::::": lambda n: "://" + ":" * n,
    "://a:a:a:a@": lambda n: "://" + "a:" * (n // 2),
    "Bearer Bearer": lambda n: "Bearer " * (n // 7),
    "BEGIN PRIVATE KEY, no END": lambda n: "-----BEGIN RSA PRIVATE KEY-----" + "x" * n,
    '"token": "token": ': lambda n: '"token": ' * (n // 9),
    "eyJ.eyJ.eyJ": lambda n: "eyJaaaaaaaaa." * (n // 13),
    "Version=,Culture=,": lambda n: "A, Version=1, Culture=n, PublicKeyToken=f, " * (n // 42),
    "AccountKey=;": lambda n: "AccountKey=;" * (n // 12),
    "unclosed quote": lambda n: 'secret="' + "\\a" * (n // 2),
    # Many short matches: the cost per match (RE2's Python bindings) is the constant.
    "many ://:a@": lambda n: "://:a@" * (n // 6),
    "many a@b.cc": lambda n: "a@b.cc " * (n // 7),
    "many password=x": lambda n: "password=x " * (n // 11),
    "many a_key=v": lambda n: "a_key=v " * (n // 8),
    "many Token 1234567": lambda n: "Token 12345678 " * (n // 15),
    "many ;Pwd=x": lambda n: ";Pwd=x" * (n // 6),
}


def incidents() -> list[dict]:
    cases = [
        json.loads(line)
        for line in (REPO / "tests" / "data" / "dev_cases.jsonl").read_text().splitlines()
    ]
    return [
        {
            "service": "svc",
            "error_type": case["exception_type"],
            "message": case["message"],
            "stacktrace": case["traceback"],
            "logs": case["logs"],
            "inference_context": {"model_id": "m", "batch_size": 8, "device": "cuda:0"},
            "tags": {"framework": case["framework"], "region": "eu-west-1"},
        }
        for case in cases
    ]


def per_incident_us(items: list[dict]) -> float:
    start = time.perf_counter()
    for _ in range(ROUNDS):
        for item in items:
            scrub(item)
    return (time.perf_counter() - start) / (ROUNDS * len(items)) * 1e6


def hostile_ms_per_kib() -> tuple[dict[str, list[float]], float]:
    """ms per KiB for each hostile input and size, and the worst total for one string."""
    figures, worst_total = {}, 0.0
    for name, build in HOSTILE.items():
        row = []
        for kib in SIZES_KIB:
            text = build(kib * 1024)
            start = time.perf_counter()
            scrub(text)
            elapsed = (time.perf_counter() - start) * 1e3
            worst_total = max(worst_total, elapsed)
            row.append(elapsed / (len(text) / 1024))
        figures[name] = row
    return figures, worst_total


def main() -> None:
    items = incidents()
    scrub(items)  # warm caches and compiled patterns
    print(f"dev cases: {per_incident_us(items):.1f} µs per incident ({len(items)} incidents)")
    header = "".join(f"{kib:>9} KiB" for kib in SIZES_KIB)
    print(f"\nhostile input, ms per KiB:{'':12}{header}")
    worst = 0.0
    figures, worst_total = hostile_ms_per_kib()
    for name, row in figures.items():
        worst = max(worst, *row)
        print(f"  {name:<35}" + "".join(f"{value:>13.3f}" for value in row))
    print(f"\nworst: {worst:.3f} ms per KiB; worst single string: {worst_total:.0f} ms")


if __name__ == "__main__":
    main()
