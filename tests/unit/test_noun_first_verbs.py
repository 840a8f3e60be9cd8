"""A verb read first as a noun opens an action when its object follows (issue 16, fresh
probe: rt010's "Index the image as x[None] so its shape becomes (1, 3, 256, 256)").

"index", "shape" and "size" are kept out of the imperative verbs because an action opening
with them is more often a statement ("Index 3 is out of bounds"); before a determiner they
are a verb and its object. Data: ``noun_first`` and ``determiners`` in
``rca/knowledge/imperative-verbs.toml``.
"""

from __future__ import annotations

import pytest

from rca.suggestion.validation import IMPERATIVE_VERBS, format_ok

REASON = "A lone image lacks the batch axis."


@pytest.mark.parametrize(
    "action",
    [
        "Index the image as x[None] so its shape becomes (1, 3, 256, 256).",
        "Shape the input as (1, 3, 256, 256) before the forward pass.",
        "Size each batch to fit in 16 GiB.",
        "Don't reshape the weights; index the image as `x[None]`.",
    ],
)
def test_a_noun_first_verb_before_its_object_opens_an_action(action: str) -> None:
    assert format_ok(action, REASON) == (True, "")


@pytest.mark.parametrize(
    "action",
    ["Index 3 is out of bounds.", "Size mismatch in layer 2.", "Note the driver version."],
)
def test_the_same_word_as_a_noun_is_no_instruction(action: str) -> None:
    ok, problem = format_ok(action, REASON)
    assert not ok and "imperative verb" in problem


def test_noun_first_verbs_stay_out_of_the_verb_list() -> None:
    """The report reader ends a reason clause at a comma a verb follows: not at "index"."""
    assert not {"index", "shape", "size"} & IMPERATIVE_VERBS
