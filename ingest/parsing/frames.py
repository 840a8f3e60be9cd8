"""The frame and exception shapes every stack parser returns, and the in-app test.

Grouping and the suggestion validator only care about the user's own code, so each frame
carries an ``in_app`` flag decided here, in one place, for Python and Java alike.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from ingest.linear_regex import compile as linear

MAX_FRAMES = 250
MAX_FIELD = 1000


class Frame(TypedDict):
    filename: str
    function: str
    lineno: int | None
    module: str
    in_app: bool
    context_line: str


class ParsedException(TypedDict):
    """One exception of a chain; lists of these run oldest (root cause) first, like Sentry.

    ``relation`` tells how the previous (older) exception of the list led to this one:
    ``"cause"`` for an explicit cause (``raise ... from``, Java's ``Caused by:``),
    ``"context"`` for an exception raised while the previous one was being handled,
    ``None`` for the first one or when nothing links them.
    """

    type: str
    message: str
    frames: list[Frame]
    relation: Literal["cause", "context"] | None


_LIBRARY_PATH = linear(
    "|".join(
        [
            r"(?:^|/)(?:site|dist)-packages(?:/|$)",  # pip and distro installs
            r"/lib(?:64)?/python\d+(?:\.\d+)?/",  # the stdlib of any interpreter, venv or conda
            r"/python3\d*/lib/",  # the stdlib on Windows
            r"^<frozen\b",  # importlib bootstrap
            r"^<(?:string|stdin)>$",
        ]
    ),
    ignore_case=True,
)
_LIBRARY_MODULE = linear(r"^(?:java|javax|jdk|sun|com\.sun|kotlin|scala|jakarta)\.|^<frozen\b")


def is_in_app(filename: str, module: str = "") -> bool:
    """Tell whether a frame is the user's own code rather than a library or the runtime.

    Library frames are identical across unrelated bugs, so they would make grouping and
    culprits meaningless; anything we cannot place is assumed to be the user's code.
    """
    filename = filename or ""
    module = module or ""
    if filename and _LIBRARY_PATH.search(filename.replace("\\", "/")):
        return False
    return not (module and _LIBRARY_MODULE.search(module))


def make_frame(
    filename: str = "",
    function: str = "",
    lineno: int | None = None,
    module: str = "",
    context_line: str = "",
    in_app: bool | None = None,
) -> Frame:
    """Build a frame with bounded fields, deciding ``in_app`` when the source did not."""
    filename = filename[:MAX_FIELD]
    module = module[:MAX_FIELD]
    return Frame(
        filename=filename,
        function=function[:MAX_FIELD],
        lineno=lineno,
        module=module,
        in_app=is_in_app(filename, module) if in_app is None else in_app,
        context_line=context_line.strip()[:MAX_FIELD],
    )


def _first(item: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if key in item and item[key] is not None:
            return item[key]
    return None


def _text(value: Any) -> str:
    if value is None or isinstance(value, (dict, list, tuple, set)):
        return ""
    return str(value)


def _lineno(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdecimal() and len(value.strip()) <= 9:
        return int(value.strip())
    return None


def _flag(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "1", "yes"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"false", "0", "no"}:
        return False
    return None


def frames_from_json(items: Any) -> list[Frame]:
    """Normalise frames sent as JSON objects (snake_case, camelCase or Sentry's names).

    Clients are inconsistent, so odd entries are skipped or coerced rather than rejected:
    one broken frame must not cost us the rest of the stack.
    """
    if not isinstance(items, (list, tuple)):
        return []
    frames: list[Frame] = []
    for item in items[:MAX_FRAMES]:
        if not isinstance(item, dict):
            continue
        filename = _text(_first(item, "filename", "fileName", "file", "abs_path", "absPath"))
        function = _text(_first(item, "function", "functionName", "func", "method", "methodName"))
        module = _text(_first(item, "module", "className", "class", "package"))
        context = _text(_first(item, "context_line", "contextLine", "code", "source"))
        lineno = _lineno(_first(item, "lineno", "lineNo", "lineNumber", "line_number"))
        line = item.get("line")
        if lineno is None:
            lineno = _lineno(line)
        if not context and isinstance(line, str) and _lineno(line) is None:
            context = line
        in_app = _flag(_first(item, "in_app", "inApp"))
        if not (filename or function or module):
            continue
        frames.append(make_frame(filename, function, lineno, module, context, in_app))
    return frames
