"""Which corpora one ``rca eval`` run scores, and loading them.

A corpus spec is ``(label, directory or None for the stored corpus, ignore_signals)``.
``--suite`` is the honest comparison of issue 15: the bundled corpus the defaults were
developed on next to one they were not (``corpora/independent``, when present), with and
without ``signals``; everything from files, so it needs no stored corpus.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rca.evaluation.run import load_index, load_runbooks
from rca.retrieval.index import CorpusIndex, index_from_runbooks

__all__ = [
    "INDEPENDENT",
    "REALWORLD_DEV_FILES",
    "CorpusSpec",
    "corpus_specs",
    "covered_cases",
    "load_corpora",
    "realworld_dev_cases",
]

CorpusSpec = tuple[str, Path | None, bool]
_ROOT = Path(__file__).resolve().parents[2]
INDEPENDENT = _ROOT / "corpora" / "independent"
#: The real-world files with a development split (eval/realworld/README.md); only their
#: ``"split": "dev"`` lines are read. The holdout files (cases-c, -f, -h, -m, -q, -r) are not
#: listed and never opened here. 190 dev cases with tests/data/dev_cases.jsonl's 30, and
#: cases-u's 12 version pairings (issue 16, harm class 3) and cases-s's 8 OOM cases (who
#: holds the GPU memory, harm class 1), and cases-t's 11 already-shown lists and tensor
#: states (harm class 2), and cases-w's 9 named limits, key prefixes and empty tensors.
REALWORLD_DEV_FILES: tuple[Path, ...] = tuple(
    _ROOT / "eval" / "realworld" / f"cases-{part}.jsonl"
    for part in (
        "a",
        "b",
        "d",
        "e",
        "g",
        "i",
        "j",
        "k",
        "l",
        "s",
        "t",
        "u",
        "w",
        "y",
        "aa",
        "ac",
        "ae",
        "ag",
        "ah",
        "ai",
        "aj",
        "ak",
        "am",
        "an",
        "ap",
        "aq",
        "ar",
        "as",
    )
)


def realworld_dev_cases() -> list[dict[str, Any]]:
    """The dev lines of :data:`REALWORLD_DEV_FILES` (``rca eval --realworld-dev``)."""
    from rca.evaluation.run import load_cases

    return [
        case
        for path in REALWORLD_DEV_FILES
        if path.is_file()
        for case in load_cases(path)
        if case.get("split") == "dev"
    ]


def _label(directory: Path | None, ignore_signals: bool) -> str:
    from rca.corpus.files import bundled_runbook_dir

    if directory is None:
        name = "stored"
    elif directory.resolve() == bundled_runbook_dir().resolve():
        name = "bundled"
    else:
        name = directory.name
    return f"{name} (no signals)" if ignore_signals else name


def corpus_specs(
    directories: list[Path] | None, ignore_signals: bool, suite: bool
) -> list[CorpusSpec]:
    """The corpora to score, in report order (labels unique)."""
    if suite:
        from rca.corpus.files import bundled_runbook_dir

        bundled = bundled_runbook_dir()
        pairs: list[tuple[Path | None, bool]] = [(bundled, False)]
        if INDEPENDENT.is_dir() and any(INDEPENDENT.glob("*.md")):
            pairs += [(INDEPENDENT, False), (INDEPENDENT, True)]
        pairs.append((bundled, True))
    else:
        given: list[Path | None] = [*directories] if directories else [None]
        pairs = [(d, ignore_signals) for d in given]
    specs: list[CorpusSpec] = []
    seen: set[str] = set()
    for directory, ignore in pairs:
        label = _label(directory, ignore)
        if label not in seen:
            seen.add(label)
            specs.append((label, directory, ignore))
    return specs


def load_corpora(specs: list[CorpusSpec]) -> tuple[dict[str, CorpusIndex], list[str]]:
    """Index per label, and notes to print. A directory scored with and without signals is
    embedded once: dropping ``signals`` changes no chunk text."""
    indexes: dict[str, CorpusIndex] = {}
    notes: list[str] = []
    embedded: dict[Path, CorpusIndex] = {}
    for label, directory, ignore in specs:
        twin = embedded.get(directory.resolve()) if directory is not None else None
        if directory is not None and twin is not None:
            runbooks = load_runbooks(directory, ignore_signals=ignore)
            index = index_from_runbooks(runbooks, embed=False)
            if index.chunk_texts == twin.chunk_texts:
                index.embeddings = twin.embeddings
            else:
                index, _ = load_index(directory, ignore_signals=ignore)
        else:
            index, note = load_index(directory, ignore_signals=ignore)
            if note:
                notes.append(note)
        if directory is not None:
            embedded.setdefault(directory.resolve(), index)
        indexes[label] = index
    return indexes, notes


def covered_cases(categories: list[str], index: CorpusIndex) -> int:
    """How many of the cases (by category) a corpus can hit at all: a hit is a runbook of
    the case's class, so a case whose class no runbook of the corpus has (or whose label is
    not a class of the taxonomy) is a miss whatever the ranking. ``rca eval`` prints it
    beside hit@1, so a coverage gap is not read as a ranking error."""
    classes = set(index.classes)
    return sum(1 for category in categories if category in classes)
