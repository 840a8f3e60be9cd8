"""The options an incident shows already set, from all of its evidence, and the scripts it
shows running.

A step that sets an option the incident already has set that way cannot be the fix
(:mod:`rca.suggestion.premises`). Where the incident shows options:

- the message's own sentences saying one is set ("Since `find_unused_parameters=True` is
  enabled": :func:`rca.suggestion.incident_setting.options_already_set`);
- launch commands in the message, the log lines and the inference context's strings:
  ``$ CUDA_VISIBLE_DEVICES=0 docker run --gpus all -e NCCL_DEBUG=INFO img python serve.py``
  gives ``CUDA_VISIBLE_DEVICES``, ``gpus=all``, ``NCCL_DEBUG`` and the script ``serve.py``;
- config and key-value lines: ``key=value``, ``key: value`` (a whole line), ``"key": value``
  (a printed dict or JSON, such as logged session options), ``--flag [value]`` in a log
  sentence ("started with --preload");
- literal keyword arguments in the failing code (``DDP(model, find_unused_parameters=True)``,
  ``Trainer(strategy="ddp_find_unused_parameters_true")``, an alias: :mod:`.option_aliases`);
- the inference context's own scalar fields (``{"gpu_memory_utilization": 0.9}``);
- lists, with the value as shown: ``providers=["CUDAExecutionProvider", ...]`` in code or a
  log line, ``"target_modules": ["q_proj", "v_proj"]``, ``target_modules: [q_proj, v_proj]``,
  ``--lora_target q_proj,v_proj``, ``CUDA_VISIBLE_DEVICES=0,1``. :func:`list_items` reads
  their items, so a step that *adds* a value to an option is already done when the shown
  list holds it (:mod:`rca.suggestion.premises`).

A sentence that advises ("try setting PYTORCH_CUDA_ALLOC_CONF=...", "you can pass
--enforce-eager") or gives an example ("For example, InferenceSession(..., providers=[...])")
shows nothing set: a pair is read only before the first advice word of its
sentence. Names are compared as :func:`rca.suggestion.step_options.option_key` makes them.

Linear time: RE2 patterns with no nested quantifier (:mod:`ingest.linear_regex`), token-wise
command lines, and every input bounded (texts, lines, tokens, pairs).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ingest.linear_regex import LinearMatch
from ingest.linear_regex import compile as linear
from ingest.parsing.frames import Frame
from rca.suggestion.incident_setting import options_already_set
from rca.suggestion.step_options import option_key

__all__ = ["ShownOptions", "list_items", "read_shown_options", "reported"]

_MAX_TEXT = 20_000
_MAX_LINES = 400
_MAX_TOKENS = 200
_MAX_OPTIONS = 300
_MAX_CONTEXT_ITEMS = 200
#: Calls read for their first keyword in one line at most.
_MAX_CALLS = 16

_MAX_LINE = 4000
_SENTENCE_END = linear(r"[.!?;](?:\s|$)")
#: Words after which a sentence advises rather than reports ("try setting X=1"), and an
#: imperative "run with" opening a sentence or an aside (PyTorch's NCCL error: "unhandled
#: system error (run with NCCL_DEBUG=INFO for details)" says the variable is not set).
_ADVICE = linear(
    r"\b(?:try|trying|consider|should|must|need|needs|recommend|recommended|please|can|could"
    r"|may|might|set|setting|use|pass|passing|enable|enabling|add|adding|specify|instead"
    r"|hint|tip|suggest|suggested|ensure|avoid|if|unless|whether|either|example|e\.g)\b"
    r"|(?:^|[(\[])\s*(?:re-?)?run\s+with\b",
    ignore_case=True,
)
_FLAG = linear(
    r"(?:^|[\s(\[,'\"`])--(?P<name>[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9])"
    r"(?:=(?P<value>[^\s,;)\]}'\"`]+)|\s(?P<spaced>\d[\w.:]*))?"
)
_PAIR = linear(
    r"(?:^|[\s(\[{,;'\"`])(?P<name>[A-Za-z_][A-Za-z0-9_.]*)\s?=\s?"
    r"(?P<value>\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'|[^\s=,;)\]}'\"`][^\s,;)\]}'\"`]*)"
)
_QUOTED = linear(
    r"[\"'](?P<name>[A-Za-z_][A-Za-z0-9_.-]*)[\"']\s?:\s?"
    r"(?P<value>\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'|[^\s,}\]'\"]+)"
)
_YAML = linear(
    r"^\s*(?:-\s)?(?P<name>[A-Za-z_][A-Za-z0-9_.-]*):\s+(?P<value>\[[^\[\]#\n]{0,400}\]|[^\s#]+)\s*$"
)
#: A list (or tuple) given to a name, kept as shown: ``providers=["CUDAExecutionProvider",
#: "CPUExecutionProvider"]``, ``device_ids=(0, 1)``, ``"target_modules": ["q_proj"]``. Flat only:
#: a nested list is not a list of option values.
_LIST_PAIR = linear(
    r"(?:^|[\s(\[{,;'\"`])(?P<name>[A-Za-z_][A-Za-z0-9_.]*)\s?[=:]\s?"
    r"(?P<value>\[[^\[\](){}\n]{0,400}\]|\([^\[\](){}\n]{0,400}\))"
)
_LIST_QUOTED = linear(
    r"[\"'](?P<name>[A-Za-z_][A-Za-z0-9_.-]*)[\"']\s?:\s?(?P<value>\[[^\[\](){}\n]{0,400}\])"
)
_MAX_ITEMS = 64
_LITERAL = linear(r"^(?:-?\d[\d.e+-]*|True|False|None|true|false|\"[^\"]*\"|'[^']*')$")
_ENV = linear(r"^(?P<name>[A-Z_][A-Z0-9_]*)=(?P<value>\S*)$")
_PROGRAM = linear(r"^[a-z.~/][\w.~/-]*$")
_SCRIPT = linear(r"(?P<name>[\w-]+\.(?:py|sh))$")


@dataclass(frozen=True)
class ShownOptions:
    """Options the incident shows set (normalised key -> (name as shown, value; "" for a
    bare switch)), and the basenames of the scripts it shows running or failing."""

    options: Mapping[str, tuple[str, str]]
    scripts: frozenset[str]


class _Found:
    def __init__(self) -> None:
        self.options: dict[str, tuple[str, str]] = {}
        self.scripts: set[str] = set()

    def add(self, name: str, value: str | None) -> None:
        flag = name.startswith("--")
        name = name.strip("`'\" ").lstrip("-").strip(".")
        name = name.replace("-", "_") if flag else name  # ``--enforce-eager``: enforce_eager
        key = option_key(name)
        if key and len(key) > 1 and len(self.options) < _MAX_OPTIONS:
            self.options.setdefault(key, (name, (value or "").strip().strip("`'\"")))


def list_items(value: str) -> tuple[str, ...]:
    """The items of an option value as shown, in order and compared as
    :func:`~rca.suggestion.step_options.option_key` compares names (quotes, brackets and
    case dropped): ``['CUDAExecutionProvider', 'CPUExecutionProvider']``, ``q_proj,v_proj``
    and ``0,1`` are lists; a scalar is a list of one."""
    body = value[:_MAX_LINE].strip().strip("`")
    if body[:1] in "[(" and body[-1:] in "])":
        body = body[1:-1]
    items = (item.strip().strip("'\"` ").lower() for item in body.split(",", _MAX_ITEMS))
    return tuple(item for item in items if item)[:_MAX_ITEMS]


def _pairs(text: str) -> list[LinearMatch]:
    """``key=value`` pairs in ``text``, with the first keyword of each call, which a pair
    whose value is the call swallows (``trainer = Trainer(strategy="ddp", ...)``)."""
    matches = list(_PAIR.finditer(text))
    starts = {m.start(1) for m in matches}
    for at in [at for at, char in enumerate(text) if char == "("][:_MAX_CALLS]:
        inner = _PAIR.match(text, at)
        if inner is not None and inner.start(1) not in starts:
            matches.append(inner)
    return matches


def _lines(text: str) -> list[str]:
    return [line[:_MAX_LINE] for line in text[:_MAX_TEXT].splitlines()[:_MAX_LINES]]


def _command(line: str, found: _Found) -> bool:
    """Read a launch command's environment, flags and script; False if it is no command."""
    tokens = line.split(None, _MAX_TOKENS)[:_MAX_TOKENS]
    if tokens and tokens[0] in ("$", ">", "#", "+", "%"):
        tokens = tokens[1:]
    env = 0
    while env < len(tokens) and _ENV.match(tokens[env]):
        env += 1
    if env >= len(tokens) or not _PROGRAM.match(tokens[env]):
        return False
    args = tokens[env + 1 :]
    starts = any(t.startswith("-") or _SCRIPT.search(t) for t in args[:4])
    if not env and not starts:
        return False
    for token in tokens[:env]:
        if match := _ENV.match(token):
            found.add(match.group("name"), match.group("value"))
    for i, token in enumerate(args):
        following = args[i + 1] if i + 1 < len(args) else ""
        if token.startswith("--") and len(token) > 3:
            name, eq, value = token.partition("=")
            if not eq and following and not following.startswith("-"):
                value = following
            found.add(name, value)
        elif token in ("-e", "--env") and (match := _ENV.match(following)):
            found.add(match.group("name"), match.group("value"))
        elif (script := _SCRIPT.search(token)) and not token.startswith("-"):
            found.scripts.add(script.group("name").lower())
    return True


