"""The eval's fix-term match: quote marks and line breaks are formatting, words are not."""

from hypothesis import given
from hypothesis import strategies as st

from rca.evaluation.metrics import keyword_hit


def test_code_quotes_do_not_hide_a_fix_term() -> None:
    assert keyword_hit("Upgrade `jax` and `jaxlib` together", ["upgrade jax"])
    assert keyword_hit("Set “use_cache=False” in the config", ["use_cache=false"])


def test_a_quoted_keyword_matches_plain_text() -> None:
    assert keyword_hit("pass strict=False to load_state_dict", ["`strict=False`"])


def test_line_breaks_and_repeated_spaces_are_one_space() -> None:
    assert keyword_hit("Lower the\n  max_tokens of the client", ["lower the max_tokens"])


def test_a_different_term_still_misses() -> None:
    assert not keyword_hit("Upgrade `jaxlib`", ["downgrade jax"])
    assert not keyword_hit("Set `pad_token`", ["pad_token_id"])


def test_empty_and_quote_only_keywords_never_match() -> None:
    assert not keyword_hit("anything at all", [])
    assert not keyword_hit("anything at all", ["", "  ", "``"])


_LATIN = st.characters(max_codepoint=0x24F)  # lower() is context-free here (no final sigma)


@given(st.text(_LATIN), st.text(_LATIN, min_size=1))
def test_a_keyword_written_in_the_text_is_always_found(text: str, word: str) -> None:
    plain = "".join(c for c in word if c not in "`'\"" and not c.isspace())
    if plain:
        assert keyword_hit(f"{text} {plain} {text}", [plain])
