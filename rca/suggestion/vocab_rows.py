"""Whether the tensors a size mismatch names could be a vocabulary that grew or shrank.

"size mismatch for model.embed_tokens.weight: copying a param with shape torch.Size([32001,
4096]) from checkpoint, the shape in current model is torch.Size([32000, 4096])" is a
vocabulary resize: tokens were added to the tokenizer, and ``resize_token_embeddings`` (or the
tokenizer saved with the checkpoint) is the fix. The same sentence names every other size
mismatch too (a detection head with 60 against 54 class rows, a convolution of another width,
a model of another hidden size), and for those the vocabulary steps change nothing: no token
matrix differs. What a vocabulary mismatch looks like, in any model:

- the tensor is an embedding or an output projection onto the vocabulary. Models name them
  after that role (``embed_tokens``, ``word_embeddings``, ``tok_embeddings``, ``wte``,
  ``shared``, ``lm_head``, ``embed_out``; an output module called ``output``, ``out``,
  ``decoder``, ``generator``, ``predictions`` or ``head``). A name holding none of these words
  names some other layer;
- it has at most two axes (rows by width, or a bias of one row per token), and what differs is
  its rows: a tensor of more than two axes (a convolution kernel), a bias of such a layer, or a
  matrix whose rows agree while its width differs (another hidden size) is no vocabulary resize.

:data:`NOT_VOCAB` (``size-mismatch-not-vocab``) holds when the message or logs name size-
mismatched tensors (PyTorch's ``size mismatch for <name>``, Transformers' ``- <name>: found
shape ...``) and every one of them is shown not to be a vocabulary matrix by its name or its
shapes. A tensor whose name could be one and whose shapes do not rule it out leaves the fact
unclaimed: an unknown contradicts nothing. Linear time: RE2 (:mod:`ingest.linear_regex`) over
capped lines (:mod:`.text_lines`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.text_lines import first_lines

__all__ = ["NOT_VOCAB", "mismatched_tensors", "vocab_row_facts"]

NOT_VOCAB = "size-mismatch-not-vocab"

_NAMED = linear(
    r"size mismatch for\s+(?P<name>[\w.\-]+)\s*:"
    r"|(?:^|\s)-\s*(?P<found>[\w.\-]+):\s*found shape"
)
_SIZE = linear(r"Size\(\[(?P<dims>[\d, ]{0,120})\]\)")
#: Words (of a name split at dots and underscores) that name a token embedding or a
#: vocabulary's logits wherever they stand: ``embed_tokens``, ``wte``, ``lm_head``, ``shared``.
_VOCAB_WORDS = frozenset(
    {"wte", "wpe", "tok", "token", "tokens", "word", "words", "vocab", "lm", "shared", "logits"}
)
#: Words that name an output projection onto the vocabulary when they name the module owning
#: the tensor (``output.weight``, ``cls.predictions.decoder.weight``, ``generator.0.weight``);
#: deeper in a path they name a stack (``decoder.layers.3.fc1.weight``).
_OUTPUT_WORDS = frozenset({"output", "out", "decoder", "generator", "predictions", "head"})
Shape = tuple[int, ...]


def mismatched_tensors(texts: Sequence[str]) -> list[tuple[str, list[Shape]]]:
    """Each size-mismatched tensor ``texts`` (message and log lines) name, with the shapes
    shown after its name on its line (checkpoint's and model's, in the message's order)."""
    found: list[tuple[str, list[Shape]]] = []
    for line in first_lines(texts):
        matches = list(_NAMED.finditer(line))
        for at, match in enumerate(matches):
            end = matches[at + 1].start() if at + 1 < len(matches) else len(line)
            shapes = [_dims(size.group("dims")) for size in _SIZE.finditer(line[match.end() : end])]
            found.append((match.group("name") or match.group("found"), shapes[:2]))
    return found


def _dims(text: str) -> Shape:
    return tuple(int(part) for part in text.split(",") if part.strip())


def _named_as_vocab(name: str) -> bool:
    """Whether the name could be a token embedding's or a vocabulary output's."""
    parts = name.lower().split(".")
    words = [word for part in parts for word in part.replace("-", "_").split("_")]
    if any(word.startswith("emb") or word in _VOCAB_WORDS for word in words):
        return True
    owner = [part for part in parts[:-1] if not part.isdigit()]
    return bool(owner) and bool(set(owner[-1].split("_")) & _OUTPUT_WORDS)


def _more_than_two_axes(shapes: list[Shape]) -> bool:
    return any(len(shape) > 2 for shape in shapes)


def _width_differs(shapes: list[Shape]) -> bool:
    """Two matrices whose rows (several of them) agree while their widths differ."""
    if len(shapes) != 2 or len(shapes[0]) != 2 or len(shapes[1]) != 2:
        return False
    (rows, width), (other_rows, other_width) = shapes
    return rows == other_rows and rows > 1 and width != other_width


def vocab_row_facts(texts: Sequence[str]) -> set[str]:
    """:data:`NOT_VOCAB` when ``texts`` name size-mismatched tensors and none of them can be
    a vocabulary matrix whose rows differ; nothing when they name none, or one that can."""
    tensors = mismatched_tensors(texts)
    if not tensors:
        return set()
    # A layer with a kernel of more than two axes is a convolution: its bias is no vocabulary's.
    convolutions = {
        name.rpartition(".")[0] for name, shapes in tensors if _more_than_two_axes(shapes)
    }
    for name, shapes in tensors:
        shown_other = _more_than_two_axes(shapes) or _width_differs(shapes)
        in_convolution = "." in name and name.rpartition(".")[0] in convolutions
        if _named_as_vocab(name) and not shown_other and not in_convolution:
            return set()
    return {NOT_VOCAB}
