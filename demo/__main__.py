"""`python -m demo`: run every demo program, print the incidents they raised as JSON.

Each program runs in this one process, one after another (torch is imported once); a
program that is skipped or does not fail is named on stderr, and stdout carries only the
JSON list, so the caller can post it as it is.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import json
import sys
from typing import Any

from demo import report
from demo.programs import PROGRAMS


def _missing(requires: tuple[str, ...]) -> list[str]:
    return [name for name in requires if importlib.util.find_spec(name) is None]


def run(names: list[str]) -> list[dict[str, Any]]:
    incidents = []
    for name in names:
        program = importlib.import_module(f"demo.programs.{name}")
        missing = _missing(getattr(program, "REQUIRES", ()))
        if missing:
            print(f"demo: {name} skipped ({', '.join(missing)} not installed)", file=sys.stderr)
            continue
        with report.collected_logs() as logs, contextlib.redirect_stdout(sys.stderr):
            try:
                program.main()
            except Exception as exc:  # the point of the program: report what it raised
                incidents.append(report.incident(name, program, exc, logs))
                continue
        print(f"demo: {name} did not fail", file=sys.stderr)
    return incidents


def main() -> None:
    names = sys.argv[1:] or PROGRAMS
    json.dump(run(names), sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
