"""Parse Python tracebacks, chained ones included, from text as users paste or log it.

Real tracebacks arrive cut short, prefixed by log formatters or ``[rank0]:`` markers, and
mixed with progress bars, so this is a forgiving line scanner rather than a grammar:
whatever it recognises it keeps, whatever it does not it skips. IPython's own frame lines
(Jupyter, Colab) are read too, by :mod:`ingest.parsing.notebook_frames`.
"""

from __future__ import annotations

from typing import Literal

from ingest.linear_regex import compile as linear
from ingest.parsing.ansi import strip_ansi
from ingest.parsing.frames import MAX_FRAMES, Frame, ParsedException, make_frame
from ingest.parsing.notebook_frames import (
    arrow_line,
    is_source_listing,
    lone_arrow,
    notebook_frame,
)

MAX_EXCEPTIONS = 20
MAX_MESSAGE = 4000
MAX_MESSAGE_LINES = 50

# The second form is printed by torch.autograd anomaly detection before the forward stack.
# These three are fixed sentences: a substring test finds exactly what a search would.
_HEADERS = ("Traceback (most recent call last)", "Traceback of forward call that caused the error")
_CAUSE = "The above exception was the direct cause of the following exception"
_CONTEXT = "During handling of the above exception, another exception occurred"
# Each pattern below runs only on lines holding a word it needs: one RE2 call costs ~2 us,
# a substring test ~50 ns, and most lines of a long log-like text match nothing.
_EXCEPTION_WORDS = ("Error", "Exception", "Exit", "Interrupt", "Warning", "Fault")
_FILE = linear(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+)(?:, in (?P<func>.+?))?\s*$')
_MARKER = linear(r"^\s*[~^]+[\s~^]*$")
_REPEATED = linear(r"^\s*\[Previous line repeated \d+ more times?\]\s*$")
# ``[rank3]:`` (torch.distributed) and ``|`` (exception groups) prefix every line.
_LINE_PREFIX = linear(r"^(?:\[(?:rank|default)\d*\]:\s?)|^\s*\|\s?")
_TYPE = r"[A-Za-z_][\w.]*"
_EXCEPTION_LINE = linear(rf"^(?P<type>{_TYPE})(?::[ \t]*(?P<msg>.*))?$")
# Without a traceback around it, only a name that looks like an exception counts.
_LOOSE_EXCEPTION_LINE = linear(
    rf"^(?:.*?\s)?(?P<type>{_TYPE}(?:Error|Exception|Exit|Interrupt|Warning|Fault))"
    r"(?::[ \t]*(?P<msg>.*))?$"
)
_SITE_PACKAGES = linear(r"[\\/](?:site|dist)-packages[\\/](?P<rest>.+?)\.pyc?$")

Relation = Literal["cause", "context"] | None


def module_from_path(filename: str) -> str:
    """Derive a dotted module name for installed libraries, where the path says it reliably."""
    match = _SITE_PACKAGES.search(filename)
    if not match:
        return ""
    parts = str(match.group("rest")).replace("\\", "/").split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if not parts or not all(part.isidentifier() for part in parts):
        return ""
    return ".".join(parts)


class _Block:
    """One exception being assembled: its frames, then its type and message lines."""

    def __init__(self, relation: Relation = None) -> None:
        self.relation = relation
        self.frames: list[Frame] = []
        self.type = ""
        self.message_lines: list[str] = []
        self.has_exception_line = False
        self.expect_context = False

    def is_empty(self) -> bool:
        return not self.frames and not self.has_exception_line

    def result(self) -> ParsedException:
        message = "\n".join(self.message_lines).strip()[:MAX_MESSAGE]
        return ParsedException(
            type=self.type[:200], message=message, frames=self.frames, relation=self.relation
        )


def _clean(line: str) -> str:
    line = line.rstrip("\r\n")
    if not line.startswith("[") and not line.lstrip().startswith("|"):
        return line
    return _LINE_PREFIX.sub("", line, count=1)


