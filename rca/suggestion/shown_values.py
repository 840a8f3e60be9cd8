"""Whether an option the incident shows is already at the value an answer gives it.

"Set `use_cache=False`" repeats an incident showing ``use_cache=false``; "set `--tp 2`" one
showing ``--tp 2.0``; "add `a`, `b` to `providers`" one showing ``providers=[a, b]``. The
value comparison (switch words, lists in order, numbers) is shared by every premise check that
asks "already set?" (:mod:`.premises`).
"""

from __future__ import annotations

from rca.suggestion.shown_options import list_items

__all__ = ["same_value"]

_ON = frozenset({"", "true", "1", "on", "yes", "enabled", "enable"})
_OFF = frozenset({"false", "0", "off", "no", "disabled", "disable"})


def same_value(shown: str, given: str) -> bool:
    """Whether an option shown with ``shown`` is already at the value ``given``."""
    a, b = shown.strip().strip("`'\"").lower(), given.strip().strip("`'\"").lower()
    if a == b or (a in _ON and b in _ON) or (a in _OFF and b in _OFF):
        return True
    shown_items, given_items = list_items(a), list_items(b)
    if len(shown_items) > 1 or len(given_items) > 1 or a[:1] == "[" or b[:1] == "[":
        return shown_items == given_items  # the same list, in the same order
    try:
        return float(a) == float(b)
    except ValueError:
        return False
