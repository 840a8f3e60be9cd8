"""Every pattern the project compiles matches ASCII text with its ASCII twin exactly as with
its Unicode spelling: same match, same groups, for every anchor and start (issue 19).

``ingest.linear_regex`` compiles each pattern twice and runs ASCII text through the twin,
whose ``\\d``, ``\\w`` and ``\\s`` are ASCII classes. Over ASCII text those classes hold
the same characters as the Unicode ones, so nothing may differ; this checks it on the
real patterns (gathered from the modules that compile them) and on odd ones.
"""

from __future__ import annotations

import gc
import importlib

from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.linear_regex import _ANCHOR_BOTH, _ANCHOR_START, _UNANCHORED, LinearPattern
from ingest.linear_regex import compile as linear

MODULES = [
    "ingest.scrubbing.patterns",
    "ingest.grouping",
    "ingest.parsing.stacktrace",
    "ingest.parsing.python_traceback",
    "ingest.parsing.frames",
    "ingest.parsing.java_stacktrace",
    "ingest.parsing.shapes",
    "ingest.parsing.logs",
    "rca.corpus.plain_pages",
    "rca.corpus.files",
    "rca.corpus.sentences",
    "rca.retrieval.tokens",
    "rca.retrieval.signals",
    "rca.retrieval.index",
    "rca.retrieval.quoted",
    "rca.suggestion.incident_facts",
    "rca.suggestion.version_pairs",
    "rca.suggestion.providers.wording",
    "rca.suggestion.providers.incident_view",
    "rca.suggestion.providers.draft",
    "rca.suggestion.premises",
    "rca.suggestion.incident_setting",
    "rca.suggestion.prompts",
    "rca.suggestion.environment_facts",
]
ODD = [
    r"\w+",
    r"\W+",
    r"\d\D",
    r"\s\S",
    r"[\w.-]+",
    r"[^\w]",
    r"[\d\s]+",
    r"\b\w{2,}\b",
    r"(?P<k>\w+)=(?P<v>\S*)",
    r".*?\s",
    r"\Z",
    r"x\s*\Z",
]


def _patterns() -> list[LinearPattern]:
    for name in MODULES:
        importlib.import_module(name)
    found = {id(p): p for p in gc.get_objects() if isinstance(p, LinearPattern)}
    for source in ODD:
        for flags in ({}, {"ignore_case": True}, {"multiline": True, "dotall": True}):
            p = linear(source, **flags)
            found[id(p)] = p
    return list(found.values())


PATTERNS = _patterns()
# ASCII only, with every class boundary the shorthands draw (\x1c-\x1f and \v are
# spaces to one and not the other in some engines) and words the patterns look for.
_CHARS = st.sampled_from([chr(c) for c in range(128)])
_WORDS = st.sampled_from(
    [
        "Error",
        "Traceback (most recent call last):",
        '  File "/srv/a.py", line 3, in f',
        "RuntimeError: x",
        "trace_id=ab12",
        "error_code=E1",
        "level=warn",
        "ERROR",
        "2026-12-05T00:00:00Z",
        "token=abcdefgh",
        "sk-abcdefghijklmnop1234",
        "a@b.io",
        "http://u:p@h",
        "cuda:0",
        "torch.Size([2, 3])",
        "float16",
        "0x1f",
        "12 MiB",
        "\x1c",
        "\x0b",
        "K",
        "s",
        "_",
        "-",
        ".",
    ]
)
_TEXT = st.lists(_CHARS | _WORDS, max_size=40).map("".join)


def test_the_patterns_of_the_project_were_found():
    assert len(PATTERNS) > 100


@settings(max_examples=400, deadline=None)
@given(_TEXT, st.integers(0, 50))
def test_ascii_text_matches_the_same_with_the_twin(text, start):
    data = text.encode("ascii")
    pos = min(start, len(data))
    for pattern in PATTERNS:
        unicode, twin = pattern._regexp._regexp, pattern._raw
        for anchor in (_UNANCHORED, _ANCHOR_START, _ANCHOR_BOTH):
            assert twin.Match(anchor, data, pos, len(data)) == unicode.Match(
                anchor, data, pos, len(data)
            ), (pattern.pattern, text, pos, anchor)
