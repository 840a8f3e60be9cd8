"""A plain Markdown page's symptom quotes: runs of their tokens match an error whose details
differ, and the quotes join the page's title field (pure: no database, no model)."""

from __future__ import annotations

from rca.corpus.files import parse_runbook
from rca.retrieval.hybrid import search
from rca.retrieval.index import index_from_runbooks
from rca.retrieval.quoted import QuotedRuns, is_symptom_section, symptom_quotes
from rca.retrieval.signals import build_signals

# Two pages a team might write, no front matter. The upgrade page quotes the error as its
# source showed it (numpy's `float`); the config page says "module" and "attribute" more.
_UPGRADE = """# Attributes removed by a library upgrade

## Symptoms

- `AttributeError: module 'numpy' has no attribute 'float'` right after an upgrade.

## Fix

1. Pin the release before the removal, or use the new name from its release notes.
"""
_CONFIG = """# Module configuration attributes

Every module reads its configuration attribute at import; a module attribute that is not
set, or an attribute of another module, leaves the module without it.

## Fix

1. Set the module attribute (`module.config = load_config()`) before the first import.
"""
_WITH_SIGNALS = "---\nfailure_class: version_incompatibility\nsignals: ['never matches']\n---\n"


def _index(*pages: tuple[str, str]):  # type: ignore[no-untyped-def]
    runbooks = [parse_runbook(text, source=f"{slug}.md") for slug, text in pages]
    return index_from_runbooks(runbooks, embed=False)


def test_symptom_sections_are_the_opening_text_and_headings_that_describe_the_failure() -> None:
    for name in ("Overview", "Symptoms", "What you see", "Error messages", "Seen as"):
        assert is_symptom_section(name), name
    for name in ("Fix", "Remediation", "Diagnosis", "Verify", "Designing signals"):
        assert not is_symptom_section(name), name
    assert symptom_quotes("Symptoms", "`IndexError: index out of range` then `x`") == [
        "IndexError: index out of range",
        "x",
    ]
    assert symptom_quotes("Fix", "run `pip install -U numpy`") == []


def test_four_consecutive_tokens_of_a_quote_match_in_order_and_fewer_or_reordered_do_not() -> None:
    runs = QuotedRuns([["CUDA error: device-side assert triggered"], ["NCCL error: unhandled"]])
    hit = runs.matches("RuntimeError: CUDA error: device-side assert triggered on GPU 3")
    assert hit.tolist() == [1.0, 0.0]
    # cuda, error, device: three tokens in a row only
    assert runs.matches("CUDA error: device lost").tolist() == [0.0, 0.0]
    # every token, in another order
    assert runs.matches("assert triggered: device-side CUDA error").tolist() == [0.0, 0.0]
    assert QuotedRuns([[], []]).matches("anything at all here").tolist() == [0.0, 0.0]


def test_a_plain_pages_quoted_error_line_makes_it_rank_first_for_that_error() -> None:
    index = _index(("upgrade", _UPGRADE), ("config", _CONFIG))
    # Another module and another name than the quote: the whole quote is not in the error,
    # four of its tokens in a row are (attributeerror attribute error module).
    incident = build_signals(
        {
            "error_type": "AttributeError",
            "message": "module 'jax.numpy' has no attribute 'DeviceArray'",
        }
    )
    found = search(incident, None, k=2, index=index)
    assert [r.slug for r in found] == ["upgrade", "config"]
    assert found[0].signal == 1.0
    assert found[1].signal == 0.0


def test_symptom_quotes_join_the_field_of_a_page_without_signals_only() -> None:
    index = _index(("upgrade", _UPGRADE), ("config", _CONFIG))
    assert (
        "module 'numpy' has no attribute 'float'" in index.field_texts[index.position_of["upgrade"]]
    )
    # the config page quotes code only under Fix: its field stays its title
    assert index.field_texts[index.position_of["config"]] == "Module configuration attributes"
    signalled = _index(("upgrade", _WITH_SIGNALS + _UPGRADE))
    assert "numpy" not in signalled.field_texts[0]
    assert signalled.signal_matches(
        "AttributeError: module 'torch' has no attribute 'x'"
    ).tolist() == [0.0]
