"""Worst cost per KB of attacker-written text, for every function whose patterns read it.

    .venv/bin/python bench/regex_linear.py [--root PATH] [--timeout 10] [--sizes 1024,65536,1048576]

For each function family (grouping, each parser, shape extraction, signal normalising,
tokenizing, runbook signal matching, scrubbing, prompt fencing) and each size, every
adversarial input (digit runs, ``(1,1111…!``, nested brackets, repeated separators, runs of
spaces, long paths, many short lines) is run once in a forked child; the table shows the
worst milliseconds per KB and which input it was. Linear code shows a flat row; a
backtracking one grows with the size, or hits ``--timeout`` (shown as ``>`` the bound).

``--root`` points at another checkout to measure old code the same way, e.g.
``git worktree add /tmp/old <commit>`` then ``--root /tmp/old``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _inputs(size: int) -> dict[str, str]:
    """Adversarial texts of ``size`` characters (about; all are ASCII, so also bytes)."""

    def fill(unit: str, head: str = "", tail: str = "") -> str:
        count = max(1, (size - len(head) - len(tail)) // len(unit))
        return head + unit * count + tail

    return {
        "digit-tuple (1,111!": fill("1", "(1,", "!"),
        "digit run": fill("1"),
        "nested brackets": "(" * (size // 4) + "[" * (size // 4) + "]" * (size // 4) + "),",
        "comma list": fill("1, ", "[", "x"),
        "key=value": fill("a="),
        "dotted number": fill("1.", "x"),
        "spaces": fill(" ", "<", "x"),
        "long path": fill("/dir", "", "/x.py"),
        "short lines": fill("ERROR x=1\n"),
    }


def _functions() -> dict[str, Callable[[str], object]]:
    from ingest import grouping
    from ingest.parsing.java_stacktrace import parse_java_stacktrace
    from ingest.parsing.logs import parse_logs
    from ingest.parsing.python_traceback import parse_python_traceback
    from ingest.parsing.shapes import extract_shape_diff
    from ingest.parsing.stacktrace import parse_stacktrace
    from ingest.scrubbing import scrub_text
    from rca.corpus import files as corpus
    from rca.retrieval import signals
    from rca.retrieval.tokens import tokenize
    from rca.suggestion.prompts import untrusted

    runbooks = corpus.load_directory(corpus.bundled_runbook_dir())
    return {
        "grouping.normalise_message": grouping.normalise_message,
        "grouping.fingerprint": lambda t: grouping.fingerprint("ValueError", [], t),
        "parsing.parse_stacktrace": parse_stacktrace,
        "parsing.python_traceback": parse_python_traceback,
        "parsing.java_stacktrace": parse_java_stacktrace,
        "parsing.parse_logs": parse_logs,
        "parsing.extract_shape_diff": extract_shape_diff,
        "signals.normalise_message": signals.normalise_message,
        "tokens.tokenize": tokenize,
        "corpus.match_signals (all)": lambda t: [corpus.match_signals(r, t) for r in runbooks],
        "scrubbing.scrub_text": scrub_text,
        "prompts.untrusted": lambda t: untrusted("message", t),
    }


def _child(name: str, text: str, conn) -> None:  # noqa: ANN001 - a multiprocessing pipe end
    function = _functions()[name]
    function(text[:64])  # compile inline patterns and import lazily loaded modules first
    best = float("inf")
    for _ in range(3 if len(text) <= 65536 else 1):  # the best of three where it is cheap
        started = time.perf_counter()
        function(text)
        best = min(best, time.perf_counter() - started)
    conn.send(best)


def _measure(name: str, text: str, timeout: float) -> float | None:
    """Seconds for one call in a forked child, or None when it ran past ``timeout``."""
    parent, child = multiprocessing.Pipe(duplex=False)
    process = multiprocessing.get_context("fork").Process(target=_child, args=(name, text, child))
    process.start()
    ready = parent.poll(timeout)
    if not ready:
        process.kill()
        process.join()
        return None
    seconds = parent.recv()
    process.join()
    return float(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=str(REPO), help="checkout whose code is measured")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per call")
    parser.add_argument("--sizes", default="1024,65536,1048576")
    parser.add_argument("--only", default="", help="comma-separated function names")
    args = parser.parse_args()

    sys.path.insert(0, str(Path(args.root).resolve()))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-" + "x" * 40)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    names = list(_functions())  # loaded once here, so children fork with modules imported
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")]

    print(f"code: {Path(args.root).resolve()}   timeout per call: {args.timeout:g} s")
    header = "".join(f"{f'{s // 1024} KB':>22}" for s in sizes)
    print(f"{'worst ms per KB':32}{header}")
    for name in names:
        cells = []
        # Lower bounds (ms per KB) of inputs that ran past the timeout; a larger input of
        # the same kind is not run again and keeps the bound measured on the smaller one.
        timed_out: dict[str, float] = {}
        for size in sizes:
            worst, worst_input = 0.0, ""
            for label, text in _inputs(size).items():
                seconds = None if label in timed_out else _measure(name, text, args.timeout)
                if seconds is None:
                    bound = timed_out.setdefault(label, args.timeout * 1000 / (len(text) / 1024))
                    worst, worst_input = max((worst, worst_input), (bound, ">" + label))
                    continue
                per_kb = seconds * 1000 / (len(text) / 1024)
                if per_kb > worst:
                    worst, worst_input = per_kb, label
            mark = ">" if worst_input.startswith(">") else ""
            cells.append(f"{mark}{worst:8.3f} {worst_input.lstrip('>')[:12]:>12}")
        print(f"{name:32}" + "".join(f"{c:>22}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
