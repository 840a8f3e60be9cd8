"""The options one code span of an action names, with the values it gives them.

A span is what the answer writes as code: a backtick span, or markdown bold holding code
(``**find_unused_parameters=True**``, :func:`bold_as_code`). It names ``--flag [value]``,
``key=value`` (keyword arguments, environment variables), a flat list given to a keyword,
``"key": value`` and a YAML ``key: value``; a keyword given a call as its value names the
call's own keywords too (``strategy=DDPStrategy(find_unused_parameters=True)``). What the
action does to each is :mod:`rca.suggestion.step_options`'s concern.

Linear time: every pattern is RE2 (:mod:`ingest.linear_regex`), each run a bounded number of
times over a span of at most 400 characters.
"""

from __future__ import annotations

from ingest.linear_regex import LinearMatch
from ingest.linear_regex import compile as linear

__all__ = ["FLAG", "LITERAL", "PAIR", "bold_as_code", "option_like", "span_options", "value_of"]

#: Markdown bold around code (``**find_unused_parameters=True**``, ``**--fp16**``): read as
#: a code span when it holds no space, or a pair, a call or a flag.
_BOLD = linear(r"\*\*(?P<code>[^*\n]{1,400}?)\*\*")
_BOLD_CODE = linear(r"^(?:\S+|--.*|.*[=(].*)$")
FLAG = linear(
    r"(?:^|[\s(\[,=])--(?P<name>[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9])"
    r"(?:(?:=|\s)(?P<value>\"[^\"]*\"|'[^']*'|[^\s\-,;)\]}'\"<{][^\s,;)\]}'\"]*))?"
)
PAIR = linear(
    r"(?:^|[\s(\[{,;])(?P<name>[A-Za-z_][A-Za-z0-9_.]*)\s?=\s?"
    r"(?P<value>\"[^\"]*\"|'[^']*'|[^\s=,;)\]}'\"][^\s,;)\]}'\"]*)"
)
#: The same in code: the value runs to the next argument (``x=4 * 1024**3`` is an
#: expression, ``device = "cuda" if ok else "cpu"`` too).
_CODE_PAIR = linear(
    r"(?:^|[\s(\[{,;])(?P<name>[A-Za-z_][A-Za-z0-9_.]*)\s?=\s?(?P<value>[^\s=][^,;)\]}]*)"
)
#: A flat list given to a keyword (``providers=["CUDAExecutionProvider", "CPUExecutionProvider"]``):
#: the whole list is the value, whatever the name looks like.
_CODE_LIST = linear(
    r"(?:^|[\s(\[{,;])(?P<name>[A-Za-z_][A-Za-z0-9_.]*)\s?=\s?(?P<value>\[[^\[\]\n]{0,400}\])"
)
#: An environment variable's value runs to the next space (``CUDA_VISIBLE_DEVICES=0,1``).
_ENV_VALUE = linear(r"^[^\s]*")
#: ``"key": value`` in a dict or JSON (``{"gpu_mem_limit": 4 * 1024**3}``).
_QUOTED = linear(r"[\"'](?P<name>[A-Za-z_][A-Za-z0-9_.-]*)[\"']\s?:\s?(?P<value>[^,;)\]}]+)")
_YAML = linear(r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_.-]*):\s+(?P<value>[^\s#]+)\s*$")
LITERAL = linear(
    r"^(?:-?\.?\d[\w.:]*|true|false|on|off|yes|no|none|null|auto|\"[^\"]*\"|'[^']*')$",
    ignore_case=True,
)


def option_like(name: str) -> bool:
    """A bare name is an option when it is shaped like one: ``snake_case``, ``UPPER_CASE``,
    ``fp16_opts.enabled``; not a plain word, ``torch.tensor`` or a call."""
    return "_" in name.strip("_.")


def value_of(raw: str | None) -> str | None:
    """A value as written, without quotes, backticks or a closing full stop."""
    if raw is None:
        return None
    return raw.strip().strip("`'\"").rstrip(".")


def _given(raw: str) -> str:
    """The value a code pair gives: a literal, or the expression as written, without spaces
    (``device_map={"":0}``, ``4*1024**3``): a value too, equal only to the same text."""
    raw = raw.strip()
    return raw.strip("'\"") if LITERAL.match(raw) else "".join(raw.split())


#: Calls read for their first keyword in one code span at most.
_MAX_CALLS = 16


def _pairs(code: str) -> list[LinearMatch]:
    """The ``key=value`` and ``"key": value`` pairs of a code span, with the first keyword
    of each call, which a pair whose value is the call swallows (``strategy=DDPStrategy(
    find_unused_parameters=True)`` names ``find_unused_parameters``)."""
    matches = [m for pattern in (_CODE_PAIR, _QUOTED) for m in pattern.finditer(code)]
    starts = {m.start(1) for m in matches}
    for at in [at for at, char in enumerate(code) if char == "("][:_MAX_CALLS]:
        inner = _CODE_PAIR.match(code, at)
        if inner is not None and inner.start(1) not in starts:
            matches.append(inner)
    return matches


def span_options(code: str) -> list[tuple[str, str | None]]:
    """The options one code span names, with the value it gives them, in their order."""
    found: list[tuple[int, str, str | None]] = []
    for match in FLAG.finditer(code):
        found.append((match.start(1), match.group("name"), value_of(match.group("value")) or ""))
    lists = {m.start(1): m for m in _CODE_LIST.finditer(code)}
    found += [(at, m.group("name"), "".join(m.group("value").split())) for at, m in lists.items()]
    for match in _pairs(code):
        name, value = match.group("name"), _given(match.group("value"))
        literal = bool(LITERAL.match(match.group("value").strip()))
        if code[: match.start(1)].endswith("-") or not (option_like(name) or literal):
            continue
        if match.start(1) in lists:
            continue
        if name.isupper() and (env := _ENV_VALUE.match(code[match.start(2) :])):
            value = value_of(env.group(0)) or value
        found.append((match.start(1), name, value))
    if not found and (yaml := _YAML.match(code)):
        found.append((0, yaml.group("name"), value_of(yaml.group("value"))))
    return [(name, value) for _, name, value in sorted(found, key=lambda item: item[0])]


def bold_as_code(text: str) -> str:
    """``text`` with bold code (:data:`_BOLD`) written as a code span, in place."""
    return _BOLD.sub(
        lambda m: f" `{m.group('code')}` " if _BOLD_CODE.match(m.group("code")) else m.group(0),
        text,
    )
