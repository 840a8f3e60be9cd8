"""Cost of making untrusted text inert: ms per KB on hostile inputs, as they grow.

Three functions read attacker-reachable text on every page view or message: the inert
Markdown renderer (`webapp.markdown.render_inline`, input cut at MAX_INLINE_CHARS), the
URL finder of the validator (`rca.suggestion.validation.urls_in`, input cut at MAX_SCAN_CHARS), and
Slack's defanging (`rca.notify.slack.payloads.defang`, uncut). Flat ms per KB as the input grows
means linear; the cuts bound the absolute figure.

    .venv/bin/python bench/untrusted_text.py
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")
os.environ.setdefault("RCA_DATA_DIR", str(REPO / ".data" / "bench"))

import django  # noqa: E402

django.setup()

from rca.notify.slack.payloads import defang  # noqa: E402
from rca.suggestion.validation import urls_in  # noqa: E402
from webapp.markdown import render_inline  # noqa: E402

SIZES_KIB = (1, 4, 16, 64)
HOSTILE: dict[str, Callable[[int], str]] = {
    "[[[[": lambda n: "[" * n,
    "[a](": lambda n: "[a](" * (n // 4),
    "*a**": lambda n: "*a**" * (n // 4),
    "_a_a": lambda n: "_a" * (n // 2),
    "`a``": lambda n: "`a``" * (n // 4),
    "<<<<": lambda n: "<" * n,
    "![![": lambda n: "![" * (n // 2),
    "a.a.a.": lambda n: "a." * (n // 2),
    "a1.a1.comx": lambda n: "a1." * (n // 3) + "comx",
    "aaaa:": lambda n: "a" * n + ":",
    "http://http://": lambda n: "http://" * (n // 7),
    "www.www.": lambda n: "www." * (n // 4),
    "a+a+://": lambda n: ("a" * 29 + "+") * (n // 30) + "://",
}
FUNCTIONS: dict[str, Callable[[str], object]] = {
    "render_inline": render_inline,
    "urls_in": urls_in,
    "defang": defang,
}


def ms_per_kib(function: Callable[[str], object], text: str) -> float:
    rounds = max(1, 200_000 // max(len(text), 1))
    start = time.perf_counter()
    for _ in range(rounds):
        function(text)
    return (time.perf_counter() - start) / rounds * 1000 / (len(text) / 1024)


def main() -> None:
    print(f"{'function':<14} {'input':<16}" + "".join(f"{k:>9} KiB" for k in SIZES_KIB))
    for fname, function in FUNCTIONS.items():
        worst = 0.0
        for name, build in HOSTILE.items():
            figures = [ms_per_kib(function, build(k * 1024)) for k in SIZES_KIB]
            worst = max(worst, *figures)
            print(f"{fname:<14} {name:<16}" + "".join(f"{f:>13.3f}" for f in figures))
        print(f"{fname:<14} {'WORST ms/KB':<16}{worst:>13.3f}\n")


if __name__ == "__main__":
    main()
