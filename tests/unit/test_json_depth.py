"""JSON nested deeper than 32 levels is refused from its bytes, naming the path."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.json_depth import MAX_DEPTH, TooDeep, check_depth


def nested(steps: list, leaf: object = 1) -> object:
    """A document whose path is `steps` (str: an object key, int: an array index)."""
    value = leaf
    for step in reversed(steps):
        if isinstance(step, str):
            value = {"before": "]]}}[[", step: value, "after": "[{"}
        else:
            value = [*(['\\"[', 7] * step)][:step] + [value, "]"]
    return value


def test_thirty_two_levels_pass_thirty_three_are_refused_with_their_path():
    context = ["a", "b", *range(3), *["k"] * 27]  # 32 levels under the incident object
    ok = json.dumps({"service": "s", "inference_context": nested(context[:-1])})
    check_depth(ok, ["body"])
    deep = json.dumps({"service": "s", "inference_context": nested(context)})
    with pytest.raises(TooDeep, match="more than 32 levels") as caught:
        check_depth(deep, ["body"])
    assert caught.value.loc == ["body", "inference_context", "a", "b", 0, 1, 2, *["k"] * 26]


def test_brackets_inside_strings_and_escaped_quotes_do_not_count():
    doc = json.dumps({"msg": "[" * 500, 'we"ird': "\\" + "{" * 100, "list": [[["]]]"]]]})
    check_depth(doc, ["body"])


def test_keys_with_escapes_are_named_as_decoded():
    doc = '{"a\\"b\\u00e9":' + "[" * 40 + "]" * 40 + "}"
    with pytest.raises(TooDeep) as caught:
        check_depth(doc, [])
    assert caught.value.loc[:2] == ['a"bé', 0]


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 100_000,  # never closed
        b"[" * 40 + b"]" * 40,
        b'{"a":' * 5000 + b"1" + b"}" * 5000,
        b"[{" * 20,
    ],
)
def test_deep_or_broken_nesting_is_refused_not_a_recursion_error(raw):
    with pytest.raises(TooDeep):
        check_depth(raw, ["body"])


@pytest.mark.parametrize(
    "raw",
    [b"[" * 16 + b"[]" * 100_000, b'"' + b'\\"' * 100_000, b"]" * 1000, b"", b"not json"],
)
def test_wide_or_unbalanced_shallow_bodies_pass(raw):
    check_depth(raw, ["body"])  # invalid JSON is the parser's to refuse, not this check's


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(max_size=5) | st.integers(0, 3), min_size=0, max_size=45),
    st.sampled_from([None, "x", "]]", [], {}]),
)
def test_refused_exactly_when_deeper_than_32_with_the_path_taken(steps, leaf):
    doc = nested(steps, leaf)
    raw = json.dumps(doc, ensure_ascii=False)
    if _depth(doc) <= MAX_DEPTH:
        check_depth(raw, ["body"])
        return
    with pytest.raises(TooDeep) as caught:
        check_depth(raw, ["body"])
    assert caught.value.loc == ["body", *steps[:MAX_DEPTH]]


@settings(max_examples=500)
@given(
    raw=st.lists(
        st.sampled_from([b"[", b"]", b"{", b"}", b'"', b"\\", b":", b",", b"a"]), max_size=60
    ).map(b"".join),
    max_depth=st.integers(1, 6),
)
def test_the_opener_count_shortcut_never_passes_what_the_full_check_refuses(raw, max_depth):
    """Issue 19: a body with at most `max_depth` openers is passed after two counts; the
    token walk (what names the path of a refusal) finds nothing too deep in any such body."""
    from ingest.json_depth import _maybe_too_deep, _path_of_too_deep

    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        assert _path_of_too_deep(raw, max_depth) is None
        assert not _maybe_too_deep(raw, max_depth)
