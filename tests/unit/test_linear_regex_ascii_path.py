"""The ASCII fast paths of ``ingest.linear_regex`` find and replace what google-re2 does.

`search`, `match`, `fullmatch` and `sub` skip google-re2's own match loop on ASCII text
(one engine call per match, no generator, no match object for a literal replacement);
google-re2's wrapper, which the pattern keeps, is the reference they must agree with.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest import grouping
from ingest.linear_regex import LinearMatch, LinearPattern
from ingest.linear_regex import compile as linear

PATTERNS: list[LinearPattern] = [p for p, *_ in grouping._NORMALISERS] + [
    linear(source) for source in (r"", r"a*", r"\b", r"x?", r"^", r"(a)|b", r"(?P<n>\d+)", r"\s*")
]
ascii_text = st.text(alphabet="ab 0123456789xX:/.\\-_()[],fFe\n\tcuda", max_size=40)


def _span(match: LinearMatch | None) -> tuple[int, int] | None:
    return None if match is None else match.span()


def _bracket(match: LinearMatch) -> str:
    return f"<{match[0]}>"


@settings(max_examples=300, deadline=None)
@given(text=ascii_text, pos=st.integers(min_value=0, max_value=45))
def test_ascii_search_and_match_agree_with_re2s_own(text: str, pos: int) -> None:
    for pattern in PATTERNS:
        own = pattern._regexp
        assert _span(pattern.search(text)) == _span(own.search(text)), pattern
        assert _span(pattern.search(text, pos)) == _span(own.search(text, pos)), pattern
        assert _span(pattern.match(text)) == _span(own.match(text)), pattern
        assert _span(pattern.fullmatch(text)) == _span(own.fullmatch(text)), pattern
        found = pattern.search(text)
        if found is not None:
            assert found.groups() == own.search(text).groups(), pattern


@settings(max_examples=300, deadline=None)
@given(text=ascii_text, count=st.integers(min_value=0, max_value=3))
def test_ascii_substitution_agrees_with_re2s_own(text: str, count: int) -> None:
    for pattern in PATTERNS:
        own = pattern._regexp
        template = r"[\1]" if pattern.groups else "[\\g<0>]"
        for repl in ("<r>", template, _bracket):
            assert pattern.subn(repl, text, count) == own.subn(repl, text, count), (pattern, repl)
