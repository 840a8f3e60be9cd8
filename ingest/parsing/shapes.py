"""Tensor shape diffs: read them out of framework error messages, or validate client ones.

A shape diff is the single most specific signal an ML failure carries, and the suggestion
validator checks named dimensions against it, so extraction sticks to message forms whose
meaning is unambiguous (see ``shared/eval/README.md`` for the expected/actual conventions).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Literal, TypedDict

from ingest.linear_regex import LinearMatch, LinearPattern
from ingest.linear_regex import compile as linear

MAX_DIFFS = 32
MAX_RANK = 16
MAX_MESSAGE = 100_000


class ShapeDiff(TypedDict):
    tensor: str | None
    op: str
    expected: list[int | None]
    actual: list[int | None]


_UNKNOWN_DIM = {"none", "null", "?", "-1", "*", "_"}
_INT = r"\d{1,12}"
_DIMS = r"[\w\s,?-]*"


def parse_dims(text: Any) -> list[int | None] | None:
    """Read ``[1, 2]``, ``(None, 3)``, ``torch.Size([4, 5])`` or ``2x3``; None if not a shape."""
    if isinstance(text, (list, tuple)):
        return _coerce_list(text)
    if not isinstance(text, str):
        return None
    body = text.strip()
    body = linear(r"^(?:torch\.)?Size\(|^TensorShape\(").sub("", body)
    body = body.strip("()[] \t")
    body = body.rstrip(")]").strip()
    if not body:
        return []
    separator = "x" if linear(r"\d+(?:x\d+)+").fullmatch(body) else ","
    tokens = [token.strip() for token in body.split(separator)]
    if tokens and tokens[-1] == "":
        tokens = tokens[:-1]  # the one-element tuple "(5,)"
    dims: list[int | None] = []
    for token in tokens[:MAX_RANK]:
        dim = _coerce_dim(token)
        if dim is False:
            return None
        dims.append(dim)
    return dims


def _coerce_dim(value: Any) -> int | None | Literal[False]:
    """Return the dimension, None when unknown, or False when the value is not a dimension."""
    if value is None:
        return None
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return False
        return int(value) if value.is_integer() and value >= 0 else (None if value < 0 else False)
    if isinstance(value, str):
        token = value.strip()
        if token.lower() in _UNKNOWN_DIM:
            return None
        if token.isdecimal() and len(token) <= 18:
            return int(token)
    return False


def _coerce_list(values: Any) -> list[int | None] | None:
    if not isinstance(values, (list, tuple)) or len(values) > MAX_RANK:
        return None
    dims: list[int | None] = []
    for value in values:
        dim = _coerce_dim(value)
        if dim is False:
            return None
        dims.append(dim)
    return dims


def _diff(op: str, expected: Any, actual: Any, tensor: str | None = None) -> ShapeDiff | None:
    expected_dims = parse_dims(expected)
    actual_dims = parse_dims(actual)
    if expected_dims is None or actual_dims is None or not (expected_dims or actual_dims):
        return None
    return ShapeDiff(tensor=tensor, op=op, expected=expected_dims, actual=actual_dims)


_Extractor = Callable[[str], Iterator[ShapeDiff | None]]
_EXTRACTORS: list[_Extractor] = []


def _extractor(func: _Extractor) -> _Extractor:
    _EXTRACTORS.append(func)
    return func


def _form(needle: str, pattern: str) -> tuple[str, LinearPattern]:
    """A message form: a literal every match of `pattern` contains, and the pattern.

    The literal is tested first (a substring test costs ~50 ns, an RE2 call ~1.5 us, and
    most messages state none of these forms): the pattern is case-sensitive and holds the
    literal verbatim, so a text without it has no match and skipping the call changes
    nothing (tests/unit/test_parsing_shapes.py checks it against running every pattern).
    """
    if needle not in pattern.replace("\\", ""):
        raise ValueError(f"{needle!r} is not written out in {pattern!r}")
    return needle, linear(pattern)


def _matches(form: tuple[str, LinearPattern], message: str) -> Iterator[LinearMatch]:
    needle, pattern = form
    return pattern.finditer(message) if needle in message else iter(())


_MATMUL_TORCH = _form(
    "mat1 and mat2 shapes cannot be multiplied (",
    rf"mat1 and mat2 shapes cannot be multiplied \(({_INT})x({_INT}) and ({_INT})x({_INT})\)",
)
_MATMUL_TF = _form(
    "Matrix size-incompatible: In[0]: [",
    r"Matrix size-incompatible: In\[0\]: \[([\d,\s]+)\], In\[1\]: \[(\d+)\s*,[\d\s]+\]",
)


@_extractor
def _matmul(message: str) -> Iterator[ShapeDiff | None]:
    # PyTorch: mat1 is the input, mat2 the (transposed) weight whose rows are K.
    for m in _matches(_MATMUL_TORCH, message):
        yield _diff("matmul", [None, m[3]], [m[1], m[2]])
    # TensorFlow: Matrix size-incompatible: In[0]: [32,100], In[1]: [200,10]
    for m in _matches(_MATMUL_TF, message):
        yield _diff("matmul", [None, m[2]], m[1])


_STATE_DICT = _form(
    "size mismatch for ",
    r"size mismatch for ([^\s:]+): copying a param with shape (?:torch\.Size\()?\[([^\]]*)\]\)?"
    r" from checkpoint, the shape in current model is (?:torch\.Size\()?\[([^\]]*)\]",
)


@_extractor
def _state_dict(message: str) -> Iterator[ShapeDiff | None]:
    for m in _matches(_STATE_DICT, message):
        yield _diff("load_state_dict", m[3], m[2], tensor=m[1])


_CONV = _form(
    "expected input[",
    rf"expected input\[([\d,\s]+)\] to have ({_INT}) channels, but got ({_INT}) channels",
)


@_extractor
def _conv(message: str) -> Iterator[ShapeDiff | None]:
    for m in _matches(_CONV, message):
        actual = parse_dims(m[1])
        if not actual:
            continue
        want, got = int(m[2]), int(m[3])
        # Batched NCHW input keeps channels at dim 1; an unbatched CHW input at dim 0.
        index = 1 if len(actual) > 1 and actual[1] == got else 0
        if actual[index] != got:
            continue  # the message contradicts itself; claim nothing
        expected = list(actual)
        expected[index] = want
        yield _diff("conv", expected, actual, tensor="input")


_BROADCAST_TORCH = _form(
    "size of tensor a (",
    rf"size of tensor a \(({_INT})\) must match the size of tensor b \(({_INT})\)",
)
_BROADCAST_TF = _form(
    "Incompatible shapes: [", r"Incompatible shapes: \[([^\]]*)\] vs\. \[([^\]]*)\]"
)


@_extractor
def _broadcast(message: str) -> Iterator[ShapeDiff | None]:
    for m in _matches(_BROADCAST_TORCH, message):
        yield _diff("broadcast", [m[2]], [m[1]])
    for m in _matches(_BROADCAST_TF, message):
        yield _diff("broadcast", m[2], m[1])


_KERAS_SHAPE = _form(
    "expected shape=(",
    r"(?:layer \"?(?P<layer>[\w./-]+)\"? is incompatible with the layer: )?"
    r"expected shape=\((?P<expected>[^)]*)\), found shape=\((?P<actual>[^)]*)\)",
)
_KERAS_CONSTRUCTED = _form(
    "constructed with shape (",
    r"constructed with shape \((?P<expected>[^)]*)\) for input (?P<spec>.*?), but it was "
    r"called on an input with incompatible shape \((?P<actual>[^)]*)\)",
)
_KERAS_NAME = linear(r"name='([^']+)'")
_KERAS_NDIM = _form(
    "Full shape received: (",
    r"(?:layer \"?(?P<layer>[\w./-]+)\"? is incompatible with the layer: ?:? )?"
    r"expected (?:min_|max_)?ndim=(?P<want>\d{1,2}), found ndim=(?P<got>\d{1,2})\. "
    r"Full shape received: \((?P<actual>[^)]*)\)",
)


@_extractor
def _keras_input(message: str) -> Iterator[ShapeDiff | None]:
    for m in _matches(_KERAS_SHAPE, message):
        yield _diff("input", m["expected"], m["actual"], tensor=m["layer"])
    for m in _matches(_KERAS_CONSTRUCTED, message):
        name = _KERAS_NAME.search(str(m["spec"]))
        yield _diff("input", m["expected"], m["actual"], tensor=name[1] if name else None)
    for m in _matches(_KERAS_NDIM, message):
        yield _diff("input", [None] * int(m["want"]), m["actual"], tensor=m["layer"])


_SEQUENCE_TOKENIZER = _form(
    "maximum sequence length for this model (",
    rf"sequence length is longer than the specified maximum sequence length for this model"
    rf" \(({_INT}) > ({_INT})\)",
)
_SEQUENCE_CONTEXT = _form(
    "maximum context length is ",
    rf"maximum context length is ({_INT}) tokens\. However, you requested ({_INT}) tokens",
)
_SEQUENCE_MAX_LENGTH = _form(
    "Input length of input_ids is ",
    rf"Input length of input_ids is ({_INT}), but `max_length` is set to ({_INT})",
)
_SEQUENCE_KV_CACHE = _form(
    "max seq len (",
    rf"max seq len \(({_INT})\) is larger than the maximum number of tokens that can be"
    rf" stored in KV cache \(({_INT})\)",
)


@_extractor
def _sequence_length(message: str) -> Iterator[ShapeDiff | None]:
    # transformers tokenizer warning: "... maximum sequence length for this model (2545 > 512)"
    for m in _matches(_SEQUENCE_TOKENIZER, message):
        yield _diff("sequence_length", [m[2]], [m[1]], tensor="input_ids")
    # OpenAI-compatible servers (vLLM, OpenAI): context window exceeded.
    for m in _matches(_SEQUENCE_CONTEXT, message):
        yield _diff("sequence_length", [m[1]], [m[2]], tensor="input_ids")
    for m in _matches(_SEQUENCE_MAX_LENGTH, message):
        yield _diff("sequence_length", [m[2]], [m[1]], tensor="input_ids")
    # vLLM: max_model_len larger than what the KV cache can hold.
    for m in _matches(_SEQUENCE_KV_CACHE, message):
        yield _diff("kv_cache", [m[2]], [m[1]], tensor="max_model_len")


_BATCH = _form(
    "Expected input batch_size (",
    rf"Expected input batch_size \(({_INT})\) to match target batch_size \(({_INT})\)",
)


@_extractor
def _batch(message: str) -> Iterator[ShapeDiff | None]:
    for m in _matches(_BATCH, message):
        yield _diff("batch", [m[2]], [m[1]], tensor="input")


_ONNXRUNTIME = _form(
    "invalid dimensions for input: ",
    rf"invalid dimensions for input: (\S+) for the following indices\s+index: (\d{{1,2}})"
    rf"\s+Got: ({_INT})\s+Expected: ({_INT})",
)


@_extractor
def _onnxruntime(message: str) -> Iterator[ShapeDiff | None]:
    # "Got invalid dimensions for input: x for the following indices index: 1 Got: 3 Expected: 1"
    for m in _matches(_ONNXRUNTIME, message):
        padding: list[int | None] = [None] * int(m[2])
        yield _diff("input", [*padding, m[4]], [*padding, m[3]], tensor=m[1])


_RANK_TORCH = _form(
    "-dimensional input for ",
    r"Expected (?P<rank>\d{1,2})-dimensional input for \d{1,2}-dimensional weight\s*"
    r"\[?(?P<weight>\d{1,9}(?:,?\s\d{1,9}){0,7})\]?,\s*but got \d{1,2}-dimensional input of"
    r" size\s*\[(?P<size>\d{1,9}(?:,\s?\d{1,9}){0,7})\]",
)


def rank_mismatches(message: str) -> Iterator[ShapeDiff]:
    """PyTorch's conv rank message ("Expected 4-dimensional input for 4-dimensional weight
    [64, 1, 4, 4], but got 3-dimensional input of size [128, 256, 256]") as input diffs:
    the input's shape, and of the expected one its rank and its channel axis (the weight's
    second dimension; a conv weight is [out, in / groups, *kernel]), other axes unknown.

    Not one of :func:`extract_shape_diff`'s forms: what that returns is stored with the
    incident and weighed by retrieval, and adding a form changes both (unmeasured); the
    steps' premises read this one (:mod:`rca.suggestion.shown_tensors`)."""
    for m in _matches(_RANK_TORCH, message):
        weight = [int(d) for d in m["weight"].replace(",", " ").split()]
        expected: list[int | None] = [None] * int(m["rank"])
        if len(weight) > 1 and len(expected) > 1:
            expected[1] = weight[1]
        actual: list[int | None] = [int(d) for d in m["size"].split(",")]
        yield ShapeDiff(tensor="input", op="conv", expected=expected, actual=actual)


