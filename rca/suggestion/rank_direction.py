"""Which way an input's rank is off: the message says it has MORE axes than the layer takes.

"Add the batch axis (``np.expand_dims(x, 0)``)" is the usual fix for a rank mismatch, and
``fits: [batch-axis-missing]`` only prefers it. When the message shows the input already has
more axes than the operation accepts ("expected ndim=4, found ndim=5", a conv2d "but got
input of size: [1, 6, 6, 512, 512]", ONNX Runtime's "Got: 5 Expected: 4"), adding one makes
the mismatch worse: the fix is to drop the extra axis (an image batched twice, a dataset
batched before ``fit`` batches it again) or to use the layer for that rank. This module reads
the direction, as the fact :data:`EXTRA_AXIS`; steps that add an axis carry it in ``unless``
and :mod:`rca.suggestion.checks.added_axis` fails any suggestion that adds one. The other
direction is :data:`LACKS_AXIS`, which rules out the steps that drop an axis.

The wordings read, each with the rank the operation accepts (the larger one where it names
two, "3D (unbatched) or 4D (batched)") and the rank it found:

- TF/Keras: ``expected ndim=4, found ndim=5`` (also ``min_ndim``/``max_ndim``), ``expected
  shape=(None, 28, 28), found shape=(None, 1, 28, 28)``, ``constructed with shape (...) ...
  called on an input with incompatible shape (...)``, and Keras 2's ``expected input_1 to have
  4 dimensions, but got array with shape (...)``;
- PyTorch: ``Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size:
  [...]``, ``Expected 4-dimensional input for 4-dimensional weight [...], but got 5-dimensional
  input``, the norm layers' ``expected 4D input (got 5D input)``, the recurrent layers'
  ``Expected input to be 2D or 3D, got 4D input`` and pooling's ``Expected 3D or 4D (batch
  mode) tensor ... but got: [...]``;
- ONNX Runtime: ``Invalid rank for input: x Got: 5 Expected: 4``;
- JAX: ``conv_general_dilated lhs and rhs must have the same number of dimensions, but got
  (input shape) and (kernel shape)``;
- and the incident's parsed shape diffs of an input or a convolution.

A fact holds when some wording shows that direction and none the other (two readings that
disagree claim nothing). Linear time: RE2 (:mod:`ingest.linear_regex`) over at
most :data:`_MAX_MESSAGE` characters, each pattern tried only when its literal is present.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ingest.linear_regex import LinearMatch, LinearPattern
from ingest.linear_regex import compile as linear
from ingest.parsing.shape_ops import op_kind
from ingest.parsing.shapes import ShapeDiff, parse_dims

__all__ = ["EXTRA_AXIS", "LACKS_AXIS", "RankMismatch", "rank_facts", "read_rank_mismatches"]

EXTRA_AXIS = "input-has-extra-axis"
#: The other way: fewer axes than accepted, which rules out the steps that drop one.
LACKS_AXIS = "input-lacks-axis"

_MAX_MESSAGE = 100_000
_MAX_MATCHES = 8
_RANK = r"(\d{1,2})"
_DIMS = r"([^()\[\]\n]{0,200})"
#: Shape diffs whose ``expected`` is what an operation takes of its input (not a checkpoint's
#: tensor, a matmul's inner size or a broadcast).
_INPUT_OPS = frozenset({"input", "conv"})


@dataclass(frozen=True)
class RankMismatch:
    """A rank mismatch as the message states it: the largest rank the operation accepts, the
    rank of what it was given, and the smallest rank it accepts (the same but where it
    names two: "3D (unbatched) or 4D (batched)")."""

    accepted: int
    found: int
    lowest: int | None = None

    @property
    def more(self) -> bool:
        return self.found > self.accepted

    @property
    def fewer(self) -> bool:
        return self.found < (self.accepted if self.lowest is None else self.lowest)


def _form(needle: str, pattern: str) -> tuple[str, LinearPattern]:
    """A wording: a literal every match holds (tested first: most messages hold none)."""
    if needle not in pattern.replace("\\", ""):
        raise ValueError(f"{needle!r} is not written out in {pattern!r}")
    return needle, linear(pattern)


def _rank(dims: str) -> int | None:
    parsed = parse_dims(dims)
    return len(parsed) if parsed else None


def _count(accepted: str | None, found: str | None) -> RankMismatch | None:
    return RankMismatch(int(accepted), int(found)) if accepted and found else None


def _shapes(accepted: str, found: str) -> RankMismatch | None:
    want, got = _rank(accepted), _rank(found)
    return RankMismatch(want, got) if want and got else None


def _either(low: str | None, high: str | None, found: int | None) -> RankMismatch | None:
    ranks = [int(r) for r in (low, high) if r]
    return RankMismatch(max(ranks), found, min(ranks)) if ranks and found else None


#: (wording, how its groups give the mismatch)
_FORMS: list[tuple[tuple[str, LinearPattern], str]] = [
    (_form("found ndim=", rf"expected (?:min_|max_)?ndim={_RANK}, found ndim={_RANK}"), "count"),
    (_form("found shape=(", rf"expected shape=\({_DIMS}\), found shape=\({_DIMS}\)"), "shapes"),
    (
        _form(
            "called on an input with incompatible shape (",
            rf"constructed with shape \({_DIMS}\) for input [^\n]{{0,300}}?, but it was called on"
            rf" an input with incompatible shape \({_DIMS}\)",
        ),
        "shapes",
    ),
    (
        _form(
            " dimensions, but got array with shape (",
            rf"expected \S{{1,200}} to have {_RANK} dimensions, but got array with shape"
            rf" \({_DIMS}\)",
        ),
        "count-shape",
    ),
    (
        _form(
            "D (batched) input to ",
            rf"Expected {_RANK}D \(unbatched\) or {_RANK}D \(batched\) input to \w{{1,40}}, but"
            rf" got input of size:?\s?\[{_DIMS}\]",
        ),
        "either-shape",
    ),
    (
        _form(
            "-dimensional input for ",
            rf"Expected {_RANK}-dimensional input for \d{{1,2}}-dimensional weight[^\n]{{0,200}}?"
            rf",\s*but got {_RANK}-dimensional input",
        ),
        "count",
    ),
    (
        _form(" input (got ", rf"expected {_RANK}D(?: or {_RANK}D)? input \(got {_RANK}D input\)"),
        "either-count",
    ),
    (
        _form("Expected input to be ", rf"Expected input to be {_RANK}D or {_RANK}D, got {_RANK}D"),
        "either-count",
    ),
    (
        _form(
            "(batch mode) tensor",
            rf"Expected {_RANK}D or {_RANK}D \(batch mode\) tensor[^\[\n]{{0,120}}but got:?\s?"
            rf"\[{_DIMS}\]",
        ),
        "either-shape",
    ),
    (
        _form("input must have ", rf"input must have {_RANK} dimensions, got {_RANK}"),
        "count",
    ),
    (
        _form(
            "Invalid rank for input: ",
            rf"Invalid rank for input: \S{{1,200}} Got: {_RANK} Expected: {_RANK}",
        ),
        "found-first",
    ),
    (
        _form(
            "must have the same number of dimensions, but got (",
            rf"lhs and rhs must have the same number of dimensions, but got \({_DIMS}\) and"
            rf" \({_DIMS}\)",
        ),
        "input-kernel",
    ),
]


def _read(kind: str, m: LinearMatch) -> RankMismatch | None:
    """The mismatch one match states, by how its wording orders its groups."""
    if kind == "count":
        return _count(m[1], m[2])
    if kind == "shapes":
        return _shapes(m[1], m[2])
    if kind == "count-shape":
        return _count(m[1], str(_rank(m[2]) or ""))
    if kind == "either-shape":
        return _either(m[1], m[2], _rank(m[3]))
    if kind == "either-count":
        return _either(m[1], m[2], int(m[3]))
    if kind == "found-first":
        return _count(m[2], m[1])
    return _shapes(m[2], m[1])  # input-kernel: the kernel's rank is what the input needs


def read_rank_mismatches(message: str, diffs: Sequence[ShapeDiff] = ()) -> Iterator[RankMismatch]:
    """Every rank mismatch the message states, then those of its input shape diffs."""
    text = message[:_MAX_MESSAGE] if isinstance(message, str) else ""
    for (needle, pattern), kind in _FORMS:
        if needle not in text:
            continue
        for count, m in enumerate(pattern.finditer(text)):
            if count >= _MAX_MATCHES:
                break
            found = _read(kind, m)
            if found is not None:
                yield found
    for diff in list(diffs)[:_MAX_MATCHES]:
        expected, actual = diff.get("expected") or [], diff.get("actual") or []
        if op_kind(diff.get("op")) in _INPUT_OPS and expected and actual:
            yield RankMismatch(len(expected), len(actual))


def rank_facts(message: str, diffs: Sequence[ShapeDiff] = ()) -> set[str]:
    """:data:`EXTRA_AXIS` when the incident shows an input with more axes than accepted and
    nothing shows one with fewer; :data:`LACKS_AXIS` the other way round."""
    mismatches = list(read_rank_mismatches(message, diffs))
    more = any(m.more for m in mismatches)
    fewer = any(m.fewer for m in mismatches)
    if more != fewer:
        return {EXTRA_AXIS if more else LACKS_AXIS}
    return set()
