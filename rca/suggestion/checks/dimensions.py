"""Numbers in a suggestion that read as tensor dimensions, and how many the shape diff lacks."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from pathlib import Path

from ingest.linear_regex import compile as linear
from ingest.parsing.shapes import ShapeDiff, incompatibility
from rca.suggestion.checks import MAX_SCAN_CHARS
from rca.suggestion.checks.stated_numbers import axis_differences, computed_numbers
from rca.suggestion.checks.vocab_resize import vocab_resize_numbers
from rca.suggestion.size_settings import size_names

__all__ = [
    "diff_dims",
    "named_dims",
    "setting_values",
    "shape_incompatibility",
    "unknown_dim_share",
    "unknown_dims",
    "without_axes",
    "without_option_values",
]


def shape_incompatibility(diffs: Iterable[ShapeDiff]) -> float:
    """How far the actual shapes are from the expected ones: the worst diff, 0.0 with none."""
    return max((incompatibility(diff) for diff in diffs or ()), default=0.0)


_DIM_PATTERN = r"\d+|None|-1|\?|_"
_SHAPE_LITERAL = re.compile(
    rf"[\[(]\s*(?:{_DIM_PATTERN})(?:\s*,\s*(?:{_DIM_PATTERN}))*\s*,?\s*[\])]"
    rf"|\b\d+(?:\s?[x×]\s?\d+)+\b"
)
_CUED_DIM = re.compile(
    r"\b(?:dim(?:ension)?s?|size|width|height|channels?|features?|in_features|out_features"
    r"|hidden_size|vocab(?:_size)?|seq_len|max_length|rows?|columns?)"
    r"\s*(?:of|=|:|is|to|from)?\s*(?P<n>\d+)\b(?![.,]\d)"
)
_BARE_INT = re.compile(r"(?<![\w.:/\\=-])(?P<n>\d+)(?![\w%]|[.,]\d)")
_UNIT_AFTER = re.compile(
    r"\s*(?:%|percent|ms\b|s\b|secs?\b|seconds?\b|minutes?\b|mins?\b|hours?\b|h\b|days?\b"
    r"|[KMGT]i?B\b|bytes?\b|-?bits?\b|GPUs?\b|gpus?\b|cores?\b|nodes?\b|workers?\b"
    r"|processes\b|threads\b|epochs?\b|steps?\b|times\b|x\b|retries\b|attempts\b|requests?\b"
    r"|st\b|nd\b|rd\b|th\b)",
    re.IGNORECASE,
)
_NOT_DIM_BEFORE = re.compile(
    r"(?:\b(?:version|v|release|opset|python|cuda|cudnn|driver|nccl|line|lines|port|pid|step|epoch"
    r"|rank|gpu|device|error|code|status|signal|http|errno|exit|top|attempt|retry|sm|level"
    r"|number|no)|#)\s*$",
    re.IGNORECASE,
)


# Numbers code gives as axes or indices, never as sizes: a step or an answer that says
# ``x.view(x.size(0), -1)`` names axis 0, not a tensor of size 0. RE2, like every pattern
# that may see incident text (values filled into a step come from it).
_INDEX_LIST = r"-?\d+(?:\s*,\s*-?\d+)*\s*,?"
_INDEX_TUPLE = rf"[(\[]\s*{_INDEX_LIST}\s*[)\]]"
#: A one-number subscript of a name, call or subscript: ``x.shape[0]``, ``tf.shape(x)[0]``,
#: ``out[0][1]``. Not ``input[4, 1, 28, 28]``: PyTorch's messages write shapes that way.
_SUBSCRIPT = linear(r"[\w)\]](?P<index>(?:\[\s*-?\d+\s*\])+)")
#: An axis keyword argument: ``dim=1``, ``start_dim=1``, ``axis=(1, 2)``, ``perm=[0, 3, 1, 2]``.
_AXIS_KEYWORD = linear(
    rf"\b(?P<index>(?:(?:start|end)_)?(?:dim|dims|axis|axes|perm)[012]?\s*=\s*"
    rf"(?:-?\d+\b|{_INDEX_TUPLE}))"
)
#: The arguments of a call that takes only axes (after an optional tensor argument):
#: ``x.size(0)``, ``x.permute(0, 3, 1, 2)``, ``np.transpose(a, (0, 2, 1))``, ``unsqueeze(1)``,
#: ``torch.flatten(x, 1)``.
_AXIS_CALL = linear(
    r"\b(?:size|permute|transpose|swapaxes|swapdims|movedim|moveaxis|squeeze|unsqueeze"
    r"|expand_dims|flatten|argmax|argmin|softmax|log_softmax)"
    rf"(?P<index>\(\s*(?:[A-Za-z_][\w.]*\s*,\s*)?(?:{_INDEX_LIST}|{_INDEX_TUPLE})\s*\))"
)
#: Prose that names an axis by its index: "move the class axis to dim 1", "along axis 0".
_AXIS_WORD = linear(r"\b(?P<index>(?:dim|axis)\s+-?\d)\b")
_AXIS_PATTERNS = (_SUBSCRIPT, _AXIS_KEYWORD, _AXIS_CALL, _AXIS_WORD)


def without_axes(text: str) -> str:
    """``text`` with the numbers it gives as axes or indices blanked (same length, so
    offsets and the words before a number stay where they were): subscripts, axis keyword
    arguments, the arguments of axis-taking calls and "dim 1" / "axis 0" in prose."""
    chars = list(text)
    for pattern in _AXIS_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.span(1)  # the one group, "index"
            chars[start:end] = " " * (end - start)
    return "".join(chars)


#: A number given to a named option: ``max_tokens=5000``, ``--max-model-len 4096``,
#: "`max_model_len` to 4096". The name has parts joined by ``_`` or ``-`` (an option, not a
#: word of prose).
_OPTION_VALUE = linear(
    r"(?P<name>[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+)[`'\"*]*"
    r"(?:\s*[=:]\s*|\s+to\s+|\s+)[`'\"*]*(?P<value>\d+)\b"
)
#: Parts of an option name that make its value a tensor size (``hidden_size``,
#: ``in_features``, ``max_seq_len``, ``max_length``): any other option's value is a setting
#: (``max_tokens``, ``max_model_len``, ``max_lora_rank``), not a dimension.
_SHAPE_PARTS = frozenset(
    {
        "dim", "dims", "size", "shape", "width", "height", "channel", "channels", "feature",
        "features", "hidden", "embed", "embedding", "vocab", "head", "heads", "seq", "length",
        "rows", "columns", "cols", "in", "out", "units", "filters", "patch", "image", "img",
    }
)  # fmt: skip


#: Quantities of a run that are not tensor sizes (batch, worker, rank, seed...): data,
#: ``rca/knowledge/setting-quantities.toml``.
SETTINGS_FILE = Path(__file__).resolve().parents[2] / "knowledge" / "setting-quantities.toml"


def _setting_nouns() -> frozenset[str]:
    with SETTINGS_FILE.open("rb") as handle:
        return frozenset(str(noun).lower() for noun in tomllib.load(handle)["nouns"])


_SETTING_NOUNS = _setting_nouns()


def _noun_forms(noun: str) -> str:
    """A noun and its plural as a pattern: ``worker(?:s|es)?``, ``retr(?:y|ies)``."""
    if noun.endswith("y"):
        return noun[:-1] + "(?:y|ies)"
    return noun + "(?:s|es)?"


_NOUN = "(?:" + "|".join(_noun_forms(noun) for noun in sorted(_SETTING_NOUNS)) + ")"

#: A number prose gives to a setting: "batch size to 1", "a batch size of 4", "the LoRA rank
#: to 16", "num workers: 8", "from 32 to 8" (both), or with the noun after it: "8 workers".
_SETTING_VALUE = linear(
    rf"\b{_NOUN}(?:[\s_-]+(?:size|count|number|len|length))?[`'\"*]*"
    r"(?:\s*[=:]\s*|\s+(?:to|of|is|at|from)\s+|\s+)[`'\"*]*(?P<value>\d+)\b"
    r"(?:\s+to\s+(?P<to>\d+)\b)?"
    rf"|\b(?P<before>\d+)\s+{_NOUN}\b",
    ignore_case=True,
)


def _size_setting_pattern() -> str:
    """The settings that name a token count, batch or other size of the run
    (``rca/knowledge/size-settings.toml``: ``max_tokens``, ``--max-model-len``, ``-c``,
    "context length"), as written in prose or code (``-`` or ``_``, any case, a dotted owner
    before it). A phrase naming a shape or dimension ("binding shape") names a tensor size."""
    names = size_names()
    keys = [re.escape(key).replace("_", "[_-]") for key in names.keys]
    flags = [re.escape(flag) for flag in names.flags]
    phrases = [
        r"\s+".join(re.escape(word) for word in words)
        for words, _ in names.phrases
        if not {"shape", "shapes", "dimension", "dimensions"} & set(words)
    ]
    alternatives = sorted([*keys, *flags, *phrases], key=len, reverse=True)
    return "(?:" + "|".join(alternatives) + ")"


#: A number given to a size setting: ``max_tokens at 2000``, "(max_tokens) to 5400",
#: ``model.max_seq_length to 256``, ``--max-model-len 56000``, "from 6048 to 4000" (both).
_SIZE_SETTING_VALUE = linear(
    rf"(?:^|[^\w-])-{{0,2}}{_size_setting_pattern()}[`'\"*)]*"
    r"(?:\s*[=:(]\s*|\s+(?:to|of|is|at|from|as|below|under|of\s+at\s+most)\s+|\s+)[`'\"*]*"
    r"(?P<value>\d+)\b(?:\s+to\s+(?P<to>\d+)\b)?",
    ignore_case=True,
)


def _blank(chars: list[str], span: tuple[int, int]) -> None:
    start, end = span
    chars[start:end] = " " * (end - start)


def _setting_value_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` gives a number to a setting of the run rather than a tensor size.

    Groups are read by index: google-re2's own match (non-ASCII text) takes no group names.
    """
    spans: list[tuple[int, int]] = []
    name, value = (_OPTION_VALUE.groupindex[group] for group in ("name", "value"))
    for match in _OPTION_VALUE.finditer(text):
        parts = set(match.group(name).lower().replace("-", "_").split("_"))
        if not parts & _SHAPE_PARTS or parts & _SETTING_NOUNS:
            spans.append(match.span(value))
    for pattern, groups in (
        (_SETTING_VALUE, ("value", "to", "before")),
        (_SIZE_SETTING_VALUE, ("value", "to")),
    ):
        indices = [pattern.groupindex[group] for group in groups]
        for match in pattern.finditer(text):
            spans += [match.span(i) for i in indices if match.group(i) is not None]
    return spans