def extract_shape_diff(message: str) -> list[ShapeDiff]:
    """Find every shape mismatch a framework message states, in the order the forms appear.

    Returns an empty list for messages that name no mismatch (an OOM message naming an
    allocation's shape is not a mismatch). Never raises.
    """
    if not isinstance(message, str) or not message:
        return []
    text = message[:MAX_MESSAGE]
    diffs: list[ShapeDiff] = []
    try:
        for extract in _EXTRACTORS:
            for diff in extract(text):
                if diff is not None and diff not in diffs and len(diffs) < MAX_DIFFS:
                    diffs.append(diff)
    except Exception:  # noqa: BLE001 - a bad regex corner must not fail ingest
        return diffs
    return diffs


def normalise_shape_diff(items: Any) -> list[ShapeDiff]:
    """Validate diffs a client sent: coerce dims to ints, keep unknown dims as None.

    Entries that are not objects or whose shapes are not lists of dimensions are dropped
    rather than rejected: a shape diff is optional evidence, not the incident itself.
    """
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, (list, tuple)):
        return []
    diffs: list[ShapeDiff] = []
    for item in items[:MAX_DIFFS]:
        if not isinstance(item, dict):
            continue
        tensor = item.get("tensor", item.get("name"))
        op = item.get("op", item.get("operation"))
        diff = _diff(
            str(op)[:64] if isinstance(op, (str, int)) and str(op) else "unknown",
            item.get("expected"),
            item.get("actual"),
            tensor=str(tensor)[:200] if isinstance(tensor, (str, int)) and str(tensor) else None,
        )
        if diff is not None:
            diffs.append(diff)
    return diffs


