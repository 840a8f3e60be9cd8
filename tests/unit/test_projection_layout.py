"""Which way a LoRA ``target_modules`` fix goes follows the incident's own module names
(issue 16): PEFT's "Target modules [...] not found in the base model" listing separate
projections (``q_proj``/``v_proj``) on a model that fuses them, or a fused name
(``query_key_value``, ``Wqkv``) on one that keeps them separate. Only the printed model says
which: ``q_proj``/``v_proj`` missing fits BLOOM as well as BERT or T5, whose separate
projections have other names. :mod:`rca.suggestion.projection_layout` reads the layout into
the facts ``model-attention-fused`` / ``model-attention-separate``, which the runbook's steps
``fit``, and the names into placeholders the chosen step names.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.module_names import names_to_use, read_shown_modules
from rca.suggestion.premises import read_premises
from rca.suggestion.projection_layout import (
    LAYOUT_FACTS,
    layout_facts,
    layout_values,
    load_families,
    projection_layout,
)
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

_PEFT = ("peft-target-modules-not-found", 0.9)
_NOT_FOUND = (
    "ValueError: Target modules {names} not found in the base model. Please check the target"
    " modules and try again."
)
_FUSED_STEP, _SEPARATE_STEP = 0, 1  # the runbook's steps 1 and 2


def _repr(names: list[str]) -> list[str]:
    """A printed attention block with these leaf names (PyTorch's repr)."""
    head = ["LlamaForCausalLM(", "  (model): LlamaModel(", "    (self_attn): Attention("]
    return head + [f"      ({name}): Linear(in_features=64, out_features=64)" for name in names]


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("q_proj", "separate"),
        ("value", "separate"),
        ("q", "separate"),
        ("q_lin", "separate"),  # DistilBERT
        ("wq", "separate"),  # Meta's reference LLaMA: a role letter after the data's prefix
        ("wqkv", "fused"),
        ("wo", ""),
        ("wi", ""),  # T5's feed-forward
        ("W_pack", "fused"),
        ("model.layers.0.self_attn.k_proj", "separate"),
        ("query_key_value", "fused"),
        ("qkv_proj", "fused"),
        ("Wqkv", "fused"),  # MPT: PEFT's default for the type is this one module
        ("c_attn", "fused"),  # GPT-2
        ("Baichuan.W_pack", "fused"),  # Baichuan (the data's own source)
        ("in_proj", "fused"),  # DeBERTa
        ("c_proj", ""),  # listed beside c_attn for btlm: says nothing
        ("fc1", ""),
        ("o_proj", ""),
        ("LlamaAttention", ""),
    ],
)
def test_a_name_is_fused_separate_or_neither(name: str, kind: str) -> None:
    assert load_families().kind(name) == kind


@pytest.mark.parametrize(
    ("texts", "fact"),
    [
        # the printed model decides, whatever is missing
        ([_NOT_FOUND.format(names="['Wqkv']"), *_repr(["q", "k", "v", "o"])], "separate"),
        ([_NOT_FOUND.format(names="['q_proj']"), *_repr(["query_key_value", "dense"])], "fused"),
        ([_NOT_FOUND.format(names="['q_proj']"), *_repr(["W_pack", "o_proj", "gate"])], "fused"),
        (
            [_NOT_FOUND.format(names="['q_proj', 'v_proj']"), *_repr(["wq", "wk", "wv", "wo"])],
            "separate",
        ),
        (
            [_NOT_FOUND.format(names="['q_proj', 'v_proj']"), *_repr(["query", "key", "value"])],
            "separate",
        ),
    ],
)
def test_the_layout_is_read_from_the_printed_model(texts: list[str], fact: str) -> None:
    assert layout_facts(texts) == {f"model-attention-{fact}"}


