"""A non-strict load is never the fix when every key shown carries a wrapper's prefix (issue 16).

``strict=False`` is right when only a few keys differ (a buffer one version saves); when every
key of one side carries ``module.`` / ``_orig_mod.`` / ``model.`` and the other side's do not,
it matches nothing and silently leaves the model random. The messages are worded as PyTorch
prints them (lists often cut with "..." when pasted: decided from the keys shown) and as
Transformers' loading warnings list them.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.key_prefix_sides import read_shown_keys
from rca.suggestion.prefix_shift import prefix_shift, reads_non_strict
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

DDP_FILE = (
    "RuntimeError: Error(s) in loading state_dict for DTNet:\n"
    '\tMissing key(s) in state_dict: "projection.0.weight", "recur_block.0.0.conv1.weight",'
    ' "head.0.weight", "head.2.weight".\n'
    '\tUnexpected key(s) in state_dict: "module.projection.0.weight",'
    ' "module.recur_block.0.0.conv1.weight", "module.head.0.weight", "module.head.2.weight".'
)
CUT_BOTH = (
    "RuntimeError: Error(s) in loading state_dict for VisionTransformer:\n"
    '\tMissing key(s) in state_dict: "pos_embed", "patch_embed.proj.weight",'
    ' "patch_embed.proj.bias", "blocks.0.norm1.weight", ......\n'
    '        Unexpected key(s) in state_dict: "module.pos_embed",'
    ' "module.patch_embed.proj.weight", "module.blocks.0.attn.qkv.weight", ......'
)
COMPILED_CUT = (
    "RuntimeError: Error(s) in loading state_dict for VideoTokenizer:\n"
    '        Unexpected key(s) in state_dict: "_orig_mod.encoder.patch_embed.proj.weight",'
    ' "_orig_mod.encoder.patch_embed.proj.bias",'
    ' "_orig_mod.encoder.transformer.blocks.0.spatial_attn.q_proj.weight", ...'
)
SWAPPED = (
    "RuntimeError: Error(s) in loading state_dict for Detector:\n"
    '\tMissing key(s) in state_dict: "backbone.layer1.0.conv1.weight",'
    ' "backbone.layer1.0.bn1.weight", "backbone.fc.weight".\n'
    '\tUnexpected key(s) in state_dict: "model.layer1.0.conv1.weight",'
    ' "model.layer1.0.bn1.weight", "model.fc.weight".'
)
BUFFERS = (
    "RuntimeError: Error(s) in loading state_dict for MSC:\n"
    '\tUnexpected key(s) in state_dict: "scale.layer1.conv1.bn.num_batches_tracked",'
    ' "scale.layer2.block1.reduce.bn.num_batches_tracked",'
    ' "scale.layer2.block1.conv3x3.bn.num_batches_tracked", ...'
)
ONE_LAYER = (
    "RuntimeError: Error(s) in loading state_dict for ActorCritic:\n"
    '\tUnexpected key(s) in state_dict: "affine.weight", "affine.bias".'
)
PARTLY = (
    "RuntimeError: Error(s) in loading state_dict for ResNet:\n"
    '\tMissing key(s) in state_dict: "fc.weight", "fc.bias".\n'
    '\tUnexpected key(s) in state_dict: "module.fc.weight", "classifier.weight",'
    ' "classifier.bias".'
)
HF_PREFIXED = (
    "Some weights of the model checkpoint at ./ckpt were not used when initializing"
    " BertForSequenceClassification: ['model.bert.embeddings.word_embeddings.weight',"
    " 'model.bert.encoder.layer.0.attention.self.query.weight', 'model.classifier.weight']\n"
    "Some weights of BertForSequenceClassification were not initialized from the model"
    " checkpoint at ./ckpt and are newly initialized: ['bert.embeddings.word_embeddings.weight',"
    " 'bert.encoder.layer.0.attention.self.query.weight', 'classifier.weight']"
)


@pytest.mark.parametrize(
    ("message", "prefix", "cut"),
    [
        (DDP_FILE, "module.", False),
        (CUT_BOTH, "module.", True),
        (COMPILED_CUT, "_orig_mod.", True),
        (SWAPPED, "model.", False),
        (HF_PREFIXED, "model.", False),
        (BUFFERS, None, None),
        (ONE_LAYER, None, None),
        (PARTLY, None, None),
    ],
)
def test_a_prefix_on_every_shown_key_is_read_from_the_keys_shown(message, prefix, cut):
    shift = prefix_shift(read_shown_keys([message]))
    assert (shift.prefix if shift else None) == prefix
    if shift:
        assert shift.cut == cut
        assert ("read from the keys shown" in shift.describe()) == cut
        facts = read_premises(message_context(message)).facts
        assert "state-dict-keys-all-prefixed" in facts


@pytest.mark.parametrize(
    ("action", "non_strict"),
    [
        ("Load the checkpoint with `strict=False`.", True),
        ("Call `model.load_state_dict(sd, strict=False)`.", True),
        ("Load the weights non-strictly and check the returned keys.", True),
        ("Ignore the missing keys and load the rest.", True),
        ("Drop the keys only one side has, then load.", True),
        ("Ignore this warning: the unused weights are the pretraining head.", True),
        ("Remove `strict=False` and fix the key names.", False),
        ("Keep `strict=True` and strip the `module.` prefix.", False),
        ("Strip the `module.` prefix instead of loading with strict=False.", False),
    ],
)
def test_a_non_strict_load_is_read_from_the_action(action, non_strict):
    assert reads_non_strict(action) == non_strict


def _harmful(message: str, action: str, runbook: str = "checkpoint-non-strict-buffers") -> bool:
    ctx = message_context(message, (runbook, 0.9))
    return not validate(draft(action, runbook), ctx).premises_ok


@pytest.mark.parametrize(
    ("message", "action", "harmful"),
    [
        (DDP_FILE, "Load the checkpoint with `strict=False`.", True),
        (CUT_BOTH, "Ignore the missing keys and load with `strict=False`.", True),
        (COMPILED_CUT, "Pass `strict=False` to `load_state_dict`.", True),
        (SWAPPED, "Load non-strictly so the extra keys are skipped.", True),
        (
            DDP_FILE,
            'Strip the prefix: `{k.removeprefix("module."): v for k, v in sd.items()}`.',
            False,
        ),
        (HF_PREFIXED, "Ignore the warning; the pretraining head is not needed.", True),
        (BUFFERS, "Load the checkpoint with `strict=False`.", False),
        (ONE_LAYER, "Load the checkpoint with `strict=False`.", False),
    ],
)
def test_a_non_strict_load_against_a_prefix_on_every_key_fails_validation(message, action, harmful):
    assert _harmful(message, action) == harmful


def test_the_offline_action_for_a_prefixed_cut_list_fixes_the_prefix():
    """Both runbooks retrieved: the non-strict step is ruled out; the prefix step is chosen."""
    ctx = message_context(
        COMPILED_CUT,
        ("checkpoint-non-strict-buffers", 0.9),
        ("checkpoint-keys-module-prefix", 0.85),
    )
    suggestion = OfflineProvider().suggest(ctx)
    assert "strict=False" not in suggestion.action
    assert validate(suggestion, ctx).premises_ok


_KEY = st.from_regex(
    r"(module\.|_orig_mod\.|model\.)?[a-z_]{1,6}(\.[a-z0-9_]{1,6}){0,3}", fullmatch=True
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_KEY, max_size=8), st.lists(_KEY, max_size=8), st.booleans())
def test_the_decision_holds_for_any_key_lists(missing, unexpected, cut):
    def listed(keys: list[str]) -> str:
        return ", ".join(f'"{key}"' for key in keys) + (", ..." if cut else ".")

    message = "RuntimeError: Error(s) in loading state_dict for Net:\n"
    if missing:
        message += f"\tMissing key(s) in state_dict: {listed(missing)}\n"
    if unexpected:
        message += f"\tUnexpected key(s) in state_dict: {listed(unexpected)}\n"
    shift = prefix_shift(read_shown_keys([message]))
    if shift is not None:
        shown = [*missing, *unexpected]
        assert any(key.startswith(shift.prefix) for key in shown)
        if missing and unexpected:  # one side carries it on every key, the other on none
            sides = [
                all(key.startswith(shift.prefix) for key in side) for side in (missing, unexpected)
            ]
            assert any(sides)


def test_the_readers_are_linear_on_adversarial_text():
    def read(n: int) -> None:
        crafted = 'Unexpected key(s) in state_dict: "' + "module." * (3 * n) + '"'
        prefix_shift(read_shown_keys([crafted]))
        reads_non_strict("ignore " + "the " * (5 * n) + "missing keys strict = " * (n // 5))

    assert_linear(read, 500, 10_000)
