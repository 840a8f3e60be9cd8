"""Run retrieval over labelled cases the way the worker runs it on incidents (``rca eval``).

Each case goes through ingest's own parsing (``ingest.derive``) into an unsaved Incident,
then :func:`rca.retrieval.signals.build_signals`, :func:`rca.corpus.embeddings.embed` and
:func:`rca.retrieval.hybrid.search` — the same code path as a stored incident. With suggestions,
the retrieved runbooks become evidence (:mod:`rca.suggestion.evidence`) for the offline provider and
its draft is validated, as the worker does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from rca.evaluation.metrics import CaseResult, Metrics, SuggestResult, keyword_hit, summarise
from rca.retrieval.index import CorpusIndex, current_index, index_from_runbooks
from rca.retrieval.signals import Signals, build_signals
from rca.retrieval.weights import DEFAULT_WEIGHTS, FusionWeights

if TYPE_CHECKING:
    from rca.corpus.runbook import Runbook
    from rca.retrieval.hybrid import Evidence, Mode
    from rca.suggestion.context import AnalysisContext

__all__ = [
    "DEFAULT_RUN",
    "RUNS",
    "Prepared",
    "case_incident",
    "evaluate",
    "evaluate_suggestions",
    "load_bodies",
    "load_cases",
    "load_index",
    "load_runbooks",
    "prepare",
    "results",
    "run_names",
]

#: Run name -> (mode, fusion strategy); ``rca eval`` prints them side by side.
RUNS: dict[str, tuple[Mode, str]] = {
    "bm25": ("bm25", "rrf"),
    "dense": ("dense", "rrf"),
    "hybrid-rrf": ("hybrid", "rrf"),
    "hybrid-weighted": ("hybrid", "weighted"),
    "hybrid-calibrated": ("hybrid", "calibrated"),
}
#: The run the worker uses (``rca.retrieval.hybrid.DEFAULT_STRATEGY``), named in the JSON
#: report's ``"default"`` key.
DEFAULT_RUN = "hybrid-calibrated"


def run_names(mode: str = "all", strategy: str = "both") -> list[str]:
    """The runs of :data:`RUNS` selected by ``--mode`` (all|hybrid|bm25|dense) and
    ``--strategy`` (both = every strategy, or one of them, for hybrid)."""
    names = []
    for name, (run_mode, run_strategy) in RUNS.items():
        if mode not in ("all", run_mode):
            continue
        if run_mode == "hybrid" and strategy not in ("both", run_strategy):
            continue
        names.append(name)
    return names


def load_index(
    directory: str | Path | None, *, ignore_signals: bool = False
) -> tuple[CorpusIndex, str]:
    """The corpus to score: a scratch in-memory one from ``directory``, else the stored one
    (embedding its missing chunks here first, as a worker would). Returns (index, note).
    ``ignore_signals`` scores ``directory`` as if its runbooks had no ``signals``."""
    if directory is not None:
        return index_from_runbooks(load_runbooks(directory, ignore_signals=ignore_signals)), ""
    if ignore_signals:
        raise ValueError("--ignore-signals needs --corpus DIR")
    from rca.corpus.embeddings import chunks_missing_embeddings, embed_missing_chunks

    note = ""
    if chunks_missing_embeddings():
        note = f"embedded {embed_missing_chunks()} stored chunks that had no embedding"
    index = current_index()
    if not len(index):
        raise ValueError("the stored corpus is empty: run `manage.py runbooks load` first")
    return index, note


def load_runbooks(directory: str | Path, *, ignore_signals: bool = False) -> list[Runbook]:
    """A folder's runbooks as ``rca eval`` scores them: a page without a failure class
    (plain Markdown) takes the one the folder's ``classes.json`` names for its slug, so a
    hit can be counted (:func:`rca.evaluation.labels.with_labels`)."""
    from rca.corpus import files
    from rca.evaluation.labels import with_labels

    runbooks = with_labels(files.load_directory(directory), Path(directory))
    return files.without_signals(runbooks) if ignore_signals else runbooks


def load_bodies(directory: str | Path | None, slugs: list[str]) -> dict[str, str]:
    """Runbook bodies (slug -> body) of the scored corpus: ``directory``'s, else the stored."""
    if directory is not None:
        from rca.corpus import files

        return {rb.slug: rb.body for rb in files.load_directory(directory)}
    from rca.suggestion.evidence import stored_bodies

    return stored_bodies(slugs)


