"""The words that mark a mention as the old value are one vocabulary (issue 16).

rca/knowledge/old-mentions.toml holds them in groups, each with why; six readers ask for the
groups that hold where they read (rca/suggestion/old_mentions.py). Where a reader's own list
lacked a word of its groups, it now reads it too: those unions are pinned here, each with an
answer the old lists misread.
"""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.linear_regex import compile as linear
from rca.suggestion import old_mentions
from rca.suggestion.checks.conv_layout import channels_last_violations
from rca.suggestion.driver_targets import driver_targets
from rca.suggestion.limit_moves import limit_violations
from rca.suggestion.module_names import names_to_use
from rca.suggestion.named_limits import RuledOutValue
from rca.suggestion.old_mentions import alternation, anywhere, before_mention
from rca.suggestion.prefix_shift import reads_non_strict
from rca.suggestion.step_options import options_set_by
from tests.support.linear_time import assert_linear

_CONV = (
    "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[8, 224, 224, 3]"
    " to have 3 channels, but got 224 channels instead"
)
_BF16 = RuledOutValue("bfloat16", "the T4 (compute capability 7.5) has no bfloat16")


def test_every_group_says_why_and_holds_words() -> None:
    with old_mentions.MENTIONS_FILE.open("rb") as handle:
        data = tomllib.load(handle)["groups"]
    assert data
    for name, group in data.items():
        assert len(group["why"]) > 40, name
        assert group["words"], name
    assert set(old_mentions.groups()) == set(data)


def test_an_unknown_group_is_an_error_not_an_empty_one() -> None:
    with pytest.raises(KeyError, match="no-such-group"):
        alternation("source", "no-such-group")


def test_phrases_stems_and_apostrophes_are_whole_words() -> None:
    before = before_mention("preference", "negation", "removal")
    assert before.search("use (1, 3) instead\n  of ")
    assert before.search("Don’t ") and before.search("dont ") and before.search("do not ")
    assert before.search("after removing ") and not before.search("knot ")
    words = anywhere("negation")
    assert words.search("there is no need to") and not words.search("nothing")
    # Longest first: a search ends after the phrase, not after its first word.
    match = linear_search(alternation("negation"), "no need to downgrade")
    assert match == "no need to"


def linear_search(pattern: str, text: str) -> str:
    found = linear(pattern, ignore_case=True).search(text)
    return found.group(0) if found else ""


def test_conv_layout_reads_the_current_state_words_as_the_source() -> None:
    """ "The loaded (8, 224, 224, 3) batch" is what the incident has: the channels-first
    permutation after it is the target (conv_layout had got/currently/existing only)."""
    action = "Permute the loaded (8, 224, 224, 3) batch with `x.permute(0, 3, 1, 2)`."
    assert channels_last_violations(action, _CONV) == []
    # A target stated with "is" is still read: the state verbs are reused_failing's alone.
    target = "Make sure the input is (8, 224, 224, 3) before the first conv."
    assert channels_last_violations(target, _CONV)


def test_step_options_reads_in_place_of_as_putting_an_option_aside() -> None:
    options = {o.key: o.how for o in options_set_by("Pass `--bf16` in place of `--fp16`.")}
    assert options["fp16"] == "unset"  # was "other": read as a reference after "of"


def test_limit_moves_reads_a_removal_as_moving_away_from_the_value() -> None:
    """ "Remove `--dtype bfloat16`" takes the ruled-out value out (limit_moves had avoid and
    disable, not remove)."""
    assert limit_violations("Remove `--dtype bfloat16` and pass `--dtype half`.", [], [_BF16]) == []
    assert limit_violations("Pass `--dtype bfloat16`.", [], [_BF16])


def test_module_names_reads_in_place_of_and_except_as_names_not_to_use() -> None:
    """The whole clause after the marker is moved away from (module_names lacked "in place
    of" and "except"; :mod:`.step_options` already put the first name aside)."""
    action = "Put c_attn in target_modules in place of q_proj and v_proj."
    assert names_to_use(action) == ["c_attn"]
    action = "Target every linear layer except lm_head and embed_tokens; use c_attn."
    assert names_to_use(action) == ["c_attn"]
    # "swap X for Y" is left out: module_names reads a clause up to "with", not "for".
    assert "c_attn" in names_to_use("Swap `q_proj` for `c_attn` in target_modules.")


def test_driver_targets_reads_the_current_state_and_phrases_before_a_number() -> None:
    assert driver_targets("Keep the running 535 driver; install the cu118 wheels.") == []
    assert driver_targets("Install NVIDIA driver 550 instead of 470.") == [(550,)]
    assert driver_targets("Install NVIDIA driver 550 in place of 470.") == [(550,)]
    assert driver_targets("Driver installed: 535; downgrade the driver to 470.") == [(470,)]
    # "older" names where a downgrade goes: the judged-old group is not the driver's.
    assert driver_targets("Install the older 470 driver.") == [(470,)]


def test_prefix_shift_reads_a_deleted_or_disabled_non_strict_load_as_none() -> None:
    """prefix_shift had remove and drop, not delete or disable."""
    assert not reads_non_strict("Delete strict=False from the load call; strip the prefix.")
    assert not reads_non_strict("Disable the non-strict load and strip the prefix.")
    assert not reads_non_strict("Keep strict loading; strict=False would load nothing.")
    assert reads_non_strict("Load with strict=False.")


@given(st.text(max_size=400))
def test_any_text_in_no_exception_out(text: str) -> None:
    for pattern in (before_mention("source", "negation"), anywhere("removal", "contrast")):
        pattern.search(text)


@pytest.mark.parametrize("piece", ["instead of ", "no no ", "removing", "don'"])
def test_patterns_are_linear_on_long_runs(piece: str) -> None:
    before, words = before_mention("preference", "negation"), anywhere("removal", "negation")
    assert_linear(lambda n: (before.search(piece * n + "x"), words.search(piece * n)))
