"""Typed signals of one incident, and the texts retrieval queries with (pure: no database).

An incident arrives as raw text plus what ingest parsed out of it. Retrieval wants the
parts that identify the *kind* of failure (error type, the message without volatile ids,
which framework raised it, what the shapes disagree on) and none of the parts that only
identify *this* occurrence (addresses, sizes, paths, pids), so the same bug at another
batch size or on another host finds the same runbooks.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field
from typing import Any

from ingest.linear_regex import LinearMatch
from ingest.linear_regex import compile as linear
from ingest.parsing.log_levels import WARNING_AND_ABOVE
from ingest.parsing.shape_ops import op_kind
from rca.retrieval.agreement import incident_frameworks
from rca.retrieval.query import bm25_query, query_parts
from rca.retrieval.signal_needs import incident_text, terms_of
from rca.retrieval.tokens import tokenize
from rca.retrieval.weights import DEFAULT_QUERY_WEIGHTS, QueryWeights

__all__ = ["Signals", "build_signals", "describe_shape_diff", "normalise_message"]

MAX_FRAMES = 5
MAX_LOGS = 5
MAX_LIBRARY_FRAMES = 3
MAX_MESSAGE = 2000
_CONTEXT_KEYS = ("model_id", "quantization", "device", "framework", "dtype")

_PATH = linear(r"(?:[A-Za-z]:)?(?:[\\/][\w.~+@-]+){2,}[\\/]?|\b[\w.-]+\.(?:py|so|cpp|cu|h)\b")
_URL = linear(r"\b(?:https?|s3|gs|file)://\S+")
_PLACEHOLDER = linear(r"<(?:n|hex|path|size|url)>")
_HEX = linear(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{12,}\b")
# A number is not glued to a word or a dot before it nor to a word after it. RE2 has no
# lookaround, so runs of [\w.] that hold a digit but do not start with one are matched (and
# kept) by the ``skip`` branch, and ``_number`` applies both conditions the way re's
# backtracking did.
_NUMBER = linear(r"(?P<num>[-+]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?)|(?P<skip>[\w.]*\d[\w.]*)")
_SIZE = linear(r"\b\d+(?:\.\d+)?\s*(?:[KMGT]i?B|bytes)\b", ignore_case=True)
_PROGRESS = linear(r"[█▏▎▍▌▋▊▉#]{2,}|\d+%\|")
_SPACES = linear(r"[ \t]+")
_LEADING_TYPE = linear(r"^\s*(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit))\s*:\s*")
_SITE_PACKAGES = linear(r"(?:site|dist)-packages[\\/](?P<pkg>[A-Za-z_][\w]*)")


@dataclass
class Signals:
    """What retrieval and the prompt know about an incident, typed and normalised."""

    error_type: str = ""  # as reported, qualified when it was: "torch.OutOfMemoryError"
    error_type_short: str = ""  # "OutOfMemoryError"
    message: str = ""  # raw first MAX_MESSAGE characters, for regex signals
    message_normalised: str = ""  # volatile numbers, hex ids and paths removed
    chained: list[str] = field(default_factory=list)  # earlier exceptions, "Type: message"
    frames: list[str] = field(default_factory=list)  # in-app "file:function", innermost first
    app_code: list[str] = field(default_factory=list)  # in-app source lines, innermost first
    #: Library frames below the user's innermost frame (where the error was raised),
    #: "function source line", innermost first.
    library_frames: list[str] = field(default_factory=list)
    libraries: list[str] = field(default_factory=list)  # packages of library frames
    log_messages: list[str] = field(default_factory=list)  # key log lines, normalised
    error_codes: list[str] = field(default_factory=list)
    shapes: list[str] = field(default_factory=list)  # shape diffs described in words
    context: dict[str, str] = field(default_factory=dict)  # model, quantization, device, ...
    #: Frameworks the incident's code shows (:func:`rca.retrieval.agreement.incident_frameworks`),
    #: sorted: fusion can favour runbooks of the same framework (``FusionWeights.framework``).
    frameworks: list[str] = field(default_factory=list)
    #: The texts the incident may name its setting in (frames, logs, context, tags, ...;
    #: :func:`~rca.retrieval.signal_needs.incident_text`): what a signal's ``needs`` are
    #: checked against. Not stored with the analysis.
    setting_text: str = field(default="", repr=False, compare=False)

    @functools.cached_property
    def setting_terms(self) -> frozenset[str]:
        """The terms of :attr:`setting_text`, read once, when a signal with needs matched."""
        return terms_of(self.setting_text)

    def signal_text(self) -> str:
        """``"error_type: message"`` (raw), the text runbook front-matter regexes match.

        Earlier exceptions of the chain follow on their own lines: the root cause is often
        the first exception, not the one finally raised.
        """
        head = f"{self.error_type}: {self.message}" if self.error_type else self.message
        return "\n".join([head, *self.chained])

    def embedding_text(self) -> str:
        """One paragraph for the sentence embedder: the failure in words, volatile parts out."""
        parts = [f"{self.error_type_short or self.error_type}: {self.message_normalised}"]
        parts.extend(self.shapes)
        if self.libraries:
            parts.append("in " + ", ".join(self.libraries))
        parts.extend(self.log_messages[:2])
        return "\n".join(p for p in parts if p.strip())[:MAX_MESSAGE]

    def bm25_tokens(self) -> list[str]:
        """Code-aware query tokens (:mod:`rca.retrieval.tokens`) of every part of the query,
        most trusted evidence first; unweighted (see :meth:`bm25_query`)."""
        texts = [part.text for part in query_parts(self)]
        return tokenize(_PLACEHOLDER.sub(" ", "\n".join(texts)))

    def bm25_query(self, weights: QueryWeights = DEFAULT_QUERY_WEIGHTS) -> dict[str, float]:
        """Token -> weight, what BM25 ranks with (:func:`rca.retrieval.query.bm25_query`)."""
        return bm25_query(self, weights)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, for ``Analysis.signals`` (without :attr:`setting_text`)."""
        data = asdict(self)
        del data["setting_text"]
        return data


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _number(match: LinearMatch) -> str:
    """`` <n> `` for a number standing on its own, else the text unchanged.

    re tried the longest number first and gave back digits until the next character was
    not a word character: that leaves the number cut before its last ``.`` or ``,``.
    """
    token = match[0]
    if match["num"] is None:
        return token
    text, (start, end) = match.string, match.span()
    sign = ""
    if token[0] in "+-" and start > 0 and (_is_word(text[start - 1]) or text[start - 1] == "."):
        sign, token = token[0], token[1:]  # the number starts after a glued sign
    if end == len(text) or not _is_word(text[end]):
        return f"{sign} <n> "
    mantissa = token.split("e", 1)[0]
    cut = max(mantissa.rfind("."), mantissa.rfind(","))
    return f"{sign} <n> {token[cut:]}" if cut > 0 else sign + token