def load_cases(path: str | Path) -> list[dict[str, Any]]:
    with Path(path).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def case_incident(case: dict[str, Any]) -> Any:
    """An unsaved Incident built from a case by ingest's parsing, as the API would store it."""
    from ingest.derive import derive
    from ingest.models import Incident

    derived = derive(
        {
            "error_type": case.get("exception_type") or case.get("error_type") or "",
            "message": case.get("message") or "",
            "stacktrace": case.get("traceback") or case.get("stacktrace") or "",
            "logs": case.get("logs") or [],
            "shape_diff": case.get("shape_diff") or [],
            "inference_context": case.get("inference_context") or {},
        }
    )
    return Incident(
        error_type=derived.error_type,
        message=derived.message,
        exceptions=derived.exceptions,
        logs=derived.logs,
        shape_diff=derived.shape_diff,
        shape_diff_source=derived.shape_diff_source,
        inference_context=case.get("inference_context") or {},
        model_id=derived.model_id,
    )


@dataclass
class Prepared:
    """Cases of one corpus with their retrieval evidence gathered once (BM25, cosine,
    signal prior per runbook), so every run, fold and weight setting only re-ranks."""

    index: CorpusIndex
    cases: list[dict[str, Any]]
    evidence: list[Evidence]


def prepare(
    cases: list[dict[str, Any]], index: CorpusIndex, signals: list[Signals] | None = None
) -> Prepared:
    """Parse, embed and gather each case once (``signals``: already built, e.g. ablated)."""
    from rca.corpus.embeddings import embed_queries
    from rca.retrieval.hybrid import gather

    if signals is None:
        signals = [build_signals(case_incident(case)) for case in cases]
    embeddings = embed_queries([s.embedding_text() for s in signals])
    evidence = [gather(sig, vec, index) for sig, vec in zip(signals, embeddings, strict=True)]
    return Prepared(index, cases, evidence)


def results(
    prepared: Prepared,
    run: str,
    weights: FusionWeights = DEFAULT_WEIGHTS,
    only: Sequence[int] | None = None,
    k: int = 5,
) -> list[CaseResult]:
    """Ranked classes of the cases (``only`` these positions) under one run and weights."""
    from rca.retrieval.hybrid import rank

    mode, strategy = RUNS[run]
    positions = range(len(prepared.cases)) if only is None else only
    out = []
    for i in positions:
        order, _ = rank(
            prepared.evidence[i],
            mode=mode,
            strategy=strategy,
            weights=weights,
            k=k,
        )
        out.append(case_result(prepared, i, order))
    return out


def case_result(prepared: Prepared, i: int, order: Sequence[int]) -> CaseResult:
    """Case ``i`` ranked in ``order`` (positions in the index), and whether the corpus has a
    runbook of its class at all (``covered``: a case it lacks is a miss whatever the order)."""
    case, index = prepared.cases[i], prepared.index
    category = str(case.get("category", ""))
    return CaseResult(
        case_id=str(case.get("id", "")),
        category=category,
        ranked_classes=tuple(index.classes[p] for p in order),
        ranked_slugs=tuple(index.slugs[p] for p in order),
        covered=category in index.classes,
    )


def evaluate(
    cases: list[dict[str, Any]], index: CorpusIndex, runs: list[str], k: int = 5
) -> dict[str, Metrics]:
    """Metrics per run; every case is parsed and embedded once and ranked by every run."""
    prepared = prepare(cases, index)
    return {name: summarise(results(prepared, name, k=k)) for name in runs}


