"""Remove the terminal colour codes IPython and Jupyter put around every traceback part.

Tracebacks copied from a notebook's saved output, a kernel log or ``jupyter nbconvert``
keep IPython's escape sequences (``\\x1b[0;31m``), and pages that render the text often
drop the escape byte itself but keep the rest (``[0;31m ... [0m``). Either way the codes
sit inside frame lines and would hide them from the parsers, so they go first.
"""

from __future__ import annotations

from ingest.linear_regex import compile as linear

# CSI (colours, cursor moves), OSC (window titles, hyperlinks) and the two-byte escapes.
_ESCAPE = linear(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
# The same colour codes once a page has dropped the escape byte: only when the text also
# holds the reset ``[0m`` that closes each coloured part, so ``[1m`` in prose survives.
_BARE_COLOUR = linear(r"\[[0-9]{1,3}(?:;[0-9]{1,3})*m")
_BARE_RESET = "[0m"


def strip_ansi(text: str) -> str:
    """``text`` without terminal escape sequences (unchanged when it holds none)."""
    if "\x1b" in text:
        text = _ESCAPE.sub("", text)
    if _BARE_RESET in text:
        text = _BARE_COLOUR.sub("", text)
    return text
