"""A step or an answer that tells the user to use a module name the incident says the model
lacks is ruled out (issue 16, a harm class that holdout judges named in generic words: the
fused projection names given as LoRA ``target_modules`` when the message says exactly those
are not found, in a model whose real names are the split projections).

PEFT: "Target modules {peft_config.target_modules} not found in the base model. Please check
the target modules and try again." (``BaseTuner.inject_adapter``), raised when no module name
equals or ends with any listed name (``LoraConfig`` docstring). :mod:`rca.suggestion.module_names`
reads the names and the ones a step or an answer tells the user to use;
``module-named-missing`` in a step's ``unless`` rules it out.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.module_names import (
    misnamed,
    missing_module_harms,
    names_to_use,
    read_shown_modules,
)
from rca.suggestion.premises import contradictions, read_premises
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.step_values import fill_values, incident_values
from rca.suggestion.suggest import write_suggestion
from rca.suggestion.validation import validate
from tests.support.evidence import draft, incident_context, message_context
from tests.support.linear_time import assert_linear
from tests.support.scripted_llm import scripted_llm

_PEFT = ("peft-target-modules-not-found", 0.9)
_NOT_FOUND = (
    "ValueError: Target modules {names} not found in the base model. Please check the target"
    " modules and try again."
)
_FUSED_MISSING = _NOT_FOUND.format(names="{'query_key_value'}")
_SPLIT_MISSING = _NOT_FOUND.format(names="['q_proj', 'v_proj']")
_LLAMA_REPR = """LlamaForCausalLM(
  (model): LlamaModel(
    (embed_tokens): Embedding(32000, 4096)
    (layers): ModuleList(
      (0-31): 32 x LlamaDecoderLayer(
        (self_attn): LlamaAttention(
          (q_proj): Linear(in_features=4096, out_features=4096, bias=False)
          (k_proj): Linear(in_features=4096, out_features=4096, bias=False)
          (v_proj): Linear(in_features=4096, out_features=4096, bias=False)
          (o_proj): Linear(in_features=4096, out_features=4096, bias=False)"""


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        (_SPLIT_MISSING, ("q_proj", "v_proj")),
        (_FUSED_MISSING, ("query_key_value",)),
        (  # peft >= 0.14 adds the layers it was told to look in
            "peft.tuners.tuners_utils.NoMatchingPeftModuleError: Target modules {'qkv_proj',"
            " 'o_proj'} not found in the base model. Please check the target modules and try"
            " again. Note: You specified 'layers_to_transform': [0, 1].",
            ("qkv_proj", "o_proj"),
        ),
        (  # peft's strict modules_to_save check (peft/utils/other.py)
            "ValueError: Target modules {'score'} not found in the base model. Please check"
            " the target modules and try again.",
            ("score",),
        ),
        (
            '  File "peft/mapping.py", line 98\nValueError: Target modules ["attn.c_proj"] not'
            " found in the base model.",
            ("attn.c_proj",),
        ),
        ("Target module 'Wqkv' is not found in the model", ("Wqkv",)),
        # a top-level object lacking a bare name says nothing of nested modules (review)
        ("AttributeError: LlamaForCausalLM has no attribute `transformer`", ()),
        # a string is a regex over whole names: it does not say the name is absent
        ("ValueError: Target modules q_proj not found in the base model.", ()),
        ("ValueError: Target modules all-linear not found in the base model.", ()),
        ("ValueError: Target modules .*\\.(q|v)_proj not found in the base model.", ()),
        ("KeyError: 'model.layers.0.self_attn.qkv_proj'", ()),  # no module lookup shown
        ("AttributeError: 'LlamaModel' object has no attribute 'h'", ()),  # no frame shown
    ],
)
def test_the_names_the_message_says_the_model_lacks_are_read(
    text: str, missing: tuple[str, ...]
) -> None:
    assert read_shown_modules([text]).missing == missing


def test_a_key_error_or_attribute_counts_only_where_modules_are_looked_up() -> None:
    key = "KeyError: 'model.layers.0.self_attn.qkv_proj'"
    shown = read_shown_modules([key], ["module = dict(model.named_modules())[name]"])
    assert shown.missing == ("model.layers.0.self_attn.qkv_proj",)
    attribute = "AttributeError: 'LlamaModel' object has no attribute 'h'"
    assert read_shown_modules([attribute], module_getattr=True).missing == ()  # bare: nested?
    ctx = incident_context(
        attribute,
        _PEFT,
        frames=[{"filename": "/usr/lib/torch/nn/modules/module.py", "function": "__getattr__"}],
    )
    assert read_premises(ctx).relative.modules.missing == ()


def test_printed_modules_are_shown_names() -> None:
    shown = read_shown_modules(_LLAMA_REPR.splitlines())
    assert {"q_proj", "k_proj", "v_proj", "o_proj", "self_attn"} <= shown.shown
    listed = read_shown_modules(["['', 'transformer', 'transformer.h.0.attn.c_attn']"])
    assert {"transformer", "c_attn"} <= listed.shown
    assert not read_shown_modules(["(q_proj): Linear(in_features=8)"]).shown  # one line


@pytest.mark.parametrize(
    ("action", "names"),
    [
        ('Set `target_modules=["qkv_proj"]` in the LoraConfig.', ["qkv_proj"]),
        ("Pass `--lora_target query_key_value`.", ["query_key_value"]),
        (
            "Set target_modules to q_proj and v_proj instead of query_key_value.",
            ["q_proj", "v_proj"],
        ),
        ('Change target_modules from ["qkv_proj"] to ["q_proj", "k_proj"].', ["q_proj", "k_proj"]),
        ("Replace `qkv_proj` with `q_proj` and `v_proj`.", ["q_proj", "v_proj"]),
        ("Use `q_proj`, not `query_key_value`, in `target_modules`.", ["q_proj"]),
        ("Set `target_modules` to the names `model.named_modules()` prints.", []),
        ("Pass `fan_in_fan_out=True` to the LoraConfig.", []),
    ],
)
def test_the_names_an_action_tells_to_use_are_read(action: str, names: list[str]) -> None:
    assert names_to_use(action) == names


def _step_verdicts(message: str, logs: tuple[str, ...] = ()) -> list[bool]:
    ctx = message_context(message, _PEFT, logs=logs)
    premises, values, evidence = read_premises(ctx), incident_values(ctx), ctx.evidence[0]
    return [
        bool(contradictions(evidence.step_metadata(i), premises, "", fill_values(step, values)))
        for i, step in enumerate(evidence.remediation)
    ]


def test_the_fused_names_step_is_ruled_out_when_the_message_lacks_them() -> None:
    fused, split, *_ = _step_verdicts(_FUSED_MISSING)
    assert fused and not split
    action = OfflineProvider().suggest(message_context(_FUSED_MISSING, _PEFT)).action
    # no printed model: the separate projections step names none to use, only the missing
    # name as the one to replace
    assert "`query_key_value`" in action and names_to_use(action) == [], action


def test_the_split_names_the_message_lacks_are_never_names_to_use() -> None:
    """The separate projections step names the missing ones only as those to replace (and
    the printed model's own when shown), so it stands; the fused names step, with no printed
    model to show the layout, is a guess (``attention-layout-guessed``) and does not."""
    fused, split, *_ = _step_verdicts(_SPLIT_MISSING)
    assert not split and fused
    action = OfflineProvider().suggest(message_context(_SPLIT_MISSING, _PEFT)).action
    assert not {"q_proj", "v_proj"} & set(names_to_use(action)), action


def test_printed_modules_rule_out_a_step_naming_none_of_them() -> None:
    message = _NOT_FOUND.format(names="['Wqkv']")
    fused, split, *_ = _step_verdicts(message, logs=tuple(_LLAMA_REPR.splitlines()))
    assert fused and not split


@pytest.mark.parametrize(
    ("action", "ok"),
    [
        ("Set `target_modules=['query_key_value']` in the LoraConfig.", False),
        ("Target the model's fused attention projection in `target_modules`.", False),
        ("Pass --lora_target query_key_value to the training script.", False),
        ("Set `target_modules=['q_proj', 'k_proj', 'v_proj']` instead of query_key_value.", True),
        ("Set `target_modules` to names that `model.named_modules()` prints.", True),
        # a config class or an API named in backticks is no module name: the step it says
        # (the fused projection, query_key_value) still speaks for its modules
        ("Set `target_modules` in your `LoraConfig` to the model's fused projection name.", False),
        (
            "Use the fused attention projection for `target_modules`, as `get_peft_model` expects.",
            False,
        ),
        (
            "Set `target_modules` in your `LoraConfig` to `q_proj` instead of `query_key_value`.",
            True,
        ),
    ],
)
def test_a_reworded_answer_is_held_to_the_names_the_message_lacks(action: str, ok: bool) -> None:
    ctx = message_context(_FUSED_MISSING, _PEFT)
    assert validate(draft(action, _PEFT[0]), ctx).premises_ok is ok


_IDENT = st.from_regex(r"[a-z]{2,6}_[a-z]{2,6}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(fused=_IDENT, split=st.lists(_IDENT, min_size=3, max_size=5, unique=True))
def test_metamorphic_the_verdict_follows_the_names_not_their_spelling(
    fused: str, split: list[str]
) -> None:
    if fused in split:
        return
    message = _NOT_FOUND.format(names="{" + repr(fused) + "}")
    ctx = message_context(message, _PEFT)
    wrong = f"Set `target_modules=['{fused}']` in the LoraConfig."
    right = f"Set `target_modules={split!r}` instead of `{fused}`."
    assert not validate(draft(wrong, _PEFT[0]), ctx).premises_ok
    assert validate(draft(right, _PEFT[0]), ctx).premises_ok
    printed = [f"    ({name}): Linear(in_features=64, out_features=64)" for name in split]
    shown = read_shown_modules(printed)
    assert misnamed([wrong], shown) and not misnamed([right], shown)


def test_an_llm_naming_a_module_the_message_lacks_is_reasked(httpserver) -> None:
    answers = [
        {
            "action": "Set target_modules=['query_key_value'] in the LoraConfig, the fused"
            " attention projection, instead of q_proj and v_proj.",
            "reason": "The model fuses its attention projections.",
            "runbook": _PEFT[0],
            "confidence": 0.8,
        },
        {
            "action": "Set target_modules=['q_proj', 'k_proj', 'v_proj', 'o_proj'] in the"
            " LoraConfig, the model's own separate projections.",
            "reason": "The message says query_key_value is not a module of this model.",
            "runbook": _PEFT[0],
            "confidence": 0.7,
        },
    ]
    provider, requests = scripted_llm(httpserver, *answers)
    outcome = write_suggestion(message_context(_FUSED_MISSING, _PEFT), provider)
    assert len(requests) == 2 and not outcome.attempts[0]["ok"]
    assert "which the message says is not in the model" in str(requests[1]["messages"])
    assert outcome.draft is not None and outcome.validation is not None
    assert outcome.draft.action == answers[1]["action"] and outcome.validation.ok


@given(
    st.text(
        alphabet=st.sampled_from(list("Target modules {'q_proj'} not found`(x): L\n")),
        max_size=3000,
    )
)
def test_arbitrary_text_never_raises(text: str) -> None:
    misnamed([text], read_shown_modules([text], [text], True))


def test_long_text_is_read_in_linear_time() -> None:
    def read(n: int) -> None:
        text = "Target modules ['" + "q_" * (2 * n) + "(a): B(" * n + "instead of " * n
        shown = read_shown_modules([text, "['', '" + "a.b', '" * n], [text], True)
        misnamed([text], shown)
        names_to_use(text)

    assert_linear(read, 500, 20_000)


@pytest.mark.parametrize(
    ("action", "ok"),
    [
        ("Don't use 'query_key_value' on LLaMA; set target_modules to ['q_proj','v_proj']", True),
        (
            "The error says `query_key_value` is not found: LLaMA splits attention, so pass"
            " target_modules=['q_proj','v_proj']",
            True,
        ),
        ("Never pass query_key_value; LLaMA names them q_proj and v_proj.", True),
        ("Set target_modules=['query_key_value']", False),
        ("Set target_modules=['query_key_value'] since the model is not LLaMA", False),
    ],
)
def test_a_name_the_answer_negates_is_not_one_it_tells_to_use(action: str, ok: bool) -> None:
    """Review false positives: "n't" is not ``\\bnot\\b``, and a denial may follow the name."""
    shown = read_shown_modules([_FUSED_MISSING])
    assert (not missing_module_harms(action, shown)) is ok
    assert ("query_key_value" in names_to_use(action)) is not ok


@pytest.mark.parametrize(
    "action",
    [
        "The error says `query_key_value` is not found: LLaMA splits attention, so pass"
        " target_modules=['q_proj','v_proj']",
        "Never pass query_key_value; LLaMA names them q_proj and v_proj.",
        # restates the fused-names step by its words, but names the split projections
        "Don't use 'query_key_value' on LLaMA; set target_modules to ['q_proj','v_proj']",
    ],
)
def test_an_answer_negating_the_missing_name_passes_validation(action: str) -> None:
    ctx = message_context(_FUSED_MISSING, _PEFT)
    assert validate(draft(action, _PEFT[0]), ctx).premises_ok


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("AttributeError: 'LlamaForCausalLM' object has no attribute 'q_proj'", ()),
        ("AttributeError: LlamaForCausalLM has no attribute `q_proj`", ()),
        ("KeyError: 'q_proj'", ("module = dict(model.named_modules())['q_proj']",)),
    ],
)
def test_a_top_level_object_lacking_a_leaf_says_nothing_of_nested_modules(
    text: str, code: tuple[str, ...]
) -> None:
    """Review false positive: ``model.layers.0.self_attn.q_proj`` exists, and PEFT matches by
    suffix, so only a full dotted path is read as missing from these non-PEFT messages."""
    shown = read_shown_modules([text], code, module_getattr=True)
    assert not misnamed(["Use q_proj, v_proj as target_modules in the LoraConfig."], shown)


def test_a_print_cut_before_its_leaves_shows_no_names() -> None:
    """Review false positive: a repr cut at its containers lacks every leaf layer's name."""
    cut = _LLAMA_REPR.split("\n      (0-31)")[0].splitlines()
    assert cut[-1].strip() == "(layers): ModuleList("
    step = 'Set target_modules=["q_proj","v_proj"] in the LoraConfig.'
    assert not read_shown_modules(cut).shown
    assert not misnamed([step], read_shown_modules(cut))
    assert read_shown_modules(_LLAMA_REPR.splitlines()).shown  # the leaves were printed


_PREAMBLE = (
    "Load the base model with `AutoModelForCausalLM.from_pretrained(base)` and print"
    " `model.named_modules()` to see which attention modules it has. "
)


@pytest.mark.parametrize("repeats", [1, 12, 20, 40])
def test_a_long_answer_naming_the_missing_modules_is_still_a_harm(repeats: int) -> None:
    """Review (issue 16): the action was read up to 2,000 characters and 256 words, so a long
    answer's names after that were never checked."""
    action = _PREAMBLE * repeats + "Then set `target_modules=['q_proj', 'v_proj']`."
    shown = read_shown_modules([_SPLIT_MISSING])
    assert missing_module_harms(action, shown), len(action)


def test_a_long_answer_naming_the_missing_modules_fails_validation() -> None:
    action = _PREAMBLE * 20 + "Then set `target_modules=['q_proj', 'v_proj']`."  # 2,900 chars
    ctx = message_context(_SPLIT_MISSING, _PEFT)
    assert not validate(draft(action, _PEFT[0]), ctx).premises_ok


@pytest.mark.parametrize("repeats", [1, 12, 20, 40])
def test_a_long_answer_replacing_the_missing_modules_is_no_harm(repeats: int) -> None:
    # many clauses that move away from something ("not from the cache") before the last one
    preamble = "Load the tokenizer from the base model, not from the adapter. " * repeats * 2
    action = preamble + "Set `target_modules=['query_key_value']` instead of `q_proj`, `v_proj`."
    shown = read_shown_modules([_SPLIT_MISSING])
    assert not missing_module_harms(action, shown), len(action)


def test_names_in_a_long_answer_are_read_in_linear_time() -> None:
    def read(n: int) -> None:
        names_to_use("not from `a_b` " * (n // 15) + "use `q_proj`")
        names_to_use("x_y " * (n // 4))

    assert_linear(read, 1000, 40_000)