@pytest.mark.parametrize(
    "texts",
    [
        # the missing names alone: q_proj/v_proj missing fits BLOOM (fused) as well as BERT,
        # T5 or DistilBERT (separate, other names); a fused name missing, a model of any layout
        [_NOT_FOUND.format(names="['q_proj', 'v_proj']")],
        [_NOT_FOUND.format(names="{'query', 'value'}")],
        [_NOT_FOUND.format(names="['query_key_value']")],
        [_NOT_FOUND.format(names="{'Wqkv'}")],
        [_NOT_FOUND.format(names="all-linear")],  # a string: a regex, not a name
        [_NOT_FOUND.format(names="['score']")],  # modules_to_save: no attention role
        [_NOT_FOUND.format(names="['q_proj', 'query_key_value']")],  # both: no direction
        [_NOT_FOUND.format(names="['fc1', 'fc2']")],
        ["AttributeError: 'Foo' object has no attribute 'bar'"],
        [],
    ],
)
def test_names_that_say_no_direction_give_no_fact(texts: list[str]) -> None:
    assert layout_facts(texts) == set()


def test_the_values_name_the_incidents_own_modules() -> None:
    texts = [_NOT_FOUND.format(names="{'Wqkv', 'out_proj'}"), *_repr(["v", "q", "k", "o"])]
    values = layout_values(texts)
    assert values["modules-not-found"] == "`Wqkv` or `out_proj`"  # one clause to turn down
    assert values["shown-separate-projections"] == "`q`, `k`, `v`"  # the roles' order
    assert "shown-fused-projection" not in values
    layout = projection_layout(read_shown_modules(texts))
    assert layout.kind == "separate" and layout.shown_fused == ()


def _chosen(message: str, logs: tuple[str, ...] = ()) -> tuple[int, str]:
    ctx = message_context(message, _PEFT, logs=logs)
    best = rank_steps(ctx)[0]
    return best.position, OfflineProvider().suggest(ctx).action


@pytest.mark.parametrize("names", [["Wqkv"], ["query_key_value"], ["q_proj", "v_proj"]])
def test_missing_names_alone_state_no_layout_and_are_never_names_to_use(names: list[str]) -> None:
    """No printed model: no layout fact, and whichever step is chosen names the missing names
    only as those not to use (the premise ``module-named-missing`` rules the others out)."""
    message = _NOT_FOUND.format(names=repr(names))
    ctx = message_context(message, _PEFT)
    assert read_premises(ctx).facts & LAYOUT_FACTS == set()
    _, action = _chosen(message)
    assert f"`{names[0]}`" in action, action
    assert not set(names) & set(names_to_use(action)), action
    assert validate(OfflineProvider().suggest(ctx), ctx).ok


def test_the_printed_model_names_the_projections_to_use() -> None:
    message = _NOT_FOUND.format(names="['qkv_proj']")
    position, action = _chosen(message, tuple(_repr(["q_lin", "k_lin", "v_lin", "out_lin"])))
    assert position == _SEPARATE_STEP, action
    assert "`q_lin`, `k_lin`, `v_lin`" in action, action
    ctx = message_context(message, _PEFT, logs=tuple(_repr(["q_lin", "k_lin", "v_lin"])))
    assert validate(OfflineProvider().suggest(ctx), ctx).ok
    fused = _repr(["query_key_value", "dense"])
    position, action = _chosen(_NOT_FOUND.format(names="['Wqkv']"), tuple(fused))
    assert position == _FUSED_STEP and "(`query_key_value`)" in action, action


_T5 = ["q", "k", "v", "o"]  # T5Attention
_META = ["wq", "wk", "wv", "wo"]  # Meta's reference LLaMA code


@pytest.mark.parametrize(("shown", "use"), [(_T5, "`q`, `k`, `v`"), (_META, "`wq`, `wk`, `wv`")])
def test_a_printed_model_with_other_separate_names_gets_them_not_the_missing_ones(
    shown: list[str], use: str
) -> None:
    """LLaMA's q_proj/v_proj missing on T5 or Meta-format LLaMA: the separate projections step,
    naming the printed ones, never the missing ones (which would rule it out)."""
    message = _NOT_FOUND.format(names="['q_proj', 'v_proj']")
    ctx = message_context(message, _PEFT, logs=tuple(_repr(shown)))
    assert "model-attention-separate" in read_premises(ctx).facts
    position, action = _chosen(message, tuple(_repr(shown)))
    assert position == _SEPARATE_STEP and use in action, action
    assert set(names_to_use(action)) == set(shown[:3]), action
    assert "fused" not in action, action
    assert validate(OfflineProvider().suggest(ctx), ctx).ok