def normalise_message(text: str) -> str:
    """Drop what varies between occurrences of one bug: paths, hex ids, sizes, numbers."""
    text = _PROGRESS.sub(" ", text)
    text = _URL.sub(" <url> ", text)
    text = _PATH.sub(" <path> ", text)
    text = _HEX.sub(" <hex> ", text)
    text = _SIZE.sub(" <size> ", text)
    text = _NUMBER.sub(_number, text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.splitlines()]
    return "\n".join(line for line in lines if line)[:MAX_MESSAGE]


def _dims(values: list[Any]) -> str:
    return "[" + ", ".join("?" if v is None else str(v) for v in values) + "]"


def _last(values: list[Any]) -> Any:
    return values[-1] if values else None


def describe_shape_diff(diff: dict[str, Any]) -> str:
    """A shape diff in words, e.g. "linear weight expects 512 input features, got 256"."""
    op = op_kind(diff.get("op"))
    expected = list(diff.get("expected") or [])
    actual = list(diff.get("actual") or [])
    tensor = diff.get("tensor") or "tensor"
    if op == "matmul":
        return (
            f"linear weight expects {_last(expected)} input features, got {_last(actual)} "
            f"(matmul inner dimensions disagree)"
        )
    if op == "conv" and len(expected) > 1 and len(actual) > 1:
        return f"conv weight expects {expected[1]} input channels, got {actual[1]}"
    if op == "load_state_dict":
        return (
            f"checkpoint tensor {tensor} has shape {_dims(actual)} "
            f"but the model expects {_dims(expected)} (size mismatch)"
        )
    if op == "sequence_length":
        return f"sequence length {_last(actual)} exceeds the maximum of {_last(expected)} positions"
    if op == "kv_cache":
        return (
            f"max_model_len {_last(actual)} exceeds the {_last(expected)} tokens "
            f"the KV cache can hold"
        )
    if op == "broadcast":
        return (
            f"tensor size {_last(actual)} does not match size {_last(expected)} "
            f"(dimension mismatch)"
        )
    if op == "input" and len(expected) != len(actual):
        return (
            f"layer {tensor} expects input of rank {len(expected)}, got rank {len(actual)} "
            f"with shape {_dims(actual)}"
        )
    return f"{op or 'shape'} {tensor} expects shape {_dims(expected)}, got {_dims(actual)}"


