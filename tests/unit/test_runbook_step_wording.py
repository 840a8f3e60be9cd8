"""Every remediation step of the bundled corpus can become a suggestion.

The offline provider only suggests a step whose wording passes validation (as written, or
without its parenthetical asides). A step that opens with a condition ("When ...", "For
JAX ...") or a verb the format rule does not know, or that reads like a code location
("function an", "llama.cpp"), fails for every incident: its fix can then never be the
action, whatever the incident says. This test finds such steps before an evaluation does.
"""

from __future__ import annotations

from rca.corpus.files import Runbook
from rca.suggestion.checks.code_locations import code_locations
from rca.suggestion.context import remediation
from rca.suggestion.providers.wording import drop_asides, first_sentence, shorten, split_step
from rca.suggestion.step_values import step_wordings
from rca.suggestion.validation import MAX_ACTION_CHARS, MAX_REASON_CHARS, format_ok


def _can_be_suggested(step: str) -> tuple[bool, str]:
    """Whether some wording the provider tries passes the incident-independent checks
    (shortened as :func:`~rca.suggestion.providers.wording.compose` shortens it)."""
    action, reason = split_step(step)
    action = first_sentence(shorten(action), MAX_ACTION_CHARS)
    reason = first_sentence(reason, MAX_REASON_CHARS)
    problems = []
    for variant_action, variant_reason in (
        (action, reason),
        (drop_asides(action), drop_asides(reason)),
    ):
        ok, problem = format_ok(variant_action, variant_reason or "because it fits")
        named = code_locations(f"{variant_action}\n{variant_reason}")
        if ok and not named:
            return True, ""
        problems.append(problem or f"reads as code locations {named}")
    return False, "; ".join(problems)


def test_every_remediation_step_can_become_a_suggestion(runbooks: list[Runbook]) -> None:
    unusable = []
    for rb in runbooks:
        steps, _ = remediation(rb.body)
        for number, step in enumerate(steps, 1):
            ok, problem = _can_be_suggested(step)
            if not ok:
                unusable.append(f"{rb.slug} step {number}: {problem}")
    assert not unusable, "\n".join(unusable)


def test_every_framework_variant_can_become_a_suggestion(runbooks: list[Runbook]) -> None:
    """A ``For tensorflow:`` wording is what a TensorFlow incident gets as the action; one that
    opens with a verb the format rule does not know ("Predict in smaller batches") is lost
    for every such incident, as an unusable step is for all of them."""
    unusable = []
    for rb in runbooks:
        steps, _ = remediation(rb.body)
        for number, step in enumerate(steps, 1):
            for names, wording in step_wordings(step)[1:]:
                ok, problem = _can_be_suggested(wording)
                if not ok:
                    unusable.append(f"{rb.slug} step {number} for {', '.join(names)}: {problem}")
    assert not unusable, "\n".join(unusable)


def test_no_action_is_cut_mid_sentence(runbooks: list[Runbook]) -> None:
    """An action longer than the validator allows, once its asides are dropped, is cut at a
    word with "…": whatever came after the cut (often the remedy itself, "... needs a fresh
    download") never reaches the user. Every wording's first sentence must fit."""
    cut = []
    for rb in runbooks:
        steps, _ = remediation(rb.body)
        for number, step in enumerate(steps, 1):
            for names, wording in step_wordings(step):
                action = first_sentence(shorten(split_step(wording)[0]), MAX_ACTION_CHARS)
                if action.endswith("…"):
                    which = f" for {', '.join(names)}" if names else ""
                    cut.append(f"{rb.slug} step {number}{which}: {action[-60:]}")
    assert not cut, "\n".join(cut)


def test_an_over_long_action_is_found() -> None:
    step = "**Set " + "`a_long_option=True`, " * 12 + "and restart the server.** Reason: x."
    assert first_sentence(shorten(split_step(step)[0]), MAX_ACTION_CHARS).endswith("…")


def test_a_step_opening_with_a_condition_is_caught() -> None:
    ok, problem = _can_be_suggested(
        "**For JAX set `XLA_PYTHON_CLIENT_PREALLOCATE=false`.** Reason: x."
    )
    assert not ok and "imperative verb" in problem
    ok, _ = _can_be_suggested("**Set `XLA_PYTHON_CLIENT_PREALLOCATE=false` for JAX.** Reason: x.")
    assert ok


def test_corpus_breadth_and_sources(runbooks: list[Runbook]) -> None:
    """Issue 16 item 5: at least 130 runbooks, each citing public sources."""
    assert len(runbooks) >= 130
    unsourced = [rb.slug for rb in runbooks if not rb.sources]
    assert not unsourced, f"runbooks without sources: {unsourced}"
    for rb in runbooks:
        for url in rb.sources:
            assert url.startswith("https://"), (rb.slug, url)


def test_every_safe_to_ignore_runbook_can_say_so(runbooks: list[Runbook]) -> None:
    """ "This warning is safe to ignore, because ..." must be a step the provider can choose,
    not only prose: each safe-to-ignore runbook has a suggestible step that says Ignore."""
    for rb in runbooks:
        if rb.failure_class != "safe_to_ignore_warning":
            continue
        steps, _ = remediation(rb.body)
        ignoring = [step for step in steps if split_step(step)[0].lower().startswith("ignore")]
        assert ignoring, f"{rb.slug} has no 'Ignore ...' step"
        assert any(_can_be_suggested(step)[0] for step in ignoring), rb.slug
