"""The three checks a vendor-message test file makes, shared so that each file is a table of
documented wordings and nothing else.

A wording is the error as the vendor's troubleshooting, FAQ or migration page prints it; its
fix terms are the words of the fix that page documents. Routing is lexical only
(:mod:`tests.support.vendor_routing`): a runbook must be found by the words its vendor prints.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from rca.corpus.files import match_signals
from rca.suggestion.validation import validate
from tests.support.evidence import bundled_runbooks
from tests.support.vendor_routing import route_message


@dataclass(frozen=True)
class Wording:
    """One documented message: the runbook it must reach and the fix its action must name."""

    slug: str
    error_type: str
    message: str
    fix_terms: tuple[str, ...]

    @property
    def test_id(self) -> str:
        return f"{self.slug}:{self.message[:40]}"


def check_routes_to_its_fix(wording: Wording) -> None:
    """Found first over the whole bundled corpus, cited by the offline provider, its action
    naming every fix term, and the suggestion valid."""
    check_routes(wording.slug, wording.error_type, wording.message, wording.fix_terms)


def check_routes(slug: str, error_type: str, message: str, fix_terms: Iterable[str]) -> None:
    """:func:`check_routes_to_its_fix` for a wording given as its parts."""
    found, ctx, draft = route_message(error_type, message)
    assert found[0].slug == slug, [r.slug for r in found]
    assert draft.runbook == slug, (draft.runbook, draft.action)
    missing = [t for t in fix_terms if t not in draft.action]
    assert not missing, (missing, message, draft.action)
    check = validate(draft, ctx)
    assert check.ok, check.complaints


def check_look_alike_unmatched(slug: str, text: str) -> None:
    """An error of another kind does not match the runbook's signals."""
    matched = match_signals(bundled_runbooks()[slug], text)
    assert not matched, (slug, matched, text)


def check_cites_sources(slugs: set[str]) -> None:
    """Every runbook cites public https sources and has signals."""
    runbooks = bundled_runbooks()
    for slug in sorted(slugs):
        rb = runbooks[slug]
        assert rb.sources and all(s.startswith("https://") for s in rb.sources), slug
        assert rb.signals, slug


def wording_params(wordings: Iterable[Wording], expected_miss: frozenset[str]) -> list[Any]:
    """``wordings`` as pytest params with :attr:`Wording.test_id`-like ids (the message's first
    60 characters); those named in ``expected_miss`` run as strict xfails, so one that starts
    routing fails until it is taken off the list."""
    xfail = pytest.mark.xfail(strict=True, reason="documented wording not routed yet")
    return [
        pytest.param(w, id=w.message[:60], marks=[xfail] if w.message[:60] in expected_miss else [])
        for w in wordings
    ]


def check_expected_misses_named(wordings: Iterable[Wording], expected_miss: frozenset[str]) -> None:
    """Ids are unique and every expected miss names a wording of the table."""
    ids = [w.message[:60] for w in wordings]
    assert len(set(ids)) == len(ids)
    assert set(ids) >= expected_miss


def batch_tests(
    wordings: Sequence[Wording], look_alikes: Mapping[str, Sequence[str]]
) -> tuple[Callable[..., None], Callable[..., None], Callable[[], None]]:
    """The three tests of a batch of runbooks, for a file that is only its two tables::

        (
            test_the_library_message_routes_to_its_documented_fix,
            test_errors_of_other_kinds_do_not_match_the_new_signals,
            test_each_runbook_cites_public_sources_and_has_signals,
        ) = batch_tests(WORDINGS, LOOK_ALIKES)

    (pytest collects them by the names they are bound to)."""

    @pytest.mark.parametrize("wording", wordings, ids=[w.test_id for w in wordings])
    def routes(wording: Wording) -> None:
        check_routes_to_its_fix(wording)

    @pytest.mark.parametrize(
        ("slug", "text"), [(s, t) for s, texts in look_alikes.items() for t in texts]
    )
    def unmatched(slug: str, text: str) -> None:
        check_look_alike_unmatched(slug, text)

    def cited() -> None:
        check_cites_sources(set(look_alikes))

    return routes, unmatched, cited