def _get(obj: Any, name: str, default: Any) -> Any:
    value = obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)
    return default if value is None else value


def _library(frame: dict[str, Any]) -> str:
    match = _SITE_PACKAGES.search(str(frame.get("filename") or ""))
    if match:
        return match.group("pkg").lower()
    module = str(frame.get("module") or "")
    return module.split(".")[0].lower() if module and not frame.get("in_app") else ""


def _frame_label(frame: dict[str, Any]) -> str:
    filename = str(frame.get("filename") or "").replace("\\", "/").rsplit("/", 1)[-1]
    return f"{filename or frame.get('module') or '?'}:{frame.get('function') or '?'}"


def _library_frame(frame: dict[str, Any]) -> str:
    """A library frame as evidence: its function (an API name runbooks use, e.g.
    ``load_state_dict``) and source line; the file name says only which package."""
    function = str(frame.get("function") or "").strip("<>")
    return f"{function} {frame.get('context_line') or ''}".strip()


def _unique(items: list[str], limit: int) -> list[str]:
    seen: list[str] = []
    for item in items:
        if item and item not in seen:
            seen.append(item)
    return seen[:limit]


def _split_type(error_type: str, message: str) -> tuple[str, str]:
    """Clients often repeat the type inside the message ("RuntimeError: ..."); take it out,
    and take the type from the message when the client sent none."""
    match = _LEADING_TYPE.match(message)
    if match and (not error_type or match.group("type").split(".")[-1] in error_type):
        return error_type or match.group("type"), message[match.end() :]
    return error_type, message


def build_signals(incident: Any) -> Signals:
    """Signals of an Incident, or of anything with the same attributes (or dict keys):
    ``error_type, message, exceptions, logs, shape_diff, inference_context``."""
    error_type, message = _split_type(
        str(_get(incident, "error_type", "")).strip(), str(_get(incident, "message", ""))
    )
    exceptions = list(_get(incident, "exceptions", []))
    frames = list(exceptions[-1].get("frames") or []) if exceptions else []
    in_app = [f for f in reversed(frames) if f.get("in_app")]
    libraries = [_library(f) for f in reversed(frames) if not f.get("in_app")]
    below_app = next((i for i, f in enumerate(reversed(frames)) if f.get("in_app")), len(frames))
    raised_in = list(reversed(frames))[:below_app]

    chained = []
    for exc in exceptions[:-1]:
        text = f"{exc.get('type') or ''}: {exc.get('message') or ''}".strip(": ")
        if text:
            chained.append(text[:500])

    logs = list(_get(incident, "logs", []))
    # Warnings count here (a fallback or a retry often names the cause); the prompt, which
    # has less room, keeps ERROR and above (rca/suggestion/prompts.py).
    key_logs = [
        entry
        for entry in logs
        if isinstance(entry, dict)
        and (entry.get("level") is None or entry.get("level") in WARNING_AND_ABOVE)
    ]
    log_messages = [
        normalise_message(str(e.get("message") or ""))[:300] for e in reversed(key_logs)
    ]
    error_codes = [str(e.get("error_code")) for e in logs if isinstance(e, dict)]

    context_raw = _get(incident, "inference_context", {})
    context = {
        key: str(context_raw[key])[:200]
        for key in _CONTEXT_KEYS
        if isinstance(context_raw, dict) and context_raw.get(key) not in (None, "")
    }

    frameworks = incident_frameworks(
        error_type,
        message,
        [frame for exc in exceptions for frame in (exc.get("frames") or [])],
        context_raw if isinstance(context_raw, dict) else None,
        logs,
    )
    return Signals(
        error_type=error_type,
        error_type_short=error_type.split(".")[-1],
        message=message[:MAX_MESSAGE],
        message_normalised=normalise_message(message),
        chained=chained,
        frames=_unique([_frame_label(f) for f in in_app], MAX_FRAMES),
        app_code=_unique([str(f.get("context_line") or "") for f in in_app], MAX_FRAMES),
        library_frames=_unique([_library_frame(f) for f in raised_in], MAX_LIBRARY_FRAMES),
        libraries=_unique(libraries, MAX_FRAMES),
        log_messages=_unique(log_messages, MAX_LOGS),
        error_codes=_unique([c for c in error_codes if c and c != "None"], MAX_LOGS),
        shapes=[describe_shape_diff(d) for d in _get(incident, "shape_diff", []) if d][:3],
        context=context,
        frameworks=sorted(frameworks),
        setting_text=incident_text(incident, [error_type, message]),
    )
