"""Size mismatches whose shapes are empty tensors: partitioned weights, not a different layer.

"size mismatch for model.embed_tokens.weight: copying a param with shape torch.Size([0]) from
checkpoint, the shape in current model is torch.Size([32002, 4096])" reads like a head or vocab
size mismatch, and the message itself suggests ``ignore_mismatched_sizes=True``. But a layer
of no elements is no layer size: it is the placeholder ZeRO-3 (and FSDP's sharded state) leaves
in a rank's state_dict when parameters are saved without gathering them. The fix is to save or
convert the full weights (``stage3_gather_16bit_weights_on_model_save``, ``zero_to_fp32.py``,
a full state dict); resizing the layer or skipping the mismatched tensors loads nothing, and
silently. The same empty shape on the *model's* side means the model was built partitioned
(under ``deepspeed.zero.Init``) when the full weights are loaded into it.

:func:`empty_tensor_facts` reads the facts ``checkpoint-tensors-empty`` and
``model-tensors-empty`` (:data:`rca.corpus.step_metadata.FACTS`) from the incident's shape
diffs and from lines that print a tensor's shape as empty (``name : torch.Size([0])``,
``tensor([], ...)``); :func:`resize_violations` says when an action changes a layer's size or
skips the mismatched tensors though the shapes are empty. The size-changing names are PyTorch's
and Transformers' own arguments and methods for that, not words of any case.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ingest.linear_regex import compile as linear
from ingest.parsing.shape_ops import op_kind
from ingest.parsing.shapes import ShapeDiff
from rca.retrieval.tokens import tokenize

__all__ = ["RESIZE_NAMES", "empty_tensor_facts", "resize_violations"]

_MAX_TEXT = 20_000
_MAX_ACTION = 2000
#: Arguments and methods that change a layer's size or skip tensors whose sizes differ.
RESIZE_NAMES = frozenset(
    {
        "ignore_mismatched_sizes",
        "resize_token_embeddings",
        "num_labels",
        "num_classes",
        "vocab_size",
        "in_features",
        "out_features",
        "skip_mismatch",
    }
)
#: Verbs that change a layer's size.
_RESIZE_VERBS = frozenset({"resize", "reshape", "shrink", "enlarge", "reinitialize"})
#: A printed parameter of no elements: "name : torch.Size([0])", "tensor([], device=...)".
_EMPTY_PRINTED = linear(r"torch\.Size\(\[0\]\)|\btensor\(\[\]")


def _empty(dims: Iterable[int | None]) -> bool:
    known = [dim for dim in dims if isinstance(dim, int)]
    return bool(known) and math.prod(known) == 0


def empty_tensor_facts(message: str, diffs: Sequence[ShapeDiff]) -> set[str]:
    """``checkpoint-tensors-empty`` when a load's checkpoint side (or a printed tensor) has no
    elements, ``model-tensors-empty`` when the model's side has none."""
    facts: set[str] = set()
    loads = [diff for diff in diffs if op_kind(diff.get("op")) == "load_state_dict"]
    for diff in loads:
        if _empty(diff.get("actual") or []):
            facts.add("checkpoint-tensors-empty")
        if _empty(diff.get("expected") or []):
            facts.add("model-tensors-empty")
    if not loads and _EMPTY_PRINTED.search((message or "")[:_MAX_TEXT]):
        facts.add("checkpoint-tensors-empty")
    return facts


def resize_violations(action: str, facts: Iterable[str]) -> list[str]:
    """Why an action that resizes a layer or skips mismatched sizes cannot fix empty tensors."""
    shown = set(facts)
    side = (
        "the checkpoint's"
        if "checkpoint-tensors-empty" in shown
        else "the model's"
        if "model-tensors-empty" in shown
        else None
    )
    if side is None:
        return []
    text = (action or "")[:_MAX_ACTION]
    names = {word for word in RESIZE_NAMES if word in text.lower()}
    verbs = set(tokenize(text)) & _RESIZE_VERBS
    if not names and not verbs:
        return []
    said = ", ".join(sorted(names | verbs))
    return [
        f"{side} tensors are empty (torch.Size([0])): partitioned weights saved or built"
        f" without gathering, not a layer of another size, so {said} loads nothing; gather"
        " or consolidate the full weights"
    ]