def _sentences(line: str) -> Iterable[str]:
    start = 0
    for match in _SENTENCE_END.finditer(line):
        yield line[start : match.end()]
        start = match.end()
    yield line[start:]


def reported(line: str) -> str:
    """What a line reports: each sentence up to its first advice or example word ("try",
    "should", "for example", ...), so that advice never reads as a setting shown."""
    parts = []
    for sentence in _sentences(line[:_MAX_LINE]):
        advice = _ADVICE.search(sentence)
        parts.append(sentence[: advice.start()] if advice else sentence)
    return " ".join(parts)


def _prose(line: str, found: _Found) -> None:
    """Pairs and flags a log or message line reports (before any advice word)."""
    yaml = _YAML.match(line)
    if yaml and (yaml.group("name").islower() or "_" in yaml.group("name")):  # not "Error: x"
        found.add(yaml.group("name"), yaml.group("value"))
        return
    for sentence in _sentences(line):
        said = reported(sentence)
        for pattern in (_LIST_QUOTED, _LIST_PAIR, _QUOTED):
            for match in pattern.finditer(said):
                found.add(match.group("name"), match.group("value"))
        for match in _pairs(said):
            if "(" not in match.group("value"):  # ``out = model(x``: code, no option
                found.add(match.group("name"), match.group("value"))
        for match in _FLAG.finditer(said):
            found.add("--" + match.group("name"), match.group("value") or match.group("spaced"))


