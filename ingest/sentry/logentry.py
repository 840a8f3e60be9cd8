"""The message of a Sentry event, with ``logentry.params`` filled in as Sentry fills them.

SDKs send a log call's template and its arguments apart (``"Error in %s: %s"`` with
``params``) so that the server can group by the template; what a person reads is the
formatted text. Relay (Sentry's ingestion) formats ``%``-style templates (positional
``%s``/``%d``/... or named ``%(key)s``) when the template has a ``%``, otherwise ``{0}``,
``{}`` and ``{key}`` placeholders; a template it cannot fill stays as sent. A
``formatted`` the SDK already wrote always wins, even when it still shows placeholders.
"""

from __future__ import annotations

import re
from typing import Any

from ingest.sentry.values import JsonObject, as_repr, text

MAX_MESSAGE = 65_536
# One placeholder each; bounded widths keep "%999999999s" from building huge strings.
_PERCENT = re.compile(
    r"%(?:\((?P<key>[^()]{0,100})\))?(?P<flags>[#0 +\-]{0,5})(?P<width>\d{0,3})"
    r"(?:\.(?P<precision>\d{0,3}))?[hlL]?(?P<conv>[diouxXeEfFgGcrsa%])"
)
_CURLY = re.compile(r"\{(?P<key>\w{0,100})\}")


class _Unfilled(Exception):
    """The template and its params do not fit together: Sentry then keeps the template."""


def _arg(params: Any, key: str | None, position: int) -> Any:
    if key is None or key == "":
        if not isinstance(params, list) or position >= len(params):
            raise _Unfilled
        return params[position]
    if isinstance(params, dict) and key in params:
        return params[key]
    if isinstance(params, list) and key.isdigit() and int(key) < len(params):
        return params[int(key)]
    raise _Unfilled


def _percent_one(match: re.Match[str], value: Any) -> str:
    conv = match["conv"]
    spec = f"%{match['flags']}{match['width']}"
    if match["precision"] is not None:
        spec += f".{match['precision']}"
    if conv in "sra":
        shown = value if isinstance(value, str) else as_repr(value)
        if conv != "s":
            shown = repr(shown) if isinstance(value, str) else shown
        return (spec + "s") % shown
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Unfilled  # Python's own % refuses "%d" % "x" too
    try:
        return (spec + conv) % (int(value) if conv in "diouxXc" else value)
    except (TypeError, ValueError, OverflowError):
        raise _Unfilled from None


def _fill(template: str, params: Any, pattern: re.Pattern[str], percent: bool) -> str:
    out: list[str] = []
    size, position, end = 0, 0, 0
    for match in pattern.finditer(template):
        out.append(template[end : match.start()])
        if percent and match["conv"] == "%":
            piece = "%"
        else:
            value = _arg(params, match["key"], position)
            if not match["key"]:
                position += 1
            piece = (
                _percent_one(match, value)
                if percent
                else (value if isinstance(value, str) else as_repr(value))
            )
        out.append(piece)
        end = match.end()
        size += len(out[-1]) + len(out[-2])
        if size > MAX_MESSAGE:  # a named param repeated many times: stop early
            break
    else:
        out.append(template[end:])
    return "".join(out)[:MAX_MESSAGE]


def format_template(template: str, params: Any) -> str | None:
    """``template`` filled with ``params`` as Relay fills them; None when they do not fit."""
    if params is None or params == [] or params == {}:
        return None
    try:
        if "%" in template:
            return _fill(template, params, _PERCENT, percent=True)
        if "{" in template:
            return _fill(template, params, _CURLY, percent=False)
    except _Unfilled:
        return None
    return None


def _entry_text(entry: Any) -> str:
    """One ``logentry`` (or legacy ``message`` object): formatted, else filled, else template."""
    if not isinstance(entry, dict):
        return text(entry, MAX_MESSAGE)
    formatted = text(entry.get("formatted"), MAX_MESSAGE)
    if formatted.strip():
        return formatted
    template = text(entry.get("message"), MAX_MESSAGE)
    return format_template(template, entry.get("params")) or template


def event_message(event: JsonObject) -> str:
    """What the event says in words, outside its exceptions: logentry first, then message."""
    for candidate in (event.get("logentry"), event.get("message")):
        found = _entry_text(candidate)
        if found.strip():
            return found
    return ""


def event_template(event: JsonObject) -> str:
    """The template of a log message whose shown text differs from it; "" otherwise.

    Sentry groups message events by this template ("Error in %s"), not by the filled text,
    so every "Error in <job>" is one issue whatever the job.
    """
    for candidate in (event.get("logentry"), event.get("message")):
        if isinstance(candidate, dict):
            template = text(candidate.get("message"), MAX_MESSAGE)
            if template.strip() and template != _entry_text(candidate):
                return template
        if _entry_text(candidate).strip():
            return ""
    return ""