def without_option_values(text: str) -> str:
    """``text`` with the values of named settings blanked (same length): options with no
    shape part or with a setting noun (``max_tokens=5000``, ``--tensor-parallel-size 2``,
    ``batch_size=1``), prose settings ("batch size to 1", "8 workers") and the token counts,
    lengths and batches of ``size-settings.toml`` (``max_tokens at 2000``,
    ``model.max_seq_length to 256``, ``--max-model-len 56000``): a length the run is given,
    which the size-bound checks weigh against the incident's limit, not a tensor's size."""
    chars = list(text)
    for span in _setting_value_spans(text):
        _blank(chars, span)
    return "".join(chars)


def setting_values(text: str) -> set[int]:
    """The numbers ``text`` gives to settings (:func:`without_option_values` blanks them):
    the answer's own values, which its reason may repeat ("2000 + 568 fits")."""
    return {int(text[start:end]) for start, end in _setting_value_spans(text)}


def named_dims(text: str) -> set[int]:
    """Numbers in ``text`` that read as tensor dimensions.

    Shape literals (``[4, 256]``, ``4x256``) and cued numbers (``dim 512``, ``in_features=768``)
    always count; a bare number counts unless it is a version, a percentage, a line number
    after ``:``, a quantity with a unit (``8-bit``, ``2 GPUs``, ``16 GiB``), follows a word
    such as "version", "line" or "port", or is 0 or 1 (indices and flags more often than sizes).
    Axes and indices never count (:func:`without_axes`: ``x.size(0)``, ``x.shape[0]``,
    ``dim=1``, ``permute(0, 3, 1, 2)``), nor do values of named options that set no tensor
    size (:func:`without_option_values`: ``max_tokens=5000``, "`max_model_len` to 4096")
    or of settings named in prose ("batch size to 1", "8 workers", "the LoRA rank to 16").
    """
    if not isinstance(text, str):
        return set()
    text = without_axes(text[:MAX_SCAN_CHARS])
    own = setting_values(text)
    text = without_option_values(text)
    dims: set[int] = set()
    for match in _SHAPE_LITERAL.finditer(text):
        dims.update(int(n) for n in re.findall(r"(?<![-\w])\d+", match.group(0)))
    for match in _CUED_DIM.finditer(text):
        dims.add(int(match.group("n")))
    for match in _BARE_INT.finditer(text):
        number = int(match.group("n"))
        if number < 2 or len(match.group("n")) > 9 or number in own:
            continue
        if _UNIT_AFTER.match(text, match.end()) or _NOT_DIM_BEFORE.search(
            text[max(match.start() - 24, 0) : match.start()]
        ):
            continue
        dims.add(number)
    return dims


