"""State_dict key lists decide between renaming every key and skipping a few (issue 16).

"Strip the `module.` prefix" is right when every missing key is an unexpected key with a
prefix added or lost, and harmful when only a buffer or two differ: renaming then breaks
every other key. The facts are read from the lists alone (any key names, any prefix), and a
prefix-family suggestion is rejected when they contradict it, on the offline path and for
an LLM's answer in its own words, citing any runbook it was given.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from werkzeug import Request, Response

from rca.suggestion.premises import read_premises
from rca.suggestion.providers import OfflineProvider, OpenAIProvider
from rca.suggestion.state_dict_keys import differing_keys_text, key_facts, read_key_lists
from rca.suggestion.suggest import write_suggestion
from rca.suggestion.validation import validate
from tests.support.evidence import chat_completion, draft, message_context

PREFIXED = "state-dict-keys-prefixed"
NOT_PREFIXED = "state-dict-keys-not-prefixed"
BUFFER_LIKE = "state-dict-keys-buffer-like"
ONLY_EXTRA = "state-dict-keys-only-extra"

#: Real messages (eval/realworld/cases-k.jsonl and the threads its README names), as posted.
THOP = (
    "RuntimeError: Error(s) in loading state_dict for Darknet:\n\tMissing key(s) in state_dict:"
    ' "total_ops", "total_params", "module_list.total_ops", "module_list.total_params",'
    ' "module_list.0.total_ops", "module_list.0.total_params", "module_list.1.total_ops",'
)
DATAPARALLEL_BUFFERS = (
    "RuntimeError: Error(s) in loading state_dict for DataParallel:\n\tUnexpected key(s) in"
    ' state_dict: "module.encoder.bn1.num_batches_tracked",'
    ' "module.encoder.layer1.0.bn1.num_batches_tracked",'
    ' "module.encoder.layer1.0.bn2.num_batches_tracked",'
    ' "module.encoder.layer1.0.downsample.1.num_batches_tracked".'
)
ONE_BUFFER = (
    "RuntimeError: Error(s) in loading state_dict for HFEncoder:\n        Unexpected key(s) in"
    ' state_dict: "transformer.embeddings.position_ids".'
)
RENAMED = (
    "RuntimeError: Error(s) in loading state_dict for NestedUNet:\nMissing key(s) in"
    ' state_dict: "conv1.weight", "conv1.bias".\nUnexpected key(s) in state_dict:'
    ' "module.conv1.weight", "module.conv1.bias".'
)
UNUSED_LAYER = (
    "RuntimeError: Error(s) in loading state_dict for ActorCritic:\n\tUnexpected key(s) in"
    ' state_dict: "affine.weight", "affine.bias".'
)
COMPILED_CUT = (
    "RuntimeError: Error(s) in loading state_dict for VideoTokenizer:\n        Unexpected"
    ' key(s) in state_dict: "_orig_mod.encoder.patch_embed.proj.weight",'
    ' "_orig_mod.encoder.patch_embed.proj.bias", ...'
)
RUNBOOKS = (
    ("checkpoint-keys-module-prefix", 0.9),
    ("checkpoint-non-strict-buffers", 0.85),
    ("checkpoint-keys-strict-false-misuse", 0.8),
)


@pytest.mark.parametrize(
    ("message", "facts"),
    [
        (THOP, {BUFFER_LIKE}),  # cut short: the other list may be in what was cut
        (DATAPARALLEL_BUFFERS, {NOT_PREFIXED, BUFFER_LIKE, ONLY_EXTRA}),
        (ONE_BUFFER, {NOT_PREFIXED, BUFFER_LIKE, ONLY_EXTRA}),
        (RENAMED, {PREFIXED}),
        (RENAMED.replace("\n", " "), {PREFIXED}),  # both lists pasted on one line
        (UNUSED_LAYER, {NOT_PREFIXED, ONLY_EXTRA}),  # weights, not buffers
        (COMPILED_CUT, set()),  # one side, cut short: nothing known
        ("Error(s) in loading state_dict: size mismatch for fc.weight", set()),
    ],
)
def test_real_key_lists_give_their_facts(message: str, facts: set[str]) -> None:
    assert key_facts(message) == facts


def test_the_differing_keys_are_named_as_a_step_says_them() -> None:
    assert differing_keys_text(ONE_BUFFER) == "`transformer.embeddings.position_ids`"
    assert differing_keys_text(THOP) == "`*.total_ops`, `*.total_params`"
    assert differing_keys_text(RENAMED) == ""  # the prefix pairs them all


_NAME = st.from_regex(r"[a-z][a-z_]{0,7}[a-z]", fullmatch=True)
_KEYS = st.lists(
    st.lists(_NAME, min_size=1, max_size=3).map(".".join), min_size=2, max_size=12, unique=True
)


def _message(missing: list[str], unexpected: list[str]) -> str:
    lines = ["RuntimeError: Error(s) in loading state_dict for Model:"]
    for kind, keys in (("Missing", missing), ("Unexpected", unexpected)):
        if keys:
            lines.append(
                f"\t{kind} key(s) in state_dict: " + ", ".join(f'"{k}"' for k in keys) + "."
            )
    return "\n".join(lines)


@settings(max_examples=150, deadline=None)
@given(keys=_KEYS, prefix=_NAME, added=st.booleans())
def test_every_key_renamed_by_one_prefix_is_prefixed(
    keys: list[str], prefix: str, added: bool
) -> None:
    renamed = [f"{prefix}.{key}" for key in keys]
    missing, unexpected = (keys, renamed) if added else (renamed, keys)
    facts = key_facts(_message(missing, unexpected))
    assert PREFIXED in facts and BUFFER_LIKE not in facts and NOT_PREFIXED not in facts


@settings(max_examples=150, deadline=None)
@given(
    layers=_KEYS,
    buffers=st.lists(_NAME.filter(lambda n: n not in {"weight", "bias"}), min_size=1, max_size=2),
    wrapper=st.one_of(st.just(""), _NAME.map(lambda n: n + ".")),
    extra=st.booleans(),
)
def test_a_few_buffers_in_every_layer_are_buffer_like_under_any_prefix(
    layers: list[str], buffers: list[str], wrapper: str, extra: bool
) -> None:
    keys = [f"{wrapper}{layer}.{name}" for layer in layers for name in buffers]
    missing, unexpected = ([], keys) if extra else (keys, [])
    facts = key_facts(_message(missing, unexpected))
    assert BUFFER_LIKE in facts and NOT_PREFIXED in facts and PREFIXED not in facts
    assert (ONLY_EXTRA in facts) is extra


@settings(max_examples=150, deadline=None)
@given(layers=_KEYS, other=_KEYS)
def test_learned_weights_that_differ_are_never_buffer_like(
    layers: list[str], other: list[str]
) -> None:
    missing = [f"{layer}.weight" for layer in layers]
    unexpected = [f"x{layer}.bias" for layer in other]
    assert BUFFER_LIKE not in key_facts(_message(missing, unexpected))


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=3000), head=st.sampled_from(["Missing", "Unexpected"]))
def test_any_text_reads_without_raising(text: str, head: str) -> None:
    message = f"{head} key(s) in state_dict: {text}"
    lists = read_key_lists(message)
    assert len(lists.missing) + len(lists.unexpected) <= 400
    key_facts(message)
    differing_keys_text(message)


#: A DataParallel model whose checkpoint has one extra buffer: the protocol's harmful example.
WRAPPED_ONE_BUFFER = (
    "RuntimeError: Error(s) in loading state_dict for DataParallel:\n\tUnexpected key(s) in"
    ' state_dict: "module.bert.embeddings.position_ids".'
)
HARMFUL = [
    (
        "Save `model.module.state_dict()` (or the unwrapped model) when training with"
        " DataParallel/DDP/torch.compile.",
        "checkpoint-keys-module-prefix",
    ),
    (
        "Save the unwrapped model's state_dict instead of the wrapper's.",
        "checkpoint-keys-module-prefix",
    ),
    ("Strip the `module.` prefix from every key before loading.", "checkpoint-non-strict-buffers"),
    (
        "Remove the module. prefix with k.replace('module.', '').",
        "checkpoint-keys-strict-false-misuse",
    ),
]


@pytest.mark.parametrize(("action", "runbook"), HARMFUL)
def test_a_prefix_fix_for_a_buffer_only_difference_fails_validation(
    action: str, runbook: str
) -> None:
    ctx = message_context(WRAPPED_ONE_BUFFER, *RUNBOOKS)
    check = validate(draft(action, runbook), ctx)
    assert not check.ok and not check.premises_ok
    assert "does not apply" in " ".join(check.complaints)


def test_the_same_prefix_fix_passes_when_every_key_is_renamed() -> None:
    ctx = message_context(RENAMED, *RUNBOOKS)
    for action, runbook in HARMFUL:
        assert validate(draft(action, runbook), ctx).premises_ok, action


@pytest.mark.parametrize("message", [WRAPPED_ONE_BUFFER, THOP, DATAPARALLEL_BUFFERS, ONE_BUFFER])
def test_offline_suggests_skipping_the_buffers_not_renaming_keys(message: str) -> None:
    ctx = message_context(message, *RUNBOOKS)
    suggestion = OfflineProvider().suggest(ctx)
    action = suggestion.action.lower()
    assert "prefix" not in action and "unwrapped" not in action
    assert "strict=false" in action.replace("`", "").replace(" ", "")
    assert validate(suggestion, ctx).ok
    assert read_premises(ctx).facts >= {BUFFER_LIKE}


def test_offline_names_the_incidents_own_buffer_key() -> None:
    ctx = message_context(ONE_BUFFER, *RUNBOOKS)
    assert "transformer.embeddings.position_ids" in OfflineProvider().suggest(ctx).action


def test_offline_still_strips_the_prefix_that_renames_every_key() -> None:
    ctx = message_context(RENAMED, *RUNBOOKS)
    assert "prefix" in OfflineProvider().suggest(ctx).action.lower()


def test_an_llm_that_rephrases_the_prefix_fix_is_reasked_and_never_stored_valid(httpserver):
    """The LLM's wording shares few words with the runbook step ("save the unwrapped
    model"), and it cites another runbook; its `says` words still hold it to the premise."""
    violating = {
        "action": "Save the unwrapped model's state_dict so keys lose the module. wrapper.",
        "reason": "DataParallel adds module. to every key.",
        "runbook": "checkpoint-non-strict-buffers",
        "confidence": 0.9,
    }
    requests: list[dict] = []

    def handler(request: Request) -> Response:
        requests.append(json.loads(request.data))
        return Response(
            json.dumps(chat_completion(json.dumps(violating))), content_type="application/json"
        )

    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(handler)
    provider = OpenAIProvider("sk-test", httpserver.url_for("/v1"), "test-llm", 5, 0)
    outcome = write_suggestion(message_context(WRAPPED_ONE_BUFFER, *RUNBOOKS), provider)
    assert len(requests) == 3  # the first ask and two re-asks
    first = outcome.attempts[0]
    assert not first["ok"] and any("does not apply" in c for c in first["complaints"])
    assert "buffer" in requests[1]["messages"][-1]["content"]
    assert outcome.draft.provider == "offline" and outcome.validation.ok
    assert "unwrapped" not in outcome.draft.action.lower()
