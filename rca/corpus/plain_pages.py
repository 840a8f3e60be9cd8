"""What a plain Markdown page gets without front matter: its slug from its file name, its
title from its first heading, and its text from its bytes.

A team's folder is not ours, so the patterns over its lines are RE2 (linear time).
"""

from __future__ import annotations

import hashlib
import unicodedata
from pathlib import Path

from ingest.linear_regex import compile as linear
from rca.corpus.runbook import RunbookError

__all__ = ["TITLE_MAX", "first_heading", "read_text", "slugify"]

TITLE_MAX = 255  # the stored column's width
_NON_SLUG_RE = linear(r"[^a-z0-9]+")
_FENCE_RE = linear(r"^[ \t]*(```|~~~)")
_ATX_RE = linear(r"^ {0,3}#{1,6}(?:[ \t]+(?P<text>[^\n]*))?$")
_SETEXT_RE = linear(r"^ {0,3}(?:=+|-+)[ \t]*$")
_LIST_OR_QUOTE_RE = linear(r"^ {0,3}(?:[-*+>]|\d{1,9}[.)])(?:[ \t]|$)")


def slugify(name: str) -> str:
    """A slug for a runbook without one: its file name (or title) in lowercase ASCII words
    joined by '-', at most 80 characters; a name with no such letters gets a hash of it."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    slug = _NON_SLUG_RE.sub("-", folded.lower()).strip("-")[:80].strip("-")
    return slug or "runbook-" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:10]


def first_heading(body: str) -> str:
    """The text of the body's first heading (ATX ``#`` or setext ``===``/``---``), outside
    fenced code; "" when there is none."""
    in_fence = False
    previous = ""
    for line in body.split("\n"):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
            previous = ""
            continue
        if in_fence:
            continue
        atx = _ATX_RE.match(line)
        if atx and (atx.group("text") or "").strip():
            return _clean_title(atx.group("text"))
        if previous.strip() and _SETEXT_RE.match(line) and not _LIST_OR_QUOTE_RE.match(previous):
            return _clean_title(previous)
        previous = line
    return ""


def _clean_title(text: str) -> str:
    text = text.strip()
    unclosed = text.rstrip("#")
    if unclosed != text and (not unclosed or unclosed[-1] in " \t"):
        text = unclosed  # the optional closing sequence of an ATX heading: "# Title ##"
    return " ".join(text.split())[:TITLE_MAX]


def read_text(path: Path) -> str:
    """A runbook file's text: UTF-8 (a BOM allowed) or UTF-16 with its BOM. Anything else is
    refused naming the file and the first bad byte, rather than guessed at."""
    data = path.read_bytes()
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise RunbookError(str(path), "encoding", f"invalid UTF-16: {exc.reason}") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RunbookError(
            str(path),
            "encoding",
            f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save the file as UTF-8",
        ) from exc