def diff_dims(diffs: Iterable[ShapeDiff]) -> set[int]:
    dims: set[int] = set()
    for diff in diffs or ():
        for dim in [*(diff.get("expected") or ()), *(diff.get("actual") or ())]:
            if isinstance(dim, int) and not isinstance(dim, bool):
                dims.add(dim)
    return dims


def unknown_dims(
    text: str, diffs: Iterable[ShapeDiff], derived: Iterable[int] = (), stated: Iterable[int] = ()
) -> set[int]:
    """The dimensions named in ``text`` that no shape of the diff holds, that are not
    ``derived`` from it by the incident's premises (a folded input's batch) nor ``stated``
    in the incident's text (the message's "568 in the messages"), nor a gap between the
    diff's sizes or a result ``text`` computes from such numbers (:mod:`.stated_numbers`),
    nor a vocabulary size given ``resize_token_embeddings`` that they derive
    (:mod:`.vocab_resize`).

    Empty when the diff is empty: nothing to check against.
    """
    diffs = list(diffs or ())
    known = diff_dims(diffs)
    if not known or not isinstance(text, str):
        return set()
    known |= set(derived) | set(stated) | axis_differences(diffs)
    unknown = named_dims(text) - known
    if unknown:
        unknown -= computed_numbers(text, known | setting_values(text[:MAX_SCAN_CHARS]))
    if unknown:
        unknown -= vocab_resize_numbers(text, known)  # len(tokenizer) the incident derives
    return unknown


def unknown_dim_share(
    text: str, diffs: Iterable[ShapeDiff], derived: Iterable[int] = (), stated: Iterable[int] = ()
) -> float:
    """Share of the dimensions named in ``text`` that :func:`unknown_dims` finds ungrounded.

    0.0 when the diff is empty (nothing to check against) or no dimension is named.
    """
    named = named_dims(text)
    if not named:
        return 0.0
    return round(len(unknown_dims(text, diffs, derived, stated)) / len(named), 4)