def _listing_line(block: _Block, line: str) -> bool:
    """Consume a line of an IPython frame's source listing: the arrow line is the frame's
    code (and its line number, which classic IPython prints only there)."""
    arrow = arrow_line(line)
    if arrow is None:
        return is_source_listing(line)
    if block.frames:
        frame = block.frames[-1]
        if not frame["context_line"]:
            frame["context_line"] = arrow.code[:1000]
        if frame["lineno"] is None:
            frame["lineno"] = arrow.lineno
    return True


def parse_python_traceback(text: str) -> list[ParsedException]:
    """Return the exceptions of a Python traceback, oldest first, frames caller to callee."""
    if not isinstance(text, str) or not text:
        return []
    results: list[ParsedException] = []
    block = _Block()
    in_message = False
    # Inside an IPython frame's numbered source listing, which runs until the next frame.
    in_listing = False

    def finish(next_relation: Relation = None) -> _Block:
        if not block.is_empty() and len(results) < MAX_EXCEPTIONS:
            results.append(block.result())
        return _Block(next_relation)

    for raw in strip_ansi(text).splitlines():
        line = _clean(raw)
        stripped = line.strip()
        if _CAUSE in line or _CONTEXT in line:
            block = finish("cause" if _CAUSE in line else "context")
            in_message = False
            continue
        if any(header in line for header in _HEADERS):
            if block.has_exception_line:
                block = finish()
            in_message = in_listing = False
            continue
        file_match = _FILE.match(line) if 'File "' in line else None
        if file_match:
            if block.has_exception_line:
                block = finish()
            in_message = in_listing = False
            if len(block.frames) < MAX_FRAMES:
                filename = file_match.group("file")
                block.frames.append(
                    make_frame(
                        filename=filename,
                        function=(file_match.group("func") or "").strip(),
                        lineno=int(file_match.group("line")[:9]),
                        module=module_from_path(filename),
                    )
                )
                block.expect_context = True
            continue
        shown = notebook_frame(line) if not file_match and stripped else None
        if shown:
            if block.has_exception_line:
                block = finish()
            in_message, in_listing = False, True
            if len(block.frames) < MAX_FRAMES:
                block.frames.append(
                    make_frame(
                        filename=shown.filename,
                        function=shown.function,
                        lineno=shown.lineno,
                        module=module_from_path(shown.filename),
                    )
                )
            block.expect_context = False
            continue
        if in_listing and _listing_line(block, line):
            continue
        arrow = lone_arrow(line) if not in_message and not in_listing else None
        if arrow:
            # Only the arrow line was pasted: a frame of the user's code, file unknown.
            if block.has_exception_line:
                block = finish()
            in_listing = True
            if len(block.frames) < MAX_FRAMES:
                block.frames.append(make_frame(lineno=arrow.lineno, context_line=arrow.code[:1000]))
            block.expect_context = False
            continue
        if in_message:
            if stripped and len(block.message_lines) < MAX_MESSAGE_LINES:
                block.message_lines.append(line)
                continue
            in_message = False
            continue
        if not stripped or (
            ("[Previous line repeated" in line and _REPEATED.match(line))
            or (("~" in line or "^" in line) and _MARKER.match(line))
        ):
            continue
        indented = line[:1].isspace()
        if indented and block.expect_context:
            block.frames[-1]["context_line"] = stripped[:1000]
            block.expect_context = False
            continue
        match = None
        if any(word in stripped for word in _EXCEPTION_WORDS):
            match = _LOOSE_EXCEPTION_LINE.match(stripped)
        if not match and block.frames and not indented:
            match = _EXCEPTION_LINE.match(stripped)
        if not match:
            continue
        if block.has_exception_line:
            block = finish()
        block.type = match.group("type")
        block.message_lines = [match.group("msg") or ""]
        block.has_exception_line = True
        block.expect_context = False
        in_message, in_listing = True, False
    finish()
    return results
