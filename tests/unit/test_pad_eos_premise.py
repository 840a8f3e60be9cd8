"""Reusing EOS as pad is not suggested when it is what keeps generation from stopping.

A judge's generic harm class (issue 16): "set the padding id to the end-of-sequence id" when
the symptom is generation that never stops (or a model that never learns to stop) because
the two already share one id. :mod:`rca.suggestion.pad_eos` reads ``generation-does-not-stop``
and ``pad-shares-eos-id``; the pad=eos steps carry both in ``unless`` and
:mod:`rca.suggestion.checks.pad_eos` fails the same answer in any wording. The other
direction: transformers' "Asking to pad but the tokenizer does not have a padding token"
still gets pad = eos.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rca.corpus.step_metadata import FACTS, remediation_with_metadata
from rca.suggestion.checks.pad_eos import pad_eos_violations, sets_pad_to_eos
from rca.suggestion.pad_eos import NEVER_STOPS, SHARES_ID, pad_eos_facts
from rca.suggestion.premises import contradictions, read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.validation import validate
from tests.support.evidence import message_context

RUNBOOKS = Path(__file__).resolve().parents[2] / "rca" / "runbooks"
PAD_MISSING = ("tokenizer-pad-token-missing", 0.9)
PADDING = ("seq-too-long-padding-shape", 0.9)
VOCAB = ("embedding-index-vocab-resize", 0.9)
GENERATE = ("warning-generate-pad-token-attention-mask", 0.9)

#: (message, log lines, facts): symptom reports across trainers and servers.
STOPS_NOT = [
    (
        "After fine-tuning Llama-2 with SFTTrainer the model never stops generating and keeps"
        " generating until max_new_tokens is reached.",
        (),
        {NEVER_STOPS},
    ),
    ("The fine-tuned GPT-2 doesn't stop generation; it runs until max_length.", (), {NEVER_STOPS}),
    (
        "Model does not generate the EOS token after training with the Trainer API.",
        (),
        {NEVER_STOPS},
    ),
    ("The model never learns to stop: every completion is 512 tokens.", (), {NEVER_STOPS}),
    (
        "vLLM: the fine-tuned Mistral keeps generating up to max_tokens, </s> is never"
        " emitted; pad_token_id == eos_token_id in the tokenizer config.",
        (),
        {NEVER_STOPS, SHARES_ID},
    ),
    (
        "Generated text repeats until the maximum length.",
        ("tokenizer.pad_token = tokenizer.eos_token", "trainer = SFTTrainer(model, ...)"),
        {SHARES_ID},
    ),
    (
        "Inference output never ends.",
        ("model.generation_config.pad_token_id = tokenizer.eos_token_id",),
        {SHARES_ID},
    ),
    ("The pad token and the eos token are the same id (2) in this tokenizer.", (), {SHARES_ID}),
]
#: Wordings that hold neither fact: the pad = eos step stays right.
NEITHER = [
    (
        "ValueError: Asking to pad but the tokenizer does not have a padding token. Please select"
        " a token to use as `pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or"
        " add a new pad token via `tokenizer.add_special_tokens({'pad_token': '[PAD]'})`.",
        (),
    ),
    ("ValueError: Cannot handle batch sizes > 1 if no padding token is defined.", ()),
    (
        "ValueError: Unable to set proper padding strategy as the tokenizer does not have a"
        " padding token.",
        ("tokenizer = GPT2Tokenizer.from_pretrained('gpt2')",),
    ),
    ("Setting `pad_token_id` to `eos_token_id`:2 for open-end generation.", ()),
    ("Generation stopped at max_length=20; increase max_new_tokens.", ()),
]


def _llm(action: str, runbook: str = PAD_MISSING[0]) -> Draft:
    return Draft(action, "Padding needs a token.", runbook, 0.8, "openai", "test-llm")


@pytest.mark.parametrize(("message", "logs", "facts"), STOPS_NOT)
def test_the_symptom_and_the_shared_id_are_read(message, logs, facts):
    shown = read_premises(message_context(message, logs=logs)).facts
    assert shown & {NEVER_STOPS, SHARES_ID} == facts, sorted(shown)


@pytest.mark.parametrize(("message", "logs"), NEITHER)
def test_advice_and_other_messages_read_neither(message, logs):
    shown = read_premises(message_context(message, logs=logs)).facts
    assert not shown & {NEVER_STOPS, SHARES_ID}, sorted(shown)


@pytest.mark.parametrize("runbook", [PAD_MISSING, PADDING, VOCAB, GENERATE])
@pytest.mark.parametrize(("message", "logs", "facts"), STOPS_NOT[:2] + STOPS_NOT[5:6])
def test_pad_eos_is_never_the_action(message, logs, facts, runbook):
    ctx = message_context(message, runbook, logs=logs)
    actions = [c.action for c in rank_steps(ctx)]
    assert not [a for a in actions if pad_eos_violations(a, facts)], actions
    suggestion = OfflineProvider().suggest(ctx)
    assert not pad_eos_violations(suggestion.action, facts), suggestion.action


@pytest.mark.parametrize(("message", "logs", "facts"), STOPS_NOT[:2] + STOPS_NOT[4:6])
def test_the_tokenizer_runbook_states_which_step_the_symptom_rules_out(message, logs, facts):
    """Its step conditions, not validation alone: the ranking and the LLM prompt read them."""
    body = (RUNBOOKS / f"{PAD_MISSING[0]}.md").read_text(encoding="utf-8")
    (reuse, reuse_meta), (dedicated, dedicated_meta) = remediation_with_metadata(body)[:2]
    premises = read_premises(message_context(message, PAD_MISSING, logs=logs))
    shown = [f"the incident shows {FACTS[fact]}" for fact in sorted(facts)]
    assert set(shown) <= set(contradictions(reuse_meta, premises, reuse)), reuse
    assert not contradictions(dedicated_meta, premises, dedicated), dedicated
    suggestion = OfflineProvider().suggest(message_context(message, PAD_MISSING, logs=logs))
    assert "add_special_tokens" in suggestion.action, suggestion.action


@pytest.mark.parametrize(("message", "logs"), NEITHER[:3])
def test_a_missing_pad_token_still_gets_pad_eos(message, logs):
    suggestion = OfflineProvider().suggest(message_context(message, PAD_MISSING, logs=logs))
    assert sets_pad_to_eos(suggestion.action), suggestion.action


@pytest.mark.parametrize(
    ("action", "harmful"),
    [
        ("Set `tokenizer.pad_token = tokenizer.eos_token` before training.", True),
        ("Use the EOS token as the pad token.", True),
        ("Set pad_token_id to the eos_token_id in the generation config.", True),
        ("Pass `pad_token_id=tokenizer.eos_token_id` to `generate`.", True),
        ("Reuse the end-of-sequence token as pad.", True),
        (
            "Add a dedicated pad token (`tokenizer.add_special_tokens({'pad_token': '[PAD]'})`)"
            " instead of `pad_token = eos_token`, and resize the embeddings.",
            False,
        ),
        ("Keep EOS in the labels: append `tokenizer.eos_token` to every training example.", False),
        ("Pass `eos_token_id=[tokenizer.eos_token_id, eot_id]` to `generate`.", False),
    ],
)
def test_an_llm_answer_reusing_eos_as_pad_fails_validation(action, harmful):
    ctx = message_context(STOPS_NOT[0][0], PAD_MISSING)
    check = validate(_llm(action), ctx)
    assert (not check.premises_ok) == harmful, check.complaints
    if harmful:
        assert any("pad token to the EOS token" in c for c in check.complaints)


def test_the_same_answer_passes_when_no_pad_token_exists():
    ctx = message_context(NEITHER[0][0], PAD_MISSING)
    assert validate(_llm("Set `tokenizer.pad_token = tokenizer.eos_token`."), ctx).premises_ok


# --------------------------------------------------------------------------- properties

_PHRASES = [
    "the model never stops generating",
    "keeps generating until max_new_tokens",
    "it does not produce the eos token",
    "runs until max_length",
]


@given(
    prefix=st.text(alphabet=st.sampled_from(list("abc .,:")), max_size=80),
    which=st.integers(0, len(_PHRASES) - 1),
)
def test_a_symptom_phrase_anywhere_on_a_line_is_read(prefix, which):
    assert NEVER_STOPS in pad_eos_facts([f"{prefix} {_PHRASES[which]}."])


@given(st.text(alphabet=st.sampled_from(list("pad_token=eos _idstop generating\n")), max_size=3000))
def test_arbitrary_text_never_raises(text):
    pad_eos_facts([text], [text])
    pad_eos_violations(text, {NEVER_STOPS})


@pytest.mark.parametrize(
    "piece",
    [
        "never stop ",
        "keeps generating a b c ",
        "pad_token = pad_token = ",
        "pad and eos and pad ",
        "set the pad set the pad to ",
    ],
)
def test_reading_is_linear_in_adversarial_text(piece):
    def seconds(size: int) -> float:
        text = (piece * (size // len(piece) + 1))[:size]
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            pad_eos_facts([text], [text])
            pad_eos_violations(text, {NEVER_STOPS})
            best = min(best, time.perf_counter() - started)
        return best

    small, large = seconds(2_000), seconds(80_000)
    assert large < max(1.0, 60 * small), (small, large)
