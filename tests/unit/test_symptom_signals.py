"""A runbook's signals recognise the errors its own Symptoms section quotes.

Every bundled runbook quotes how its failure is printed (``## Symptoms``) and lists
``signals``, the regexes retrieval matches against the incident's ``error_type: message``
(docs/RUNBOOKS.md). When the two drift apart (a signal written for one wording, the symptom
quoting another: a backtick the printed message lacks, "4-bit or 8-bit" where the regex
expects one of them, a class name where the regex expects "to wrap"), the runbook's own
documented error gets no prior from it and routes to whichever sibling's signal matches it.
A check of all Symptoms lines against all signals found 49 lines that matched only another
runbook's signals (issues 15 and 16); the ones that were the runbook's own wording now match.

Checked: every quoted line that reads as a raised error (``SomeError: message`` with a
message of at least four words, :func:`typed_error_lines`). Not checked: log lines, code and
option names, and elided quotes; lines whose wording many failures print
(:data:`SHARED_WORDINGS`), where the runbook is told apart by its other lines and by its
steps' premises, not by a signal every sibling would share.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from rca.corpus.files import Runbook, bundled_runbook_dir, load_directory, match_signals
from rca.corpus.markdown import blocks, sections

#: Wordings several failures print, each belonging to at least two runbooks (a test
#: checks it): a signal for one of them would give every runbook quoting it the same
#: prior, so none needs one. Matched case-insensitively as plain text.
SHARED_WORDINGS: tuple[str, ...] = (
    "CUDA out of memory",  # every GPU OOM: training, inference, serving engines, other process
    "device-side assert triggered",  # any out-of-range index or label in a CUDA kernel
    "index out of range in self",  # any embedding lookup past its table: vocab, positions
    "The size of tensor a",  # any broadcast of mismatched sizes: losses, position ids
    "cannot open shared object file",  # any missing shared library
    "has no attribute",  # module attributes: removed names, shadowing files, new names
    "required positional argument",  # any call missing an argument: API drift, from_config
    "No module named",  # any missing module: environment, pickled class paths
)

_ERROR_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*):\s+(?P<message>\S.*)$", re.S)
_ERROR_SUFFIXES = ("Error", "Exception", "Warning")
_MIN_MESSAGE_WORDS = 4


def code_spans(text: str) -> list[str]:
    """Inline code spans of ``text``: a run of n backticks up to the next run of exactly n
    (CommonMark). A quote that nests single backticks (`` `ValueError: `.to` is not
    supported` ``, written as the message prints them) is split by that rule into pieces
    that begin or end with a space; those pieces are joined back into the one quote."""
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    found: list[tuple[int, int, int]] = []  # (content start, content end, backticks)
    index = 0
    while index < len(runs):
        start, end = runs[index]
        width = end - start
        close = next((k for k in range(index + 1, len(runs)) if _width(runs[k]) == width), None)
        if close is None:
            if width > 1:  # `...`use_orig_params=False``: the inner quote's end and the outer's
                runs[index : index + 1] = [(start + k, start + k + 1) for k in range(width)]
            else:
                index += 1
            continue
        found.append((end, runs[close][0], width))
        index = close + 1
    merged: list[tuple[int, int, int]] = []
    for span in found:
        if merged and _continues(text, merged[-1], span):
            merged[-1] = (merged[-1][0], span[1], 1)
        else:
            merged.append(span)
    return [text[start:end].strip() for start, end, _ in merged]


def _width(run: tuple[int, int]) -> int:
    return run[1] - run[0]


def _continues(text: str, before: tuple[int, int, int], after: tuple[int, int, int]) -> bool:
    if before[2] != 1 or after[2] != 1:
        return False
    return text[before[1] - 1].isspace() or text[after[0]].isspace()


def symptom_quotes(runbook: Runbook) -> Iterator[str]:
    """The code spans of the runbook's ``## Symptoms`` items, each item's lines joined (a
    quote may wrap onto the next line)."""
    for name, text in sections(runbook.body):
        if name.strip().lower() != "symptoms":
            continue
        for block in blocks(text):
            yield from code_spans(" ".join(line.strip() for line in block.text.split("\n")))


def typed_error_lines(runbook: Runbook) -> list[str]:
    """The Symptoms quotes that read as a raised error: ``SomeError: message``, the
    exception class (dotted path allowed) ending in Error, Exception or Warning, the message
    at least four words."""
    lines = []
    for quote in symptom_quotes(runbook):
        match = _ERROR_LINE.match(quote)
        if not match:
            continue
        class_name = match["type"].rsplit(".", 1)[-1]
        if not (class_name[:1].isupper() and class_name.endswith(_ERROR_SUFFIXES)):
            continue
        if len(re.findall(r"\w+", match["message"])) >= _MIN_MESSAGE_WORDS:
            lines.append(quote)
    return lines


def _shared(line: str) -> bool:
    return any(wording.lower() in line.lower() for wording in SHARED_WORDINGS)


@pytest.fixture(scope="module")
def runbooks() -> list[Runbook]:
    return load_directory(bundled_runbook_dir())


def test_a_quote_with_nested_backticks_is_one_quote_and_wrapped_lines_join() -> None:
    text = (
        "`ValueError: `.to` is not supported for `4-bit` or `8-bit` models.` or "
        "`` `tokenizer` is deprecated `` and `a` and `b`"
    )
    assert code_spans(text) == [
        "ValueError: `.to` is not supported for `4-bit` or `8-bit` models.",
        "`tokenizer` is deprecated",
        "a",
        "b",
    ]
    runbook = Runbook(
        slug="s",
        title="t",
        failure_class="",
        frameworks=(),
        signals=(),
        tags=(),
        sources=(),
        body="# t\n\n## Symptoms\n\n- `RuntimeError: one two\n  three four` at start.\n"
        "- `KeyError: 'x'` and `torch.compile(model)`\n",
        checksum="",
    )
    assert typed_error_lines(runbook) == ["RuntimeError: one two three four"]


def test_every_quoted_error_line_matches_one_of_its_runbooks_signals(
    runbooks: list[Runbook],
) -> None:
    unmatched = [
        f"{rb.slug}: {line[:120]}"
        for rb in runbooks
        if rb.signals
        for line in typed_error_lines(rb)
        if not match_signals(rb, line) and not _shared(line)
    ]
    assert not unmatched, "quoted in Symptoms, matched by none of the runbook's signals:\n" + (
        "\n".join(unmatched)
    )


def test_each_shared_wording_belongs_to_several_runbooks(runbooks: list[Runbook]) -> None:
    """A shared wording is quoted in the Symptoms of one runbook and quoted or matched by a
    signal of at least one other: an entry no runbook shares any more is left out."""
    for wording in SHARED_WORDINGS:
        quotes = {
            rb.slug: [quote for quote in symptom_quotes(rb) if wording.lower() in quote.lower()]
            for rb in runbooks
        }
        lines = [line for own in quotes.values() for line in own]
        owners = {rb.slug for rb in runbooks if quotes[rb.slug]}
        owners |= {rb.slug for rb in runbooks if any(match_signals(rb, line) for line in lines)}
        assert len(owners) >= 2, (wording, sorted(owners))
