"""A step that quotes the error's own wording as its condition is the step about this incident.

Runbook steps sometimes say when they apply in the words the failure prints ("create the
client with `ssl=True` when the error says `Trying to connect an http1.x server`"). When the
incident's message says it, that step wins over the runbook's first step; when it does not,
the runbook's order stands. :mod:`rca.suggestion.quoted_wording` reads the quotes.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rca.suggestion.context import AnalysisContext, Evidence
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.quoted_wording import quoted_text, quotes_incident, step_quotes
from tests.support.evidence import incident_context

_STEP = (
    "**Create the client with `ssl=True` when the error says `Trying to connect an\n"
    "   http1.x server`.** Reason: a plaintext channel cannot talk to a TLS endpoint."
)


def test_a_multi_word_backticked_span_is_a_quote_and_a_name_is_not() -> None:
    assert step_quotes(_STEP) == (("trying to connect an http1.x server",),)
    assert step_quotes("**Pass `ignore_mismatched_sizes=True`.** Reason: the head.") == ()
    # Code with punctuation between two names is not a phrase of three words.
    assert step_quotes("**Use `Client(url=..., ssl=True)`.**") == ()


def test_an_unfilled_placeholder_is_no_quote() -> None:
    assert step_quotes("**Set it when `the {option} is not set` shows.**") == ()


def test_an_ellipsis_in_a_quote_stands_for_any_text_in_between() -> None:
    step = "**Pin numpy when `Cannot convert a symbolic Tensor ... to a numpy array` shows.**"
    shown = quoted_text(
        "NotImplementedError",
        "Cannot convert a symbolic Tensor (lstm/strided_slice:0) to a numpy array.",
        [],
    )
    assert quotes_incident(step, shown)
    # The pieces must come in the quote's order.
    reversed_order = quoted_text("", "to a numpy array; Cannot convert a symbolic Tensor", [])
    assert not quotes_incident(step, reversed_order)


def test_case_quote_marks_and_line_breaks_do_not_matter() -> None:
    shown = quoted_text("", "last error: TRYING to connect an\n  'http1.x' server", [])
    assert quotes_incident(_STEP, shown)
    assert not quotes_incident(_STEP, quoted_text("", "failed to connect to all addresses", []))


def test_an_error_log_line_counts_as_the_message_does() -> None:
    assert quotes_incident(_STEP, quoted_text("", "", ["E: trying to connect an http1.x server"]))


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)


@given(st.text(max_size=300), st.text(max_size=300))
def test_any_text_reads_without_error(step: str, message: str) -> None:
    for pieces in step_quotes(step):
        words = [w for piece in pieces for w in piece.split(" ") if any(c.isalpha() for c in w)]
        assert len(words) >= 3
    assert quotes_incident(step, quoted_text("", message, [message])) in (True, False)


@given(st.lists(_WORD, min_size=3, max_size=6), st.text(max_size=200), st.text(max_size=200))
def test_a_phrase_the_message_says_is_found_wherever_it_stands(
    words: list[str], before: str, after: str
) -> None:
    phrase = " ".join(words)
    step = f"**Do the fix when `{phrase}` is printed.**"
    shown = quoted_text("", f"{before}\n{phrase.upper()}\n{after}", [])
    assert quotes_incident(step, shown)


def _runbook(*steps: str) -> Evidence:
    return Evidence(
        slug="widget-failure",
        title="Widget failure",
        failure_class="widget",
        text="The widget fails.",
        remediation=steps,
        score=0.9,
    )


_FIRST = "**Restart the widget service.** Reason: most widget failures are transient."
_SECOND = "**Free disk space for the widget cache.** Reason: a full disk stops widgets."
_THIRD = "**Update the widget to its latest release.** Reason: releases fix widget bugs."
_QUOTING = (
    "**Register the widget plugin again when the error says `no plugin registered for`.**"
    " Reason: a widget without its plugin cannot start."
)


def test_the_step_quoting_the_message_wins_over_the_first_step() -> None:
    runbook = _runbook(_FIRST, _SECOND, _THIRD, _QUOTING)
    said = AnalysisContext("WidgetError", "no plugin registered for widget", evidence=[runbook])
    assert rank_steps(said)[0].position == 3
    other = AnalysisContext("WidgetError", "widget 'gear' timed out", evidence=[runbook])
    assert rank_steps(other)[0].position == 0


def test_triton_tls_wording_gets_the_tls_step_and_a_refused_port_does_not() -> None:
    tls = incident_context(
        "InferenceServerException: [StatusCode.UNAVAILABLE] failed to connect to all addresses;"
        " last error: INTERNAL: ipv4:10.0.0.5:443: Trying to connect an http1.x server",
        ("triton-client-cannot-connect", 0.9),
        logs=["tritonclient: 2.34.0 with extra grpc"],
    )
    assert "ssl=True" in rank_steps(tls)[0].action
    refused = incident_context(
        "InferenceServerException: [StatusCode.UNAVAILABLE] failed to connect to all addresses;"
        " last error: UNKNOWN: ipv4:127.0.0.1:8000: Failed to connect to remote host",
        ("triton-client-cannot-connect", 0.9),
    )
    assert "ssl=True" not in rank_steps(refused)[0].action