class _Page(NamedTuple):
    """A runbook of the scored corpus, as evidence is made of it."""

    slug: str
    title: str
    failure_class: str
    body: str


def suggestion_contexts(
    incidents: Sequence[dict[str, Any]], index: CorpusIndex, bodies: dict[str, str], k: int = 5
) -> list[AnalysisContext]:
    """Each incident's analysis context as the worker builds it: the hybrid search's top ``k``
    (default fusion) and the release-notes runbooks as evidence. The suggestion eval and the
    validation probe (:mod:`rca.evaluation.validation_probe`) both score on these."""
    from rca.corpus.embeddings import embed_queries
    from rca.retrieval.hybrid import search
    from rca.suggestion.context import evidence_from_runbook
    from rca.suggestion.evidence import (
        context_for,
        evidence_from_retrieved,
        with_documented_runbooks,
    )
    from rca.suggestion.providers.documented_steps import DOCUMENTED_PLACEHOLDER

    signals: list[Signals] = [build_signals(incident) for incident in incidents]
    embeddings = embed_queries([s.embedding_text() for s in signals])
    documented = [  # the runbooks a release-notes row may add (as the worker's query finds them)
        evidence_from_runbook(
            _Page(slug, index.titles[at], index.classes[at], bodies[slug]), text=""
        )
        for at, slug in sorted(enumerate(index.slugs), key=lambda pair: pair[1])
        if DOCUMENTED_PLACEHOLDER in bodies.get(slug, "")
    ]
    contexts = []
    for incident, sig, vector in zip(incidents, signals, embeddings, strict=True):
        found = search(sig, vector, k=k, index=index)
        ctx = context_for(incident, evidence_from_retrieved(found, bodies))
        contexts.append(with_documented_runbooks(ctx, lambda: documented))
    return contexts


def evaluate_suggestions(
    cases: list[dict[str, Any]],
    index: CorpusIndex,
    bodies: dict[str, str],
    k: int = 5,
) -> list[SuggestResult]:
    """The offline provider's suggestion for every case, from the worker's default retrieval
    (hybrid, default fusion, top ``k``), validated; scored by the case's ``keywords``.

    An abstention ("no confident suggestion") scores no hit whatever its best guess says;
    every candidate step is also validated before the provider's filter
    (:func:`~rca.suggestion.providers.step_ranking.audit_candidates`)."""
    from rca.suggestion.providers import OfflineProvider, ProviderError
    from rca.suggestion.providers.step_ranking import audit_candidates
    from rca.suggestion.validation import validate

    incidents = [case_incident(case) for case in cases]
    contexts = suggestion_contexts(incidents, index, bodies, k=k)
    provider = OfflineProvider()
    results = []
    for case, ctx in zip(cases, contexts, strict=True):
        case_id, category = str(case.get("id", "")), str(case.get("category", ""))
        try:
            draft = provider.suggest(ctx)
        except ProviderError as exc:
            results.append(SuggestResult(case_id, category, "", "", "", False, False, (str(exc),)))
            continue
        check = validate(draft, ctx)
        keywords = case.get("keywords") or []
        guess_hit = keyword_hit(f"{draft.action} {draft.reason}", keywords)
        audit = audit_candidates(ctx)
        results.append(
            SuggestResult(
                case_id=case_id,
                category=category,
                action=draft.action,
                reason=draft.reason,
                runbook=draft.runbook,
                keyword_hit=guess_hit and not draft.abstained,
                valid=check.ok,
                complaints=tuple(check.complaints),
                action_hit=keyword_hit(draft.action, keywords) and not draft.abstained,
                abstained=draft.abstained,
                confidence=draft.confidence,
                guess_hit=guess_hit,
                candidates={
                    "steps": audit.steps,
                    "valid": audit.valid,
                    "premise_contradicted": audit.premise_contradicted,
                    "unfilled_placeholder": audit.unfilled_placeholder,
                },
            )
        )
    return results