_WORD = st.from_regex(r"[a-z]{3,7}", fullmatch=True)


@settings(max_examples=40, deadline=None)
@given(stem=_WORD, role=st.sampled_from(["qkv", "query_key_value", "kv"]), sep=_WORD)
def test_metamorphic_the_choice_follows_the_names_not_the_wording(
    stem: str, role: str, sep: str
) -> None:
    """One message wording; renamed modules of each layout are never names to use, and a
    printed model's layout flips the step chosen."""
    fused = f"{stem}_{role}"
    separate = [f"q_{sep}", f"v_{sep}"]
    for missing in ([fused], separate):
        _, action = _chosen(_NOT_FOUND.format(names=repr(missing)))
        assert f"`{missing[0]}`" in action, action
        assert not set(missing) & set(names_to_use(action)), action
    # the same names missing, the printed model shows separate projections: step 2, naming them
    shown = tuple(_repr([f"v_{stem}", f"q_{stem}", f"k_{stem}", f"{stem}_out"]))
    if load_families().roles_of(stem) == set():  # not "key", "wkv": q_key would be fused
        position, action = _chosen(_NOT_FOUND.format(names=repr([fused])), shown)
        assert position == _SEPARATE_STEP and f"`q_{stem}`, `k_{stem}`, `v_{stem}`" in action, (
            action
        )
    # the same fused name missing, but the printed model shows a fused projection: step 1
    shown = tuple(_repr([f"{sep}_qkv", f"{sep}_out"]))
    if fused != f"{sep}_qkv":
        position, action = _chosen(_NOT_FOUND.format(names=repr([fused])), shown)
        assert position == _FUSED_STEP and f"`{sep}_qkv`" in action, action


@given(
    st.text(
        alphabet=st.sampled_from(list("Target modules {'q_kv'} not found`(x): Linear(\n_")),
        max_size=3000,
    )
)
def test_arbitrary_text_never_raises(text: str) -> None:
    layout_facts([text])
    layout_values([text, text])


def test_long_input_is_read_in_linear_time() -> None:
    def read(n: int) -> None:
        text = "Target modules ['" + "q_" * (2 * n) + "'] not found" + "\n  (q_x): Linear()" * n
        layout_facts([text])
        layout_values([text])

    assert_linear(read, 500, 20_000)


def test_no_texts_show_no_layout() -> None:
    assert layout_facts(None) == set()
    assert layout_facts(_repr(["query_key_value", "dense", "fc"])) == {"model-attention-fused"}


@pytest.mark.parametrize("names", [["q_proj", "v_proj"], ["Wqkv"], ["c_proj"]])
def test_without_a_printed_model_the_chosen_step_states_no_layout(names: list[str]) -> None:
    """Review (issue 16): with PEFT's missing names alone the fused step was still chosen and
    said "the model's fused attention projection", a layout nothing showed."""
    message = _NOT_FOUND.format(names=repr(names))
    position, action = _chosen(message)
    assert position != _FUSED_STEP and "fused" not in action, action
    ctx = message_context(message, _PEFT)
    assert validate(OfflineProvider().suggest(ctx), ctx).ok


_FUSED_ANSWER = (
    "Set `target_modules` to the model's fused attention projection `query_key_value`"
    " instead of the names PEFT lists as not found (`q_proj`, `v_proj`)."
)


def test_an_answer_naming_a_fused_projection_no_printed_model_shows_fails() -> None:
    message = _NOT_FOUND.format(names="['q_proj', 'v_proj']")
    result = validate(draft(_FUSED_ANSWER, _PEFT[0]), message_context(message, _PEFT))
    assert not result.premises_ok
    assert any("attention-layout-guessed" in c for c in result.complaints), result.complaints
    # the same answer is right when the printed model shows the fused projection
    shown = message_context(message, _PEFT, logs=tuple(_repr(["query_key_value", "dense"])))
    assert validate(draft(_FUSED_ANSWER, _PEFT[0]), shown).premises_ok