def _text(text: str, found: _Found) -> None:
    for line in _lines(text):
        if not _command(line, found):
            _prose(line, found)


def _code(frame: Frame, found: _Found) -> None:
    """Literal keyword arguments and assignments in a frame's line, and its script."""
    line = str(frame.get("context_line") or "")[:_MAX_TEXT].partition("#")[0]
    for match in _LIST_PAIR.finditer(line):
        found.add(match.group("name"), match.group("value"))
    for match in _pairs(line):
        if _LITERAL.match(match.group("value")):
            found.add(match.group("name"), match.group("value"))
    filename = str(frame.get("filename") or "")[:_MAX_TEXT]
    if frame.get("in_app") and (script := _SCRIPT.search(filename)):
        found.scripts.add(script.group("name").lower())


def _context(context: Mapping[str, Any], found: _Found) -> None:
    """The inference context's scalar fields (and those of its mappings, one level down) and
    its strings' lines."""
    items = list(context.items())[:_MAX_CONTEXT_ITEMS]
    nested = [v for _, v in items if isinstance(v, Mapping)]
    for value in nested[:_MAX_CONTEXT_ITEMS]:
        items += list(value.items())[:_MAX_CONTEXT_ITEMS]
    for key, value in items[: 2 * _MAX_CONTEXT_ITEMS]:
        name = str(key)[:200]
        if isinstance(value, bool | int | float) and "_" in name:
            found.add(name, str(value))
        elif isinstance(value, str):
            if "_" in name and len(value) <= 80 and " " not in value:
                found.add(name, value)
            _text(value, found)


def read_shown_options(
    message: str,
    logs: Sequence[str] = (),
    frames: Iterable[Frame] = (),
    inference_context: Mapping[str, Any] | None = None,
) -> ShownOptions:
    """What the incident's message, logs, code and context show set."""
    found = _Found()
    for name, value in options_already_set(message).items():
        found.add(name, value)
    _text(message, found)
    for entry in logs[:_MAX_LINES]:
        _text(entry, found)
    for frame in list(frames)[:_MAX_LINES]:
        _code(frame, found)
    _context(inference_context or {}, found)
    return ShownOptions(found.options, frozenset(found.scripts))
