"""A size mismatch of tensors that are no vocabulary never gets the vocabulary-resize steps.

"size mismatch for <name>: copying a param with shape ..." names every shape clash of a
checkpoint load; ``resize_token_embeddings`` and the tokenizer steps fix only the one whose
tensors are token embeddings or vocabulary outputs differing in their rows. A detection head
with 60 against 54 class rows (a dev thread, fixed by the labels file) was told to resize the
token embeddings. :mod:`rca.suggestion.vocab_rows` reads ``size-mismatch-not-vocab`` from the
names and shapes; the vocabulary page's steps carry it in ``unless``.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.premises import read_premises
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.validation import validate
from rca.suggestion.vocab_rows import NOT_VOCAB, mismatched_tensors, vocab_row_facts
from tests.support.evidence import draft, message_context

VOCAB = ("checkpoint-size-mismatch-vocab", 0.9)
HEAD = ("checkpoint-size-mismatch-head", 0.8)
_LOAD = "RuntimeError: Error(s) in loading state_dict for Model:\n"


def _line(name: str, checkpoint: list[int], model: list[int]) -> str:
    return (
        f"\tsize mismatch for {name}: copying a param with shape torch.Size({checkpoint}) from"
        f" checkpoint, the shape in current model is torch.Size({model})."
    )


def _message(*lines: str) -> str:
    return _LOAD + "\n".join(lines)


DETECTION_HEAD = _message(
    _line("classification_headers.5.weight", [60, 256, 3, 3], [54, 256, 3, 3]),
    _line("classification_headers.5.bias", [60], [54]),
)
VOCAB_RESIZE = _message(
    _line("model.embed_tokens.weight", [32001, 4096], [32000, 4096]),
    _line("lm_head.weight", [32001, 4096], [32000, 4096]),
)


@pytest.mark.parametrize(
    ("lines", "not_vocab"),
    [
        # class heads: linear, convolutional, with the conv's bias
        (
            [_line("classifier.weight", [9, 768], [5, 768]), _line("classifier.bias", [9], [5])],
            True,
        ),
        ([DETECTION_HEAD], True),
        ([_line("fc.weight", [1000, 512], [10, 512])], True),
        # a decoder stack's layer is not the vocabulary output
        ([_line("decoder.layers.3.fc1.weight", [3072, 768], [4096, 768])], True),
        # a vocabulary-like name with a conv kernel, and that conv's bias
        (
            [
                _line("head.cls_logits.weight", [819, 256, 3, 3], [9, 256, 3, 3]),
                _line("head.cls_logits.bias", [819], [9]),
            ],
            True,
        ),
        # an embedding whose rows agree and width differs: another model size, not a vocab
        ([_line("model.embed_tokens.weight", [32000, 4096], [32000, 5120])], True),
        # vocabularies: embeddings, outputs, their biases, in several models' names
        ([VOCAB_RESIZE], False),
        ([_line("transformer.wte.weight", [50258, 768], [50257, 768])], False),
        ([_line("output.weight", [32008, 4096], [32000, 4096])], False),
        ([_line("cls.predictions.bias", [30528], [30522])], False),
        ([_line("final_logits_bias", [1, 50270], [1, 50265])], False),
        ([_line("generator.0.weight", [24000, 512], [24010, 512])], False),
        ([_line("model.shared.weight", [32100, 512], [32128, 512])], False),
        # one vocabulary tensor among class-head ones: the vocabulary may be what differs
        (
            [_line("classifier.weight", [9, 768], [5, 768]), _line("wte.weight", [5, 8], [6, 8])],
            False,
        ),
        # nothing named
        (["RuntimeError: size mismatch, m1: [64 x 100], m2: [500 x 10]"], False),
        ([], False),
    ],
)
def test_the_fact_needs_every_named_tensor_shown_not_a_vocabulary(
    lines: list[str], not_vocab: bool
) -> None:
    assert (NOT_VOCAB in vocab_row_facts(lines)) is not_vocab


def test_transformers_found_shape_lines_are_read() -> None:
    warning = (
        "Some weights of ViTForImageClassification were not initialized from the model"
        " checkpoint at google/vit-base-patch16-224 and are newly initialized because the"
        " shapes did not match:\n- classifier.weight: found shape torch.Size([1000, 768]) in"
        " the checkpoint and torch.Size([3, 768]) in the model instantiated\n- classifier.bias:"
        " found shape torch.Size([1000]) in the checkpoint and torch.Size([3]) in the model"
        " instantiated"
    )
    assert [name for name, _ in mismatched_tensors([warning])] == [
        "classifier.weight",
        "classifier.bias",
    ]
    assert NOT_VOCAB in vocab_row_facts([warning])


def test_several_mismatches_on_one_line_keep_their_own_shapes() -> None:
    line = " ".join([_line("a.weight", [3, 4], [5, 4]), _line("b.bias", [7], [8])])
    assert mismatched_tensors([line]) == [("a.weight", [(3, 4), (5, 4)]), ("b.bias", [(7,), (8,)])]


def test_the_premises_carry_the_fact_from_the_message() -> None:
    assert NOT_VOCAB in read_premises(message_context(DETECTION_HEAD)).facts
    assert NOT_VOCAB not in read_premises(message_context(VOCAB_RESIZE)).facts


def test_a_class_head_mismatch_is_never_told_to_resize_the_token_embeddings() -> None:
    for ranked in ([VOCAB, HEAD], [VOCAB]):
        action = OfflineProvider().suggest(message_context(DETECTION_HEAD, *ranked)).action
        assert "resize_token_embeddings" not in action, action
        assert "tokenizer" not in action.lower(), action


def test_a_vocabulary_mismatch_still_gets_the_resize() -> None:
    action = OfflineProvider().suggest(message_context(VOCAB_RESIZE, VOCAB, HEAD)).action
    assert "resize_token_embeddings" in action, action


@pytest.mark.parametrize(
    ("message", "contradicted"), [(DETECTION_HEAD, True), (VOCAB_RESIZE, False)]
)
@pytest.mark.parametrize("runbook", [VOCAB[0], HEAD[0]])
def test_an_answer_resizing_the_token_embeddings_fails_for_a_class_head(
    message: str, contradicted: bool, runbook: str
) -> None:
    answer = draft(
        "Load the tokenizer saved with the checkpoint and call"
        " `model.resize_token_embeddings(len(tokenizer))` before loading the weights.",
        runbook,
    )
    check = validate(answer, message_context(message, VOCAB, HEAD))
    assert (not check.premises_ok) is contradicted, check.complaints


# --------------------------------------------------------------------------- metamorphic

#: Module names of layers that are no vocabulary (words free of the vocabulary hints).
_LAYER = st.sampled_from(
    ["classifier", "fc", "bbox_pred", "class_net", "regression_headers", "proj", "cls_score"]
)
_PREFIX = st.sampled_from(["", "model.", "module.", "backbone.", "net.stage2."])
_DIM = st.integers(1, 4096)


@settings(max_examples=60, deadline=None)
@given(prefix=_PREFIX, layer=_LAYER, index=st.integers(0, 9), old=_DIM, new=_DIM, rest=_DIM)
def test_renamed_class_heads_with_other_sizes_are_never_vocabularies(
    prefix: str, layer: str, index: int, old: int, new: int, rest: int
) -> None:
    owner = f"{prefix}{layer}.{index}"
    message = _message(
        _line(f"{owner}.weight", [old, rest, 3, 3], [new, rest, 3, 3]),
        _line(f"{owner}.bias", [old], [new]),
    )
    assert NOT_VOCAB in vocab_row_facts([message])
    linear = _message(_line(f"{prefix}{layer}.weight", [old, rest], [old + new, rest]))
    assert NOT_VOCAB in vocab_row_facts([linear])


@settings(max_examples=60, deadline=None)
@given(
    prefix=st.sampled_from(["", "model.", "base_model.model.model.", "transformer.", "bert."]),
    name=st.sampled_from(
        ["embed_tokens", "word_embeddings", "tok_embeddings", "wte", "embeddings.word_embeddings"]
    ),
    rows=st.integers(2, 200_000),
    added=st.integers(1, 512),
    width=_DIM,
)
def test_renamed_vocabularies_of_other_sizes_are_never_ruled_out(
    prefix: str, name: str, rows: int, added: int, width: int
) -> None:
    message = _message(_line(f"{prefix}{name}.weight", [rows + added, width], [rows, width]))
    assert NOT_VOCAB not in vocab_row_facts([message])


@given(
    st.text(alphabet=st.sampled_from(list("size mismatch for a.b: Size([1, 2])-\n")), max_size=3000)
)
def test_arbitrary_text_never_raises(text: str) -> None:
    vocab_row_facts([text])


@pytest.mark.parametrize(
    "piece", ["size mismatch for a.b: ", "torch.Size([1, 2, 3]) ", "- x: found shape "]
)
def test_reading_is_linear_in_adversarial_text(piece: str) -> None:
    def seconds(size: int) -> float:
        text = (piece * (size // len(piece) + 1))[:size]
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            vocab_row_facts([text])
            best = min(best, time.perf_counter() - started)
        return best

    small, large = seconds(2_000), seconds(80_000)
    assert large < max(1.0, 60 * small), (small, large)
