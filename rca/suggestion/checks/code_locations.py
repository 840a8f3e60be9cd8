"""The code locations a suggestion names, and whether the incident's stack frames hold them."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ingest.linear_regex import compile as linear
from ingest.parsing.frames import Frame
from rca.suggestion.checks import MAX_SCAN_CHARS

__all__ = ["code_locations", "stack_path_match", "unmatched_locations"]

_EXTENSIONS = r"py|pyx|ipynb|java|kt|scala|cc|cpp|cu|go|rs"
_FILE_REF = re.compile(
    rf"(?<![\w/.\\-])(?P<file>(?:[A-Za-z]:)?[/\\]?(?:[\w.-]+[/\\])*[\w-][\w.-]*\.(?:{_EXTENSIONS}))"
    rf"(?::(?P<tail>\d+|[A-Za-z_]\w*))?(?![\w(])"
)
_FILE_SUFFIX = re.compile(rf"\.(?:{_EXTENSIONS})$")
_NAME = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
# "function `foo`", "method Foo.bar", "def foo": a place in the code when the name is written
# as code (:func:`_marked`); "the spawn start method avoids it" names no function.
_CUED_BY_KIND = re.compile(
    rf"\b(?P<cue>function|method|frame|def)\s+(?P<tick>`?)(?P<name>{_NAME}(?:\(\))?)`?"
)
# "in `foo.bar`", "inside train_step()": a location unless it is a library API or code.
_CUED_BY_PLACE = re.compile(
    rf"\b(?:in|inside|within|at)\s+(?:the\s+)?(?P<tick>`?)"
    rf"(?P<name>{_NAME}\(\)|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)`?"
)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
#: The ``in`` of a Python loop over several targets, written without backticks
#: ("for k, v in sd.items()"): code, not prose placing something. RE2 over the 80
#: characters before the cue.
_FOR_TARGETS = linear(r"\bfor\s+[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)+\s*$")
_OPENERS = {"{": "}", "[": "]"}
#: Roots of names that are library APIs or everyday variables, not places in the user's code.
_API_ROOTS_TEXT = """
    torch nn F tf keras np numpy jax jnp transformers peft accelerate vllm onnx onnxruntime
    ort os sys math re json pathlib model self tokenizer trainer optimizer scaler x y tensor
    inputs outputs out batch img image Image PIL cv2 datasets torchvision transforms timm
    bitsandbytes bnb deepspeed optimum triton tritonclient grpc pip cuda amp dist mp
    multiprocessing huggingface_hub sentence_transformers diffusers pipe pipeline config args
    loss data dataset dataloader loader logits labels weights layer module net safetensors
    """
_API_ROOTS = frozenset(_API_ROOTS_TEXT.split())


def _marked(match: re.Match[str]) -> bool:
    """Whether a cued name is written as code, the marks a place in the user's code has:
    backticked, call-shaped (``train_step()``), after ``def``, or, after "function" /
    "method" / "frame", shaped as an identifier (dotted, ``_``, a digit, an inner capital).
    After "in" an unmarked dotted name is prose ("in e.g. the loader", "in requirements.txt"):
    the file names that count are those :data:`_FILE_REF` reads."""
    name = match.group("name")
    if match.group("tick") or name.endswith("()"):
        return True
    if "cue" not in match.re.groupindex:
        return False
    if match.group("cue") == "def":
        return True
    return "." in name or "_" in name or any(c.isdigit() or c.isupper() for c in name[1:])


def _bracketed(text: str) -> list[tuple[int, int]]:
    """Spans of ``{...}`` and ``[...]`` outside backticks: inline code such as a dict
    comprehension, never prose. Nesting is followed; an unclosed opener spans nothing."""
    spans: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    for at, char in enumerate(text):
        if char in _OPENERS:
            stack.append((_OPENERS[char], at))
        elif stack and char == stack[-1][0]:
            _, start = stack.pop()
            if not stack:
                spans.append((start, at + 1))
        elif char in "}]":
            stack.clear()
    return spans


def code_locations(text: str) -> list[str]:
    """The code locations a suggestion names, in order of appearance, without duplicates.

    Files (``model.py``, ``src/model.py:123``, ``model.py:forward``) always count; function
    and dotted names count when the text places something in them ("in ``train_step()``",
    "function ``forward``"), they are written as code (:func:`_marked`), not inside inline
    code (backticks, brackets, a loop's ``for k, v in``) and not an API of a known library
    (``torch.no_grad()``).
    """
    if not isinstance(text, str):
        return []
    text = text[:MAX_SCAN_CHARS]
    found: list[tuple[int, str]] = []
    for match in _FILE_REF.finditer(text):
        found.append((match.start(), match.group(0)))
    code_spans = [m.span() for m in _CODE_SPAN.finditer(text)] + _bracketed(text)
    for pattern in (_CUED_BY_KIND, _CUED_BY_PLACE):
        for match in pattern.finditer(text):
            if any(start <= match.start() < end for start, end in code_spans):
                continue  # "`for k, v in sd.items()`", "{k: v for k, v in sd.items()}"
            if _FOR_TARGETS.search(text[max(match.start() - 80, 0) : match.start()]):
                continue  # "for k, v in sd.items()" unmarked: a loop, not a place
            name = match.group("name")
            bare = name.removesuffix("()")
            if _FILE_SUFFIX.search(bare) or bare.split(".")[0] in _API_ROOTS:
                continue
            if not _marked(match):
                continue
            found.append((match.start("name"), name))
    locations: list[str] = []
    for _, name in sorted(found):
        if name not in locations:
            locations.append(name)
    return locations


def _norm_path(path: str) -> str:
    return path.replace("\\", "/")


def _file_matches(frame_file: str, named: str) -> bool:
    frame_file, named = _norm_path(frame_file), _norm_path(named)
    return bool(frame_file) and (frame_file == named or frame_file.endswith("/" + named))


def _function_matches(frame: Frame, name: str) -> bool:
    function = frame.get("function") or ""
    return bool(function) and (function == name or function.endswith("." + name))


def _location_in_frames(location: str, frames: list[Frame]) -> bool:
    file_match = _FILE_REF.fullmatch(location)
    if file_match:
        tail = file_match.group("tail")
        for frame in frames:
            if not _file_matches(frame.get("filename") or "", file_match.group("file")):
                continue
            if tail is None:
                return True
            if tail.isdigit() and frame.get("lineno") == int(tail):
                return True
            if not tail.isdigit() and _function_matches(frame, tail):
                return True
        return False
    name = location.removesuffix("()")
    parts = name.split(".")
    for frame in frames:
        module = frame.get("module") or ""
        if _function_matches(frame, parts[-1]):
            return True
        if module and (name == module or name == f"{module}.{frame.get('function')}"):
            return True
    return False


def _written_in(name: str, sources: list[str]) -> bool:
    """Whether a source writes ``name`` as a whole file name (not ``mynet.py`` for ``net.py``),
    by the same boundaries as :data:`_FILE_REF`."""
    for source in sources:
        at = source.find(name)
        while at >= 0:
            end = at + len(name)
            before = source[at - 1] if at else " "
            after = source[end] if end < len(source) else " "
            if not (before.isalnum() or before in "_/.\\-") and not (
                after.isalnum() or after in "_("
            ):
                return True
            at = source.find(name, at + 1)
    return False


def _sourced(location: str, sources: list[str]) -> bool:
    """A bare file name (no directory, no ``:line``) that the cited runbook writes itself:
    the runbook's word (``llama.cpp`` is a project), not a place in this incident's code
    that the author made up. A line or a path is always the incident's, never sourced."""
    match = _FILE_REF.fullmatch(location)
    if match is None or match.group("tail") is not None:
        return False
    return not any(sep in location for sep in "/\\") and _written_in(location, sources)


def unmatched_locations(
    text: str, frames: list[Frame], sourced: Iterable[str] = ()
) -> tuple[list[str], list[str]]:
    """The locations ``text`` names, and those of them in no stack frame. A bare file name
    that a text of ``sourced`` (the cited runbook's) writes is not missing (:func:`_sourced`)."""
    named = code_locations(text)
    sources = list(sourced)
    return named, [
        loc for loc in named if not _location_in_frames(loc, frames) and not _sourced(loc, sources)
    ]


def stack_path_match(text: str, frames: list[Frame]) -> float:
    """Share of the code locations named in ``text`` that exist in the frames (1.0 if none).

    A ``file:line`` must match a frame's file and line; ``file:function`` its file and
    function; a function or dotted name must match a frame's function or module.
    """
    named, missing = unmatched_locations(text, frames)
    if not named:
        return 1.0
    return round((len(named) - len(missing)) / len(named), 4)
