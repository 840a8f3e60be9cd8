"""Frame lines of the tracebacks IPython prints: Jupyter, JupyterLab, Colab and the shell.

IPython's own formatter (``IPython.core.ultratb``) does not print CPython's
``File "x.py", line N, in f``. Its verbose mode names a frame on one line and then shows
the source around it, numbered, with an arrow (``debugger.make_arrow``: dashes and ``>``
padding the number to seven columns) on the line that ran:

- IPython < 8: ``/path/x.py in f(a, b)``, ``<ipython-input-5-abc> in <module>()``; the line
  number is only on the arrow (``---> 82     raise RuntimeError(msg)``).
- Colab wraps that path in a Markdown link to its file viewer:
  ``[/usr/.../x.py](https://localhost:8080/...) in f()``. Only the path is kept; the
  link's address is a viewer URL, never a frame's file, and is dropped here.
- A paste may hold only the arrow line, without the header above it: it is read as a frame
  of the user's code with no file or function (:func:`lone_arrow`).
- IPython >= 8: ``File ~/x.py:123, in f(a)`` and, for a notebook cell, ``Cell In[3], line 7``
  (8.0: ``Input In [3], in <cell line: 7>()``). ``in f`` is left out exactly when the
  frame is module level, so such a frame's function is ``<module>``, as CPython names it.

Everything here reads one line at a time and is linear in it (RE2), so a hostile line
costs its length and no more.
"""

from __future__ import annotations

from typing import NamedTuple

from ingest.linear_regex import LinearMatch
from ingest.linear_regex import compile as linear

# A function as IPython prints it: a dotted name or a ``<...>`` label (``<module>``,
# ``<lambda>``, ``<cell line: 3>``), then its arguments, which are not kept.
_FUNC = r"(?P<func><[^<>\n]{1,200}>|[A-Za-z_][\w.]*)(?:\(.*)?"
# Where a path starts once IPython has printed it (absolute, ``~``-compressed, Windows,
# UNC or relative to the cwd); a pseudo-file is ``<...>``, possibly after a directory.
_START = r"(?:~|/|\\\\|[A-Za-z]:[\\/]|\.{1,2}[\\/])"
_CLASSIC_FILE = rf"(?:{_START}[^\n]*?\.pyx?|(?:{_START}[^\n]*?[\\/])?<[^<>\n]{{1,300}}>)"
_CLASSIC = linear(rf"^\s*(?P<file>{_CLASSIC_FILE}) in {_FUNC}\s*$")
_COLAB = linear(rf"^\s*\[(?P<file>{_CLASSIC_FILE})\]\([^()\n]*\) in {_FUNC}\s*$")
_FILE = linear(rf"^\s*File (?P<file>(?:{_START}|<)[^\n]*?):(?P<line>\d+)(?:,? in {_FUNC})?\s*$")
_CELL = linear(
    r"^\s*(?P<label>Cell|Input) In ?\[(?P<cell>\d{1,9})\]"
    rf"(?:, line (?P<line>\d+))?(?:,? in {_FUNC})?\s*$"
)
# ``make_arrow`` pads to seven columns: ``----> 1``, ``-> 1695``, ``> 12345``.
_ARROW = linear(r"^\s*-*>\s*(?P<line>\d+)(?:\s(?P<code>.*))?$")
# The arrow alone, with its source, when no frame header came before it (a paste of just
# the line that ran: ``----> 4 accelerator = Accelerator(fp16=True)``): dashes required, so
# a quoted ``> 12`` is not read as one.
_LONE_ARROW = linear(r"^\s*-{1,8}>\s*(?P<line>\d+)\s+(?P<code>\S.*)$")
_NUMBERED = linear(r"^\s*\d+(?:\s.*)?$")
_MAX_LINENO_DIGITS = 9


class NotebookFrame(NamedTuple):
    filename: str
    function: str
    lineno: int | None


class Arrow(NamedTuple):
    lineno: int | None
    code: str


def _lineno(text: str | None) -> int | None:
    return int(text) if text and len(text) <= _MAX_LINENO_DIGITS else None


def _function(match: LinearMatch) -> str:
    func = match.group("func")
    return str(func).strip() if func else "<module>"


def notebook_frame(line: str) -> NotebookFrame | None:
    """The frame a header line of an IPython traceback names, else None."""
    stripped = line.lstrip()
    if stripped.startswith("File "):
        match = _FILE.match(line)
        if match:
            return NotebookFrame(
                match.group("file"), _function(match), _lineno(match.group("line"))
            )
        return None
    if "In[" in line or "In [" in line:
        match = _CELL.match(line)
        if match:
            label = "Cell In" if match.group("label") == "Cell" else "Input In "
            return NotebookFrame(
                f"{label}[{match.group('cell')}]", _function(match), _lineno(match.group("line"))
            )
    if " in " not in line:
        return None
    if stripped.startswith("[") and "](" in line:
        match = _COLAB.match(line)
    elif ".py" in line or ">" in line:
        match = _CLASSIC.match(line)
    else:
        return None
    if not match:
        return None
    return NotebookFrame(match.group("file").strip(), _function(match), None)


def arrow_line(line: str) -> Arrow | None:
    """The line IPython marks as running (``---> 82     raise RuntimeError(msg)``), else None."""
    if ">" not in line:
        return None
    match = _ARROW.match(line)
    if not match:
        return None
    return Arrow(_lineno(match.group("line")), (match.group("code") or "").strip())


def lone_arrow(line: str) -> Arrow | None:
    """An arrow line with its source that no frame header precedes, else None: IPython
    prints one under every frame header, so it stands for a frame whose file is not shown
    (a notebook cell, as a rule). Stricter than :func:`arrow_line`: dashes and code."""
    if "->" not in line:
        return None
    match = _LONE_ARROW.match(line)
    if not match:
        return None
    return Arrow(_lineno(match.group("line")), match.group("code").strip())


def is_source_listing(line: str) -> bool:
    """A numbered source line around the arrow, or the listing's gap and skip markers."""
    stripped = line.strip()
    if stripped.startswith("(...)") or stripped.startswith("[... skipping"):
        return True
    return stripped[:1].isdigit() and bool(_NUMBERED.match(line))