def incompatibility(diff: ShapeDiff) -> float:
    """How far the actual shape is from the expected one, from 0.0 (same) to 1.0.

    A rank change is 1.0: nothing lines up. Otherwise it is the share of mismatched
    dimensions, each weighted ``0.5 + 0.5 * |a - e| / max(a, e)``: any mismatch counts at
    least half (32008 vs 32000 rows cannot be loaded either), a large one counts fully.
    Only dimensions both sides know are compared (None matches anything); with none known
    the score is 0.0. Examples: conv input 1 vs 3 channels in 4-D -> 0.21; checkpoint
    [32008, 64] vs [32000, 64] -> 0.25; matmul 4096 vs 768 inner dim -> 0.91.
    """
    try:
        expected = list(diff.get("expected") or [])
        actual = list(diff.get("actual") or [])
    except (AttributeError, TypeError):
        return 0.0
    if len(expected) != len(actual):
        return 1.0
    total = 0.0
    known = 0
    for want, got in zip(expected, actual, strict=True):
        if not isinstance(want, int) or not isinstance(got, int):
            continue  # None (any size), or junk from an unvalidated diff
        if isinstance(want, bool) or isinstance(got, bool):
            continue
        known += 1
        if want != got:
            total += 0.5 + 0.5 * abs(want - got) / max(abs(want), abs(got))
    return round(min(1.0, total / known), 4) if known else 0.0
