"""The step ranker reads where an incident says each word (``evidence_words``), the way the
retrieval query does: the message, the user's own source lines from the innermost call out,
library frames, file names. ``bench/step_evidence.py`` re-weighs these places out of fold,
so they must name what the incident shows, and the ranking must weigh exactly them.
"""

from __future__ import annotations

from ingest.parsing.frames import make_frame
from ingest.parsing.logs import entry_from_text
from rca.suggestion.context import AnalysisContext
from rca.suggestion.incident_facts import terms
from rca.suggestion.providers.incident_view import evidence_words, read_incident, source_weight

_LIBRARY = make_frame(
    filename="/usr/lib/python3.11/site-packages/widgets/sweeper.py",
    function="flush_pending",
    module="widgets.sweeper",
    context_line="self.compactor.rebuild(index)",
)
_OUTER = make_frame(filename="/home/me/project/train.py", function="main", context_line="run()")
_INNER = make_frame(
    filename="/home/me/project/jobs.py", function="launch", context_line="cache.resize(capacity)"
)


def _token(word: str) -> str:
    (token,) = terms(word)  # the ranker's own tokens ("resize" -> "resiz")
    return token


def _ctx() -> AnalysisContext:
    return AnalysisContext(
        error_type="RuntimeError",
        message="widget cache exhausted",
        frames=[_OUTER, _INNER, _LIBRARY],  # caller -> callee, the library raised
        logs=[entry_from_text("sweeper stalled")],
    )


def test_each_word_is_placed_where_the_incident_says_it() -> None:
    places = evidence_words(_ctx())
    assert ("message", 0) in places[_token("exhausted")]
    assert ("log", 0) in places[_token("stalled")]
    assert places[_token("resize")] == [("own_code", 0)]  # the innermost call the user made
    assert places[_token("run")] == [("own_code", 1)]  # one frame further out
    assert ("own_name", 0) in places[_token("launch")]
    assert ("library", 0) in places[_token("compactor")] and ("library", 0) in places[
        _token("flush")
    ]
    assert ("path", 0) in places[_token("jobs")] and ("path", 0) in places[_token("widgets")]


def test_the_ranking_weighs_each_word_by_its_best_place() -> None:
    ctx = _ctx()
    words = read_incident(ctx).words
    for token, places in evidence_words(ctx).items():
        assert words[token] == max(source_weight(*place) for place in places)
