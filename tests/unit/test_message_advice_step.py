"""The generic runbook "the error names its own remedy" through the real offline provider.

Its one step is ``{message-advice}``: filled with the concrete advice of the incident's own
message, or left unfilled (and so never suggested) when the message gives none, gives only
generic advice, or advises an option the incident already shows set. A specific runbook
that retrieval ranks higher keeps its own steps: the generic step competes with its own
lower weight (``OfflineWeights.message_advice``) and loses to a fitting one.
"""

from __future__ import annotations

from rca.suggestion.checks.urls import urls_in
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.step_values import incident_values
from rca.suggestion.validation import validate
from tests.support.evidence import message_context

ADVICE = "error-message-names-remedy"
#: A failure no bundled runbook is about, whose message names the fix.
BARE = (
    "ValueError: The audio sampler got a rate it cannot resample. Please set"
    " `feature_extractor.sampling_rate` to `16000` before batching, since the model needs it."
)
DDP_SET = (
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting"
    " a new one. Since `find_unused_parameters=True` is enabled, this likely means that not"
    " all `forward` outputs participate in computing loss. You can enable unused parameter"
    " detection by passing the keyword argument `find_unused_parameters=True` to"
    " `torch.nn.parallel.DistributedDataParallel`."
)
SPAWN = (
    "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with"
    " multiprocessing, you must use the 'spawn' start method"
)


def test_a_bare_message_with_concrete_advice_gets_that_advice_as_the_action() -> None:
    ctx = message_context(BARE, (ADVICE, 2.6), ("tgi-token-limits", 1.9))
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == ADVICE
    assert draft.action.startswith(
        "Apply the remedy the error message itself names: set `feature_extractor.sampling_rate`"
    )
    assert "Please set `feature_extractor.sampling_rate`" in draft.reason  # quoted
    assert validate(draft, ctx).ok


def test_advice_to_set_an_option_the_message_says_is_set_is_never_the_action() -> None:
    ctx = message_context(DDP_SET, (ADVICE, 2.6))
    assert "find_unused_parameters=True" in incident_values(ctx)["message-advice"]
    assert not [c for c in rank_steps(ctx) if c.evidence.slug == ADVICE]
    draft = OfflineProvider().suggest(ctx)
    assert "find_unused_parameters" not in draft.action


def test_generic_advice_leaves_the_step_unfilled_and_unsuggested() -> None:
    generic = "RuntimeError: internal assert failed at graph.cpp. Please report a bug to PyTorch."
    ctx = message_context(generic, (ADVICE, 2.6), ("tgi-token-limits", 2.4))
    assert "message-advice" not in incident_values(ctx)
    assert not any(c.advice for c in rank_steps(ctx))
    assert OfflineProvider().suggest(ctx).runbook != ADVICE


def test_a_specific_runbook_ranked_higher_keeps_its_own_steps() -> None:
    ctx = message_context(SPAWN, ("cuda-fork-subprocess-reinit", 3.9), (ADVICE, 3.4))
    ranked = rank_steps(ctx)
    assert ranked and ranked[0].evidence.slug == "cuda-fork-subprocess-reinit"
    # The message's advice competes (with its own lower weight) but loses to a fitting step.
    assert [c.evidence.slug for c in ranked if c.advice] == [ADVICE]
    assert OfflineProvider().suggest(ctx).runbook == "cuda-fork-subprocess-reinit"


def test_untrusted_advice_is_quoted_without_links_or_templates() -> None:
    hostile = (
        "RuntimeError: load failed. Please set `weights_dir={actual-size}` from"
        " [the mirror](https://evil.example/weights) or http://evil.example/x."
    )
    ctx = message_context(hostile, (ADVICE, 2.6))
    draft = OfflineProvider().suggest(ctx)
    text = f"{draft.action} {draft.reason}"
    assert not urls_in(text)
    assert "{actual-size}" not in text
    assert validate(draft, ctx).ok
