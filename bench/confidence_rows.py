"""The rows ``calibrate_confidence.py`` fits the offline provider's confidence on.

A row is one dev case run through retrieval (hybrid, default fusion, top 5) and the offline
provider as ``rca eval --suggest`` runs it: its evidence figures
(:class:`rca.suggestion.confidence.Strength`) and whether the action the provider would give
names one of the case's ``keywords``. Four kinds, each standing for a kind of incident:

- ``bundled``: the case against the bundled runbooks, what the product serves; every dev
  case has a runbook written for its kind (in sample);
- ``loco``: the same, its own category's runbooks left out of the retrieved list
  (leave-class-out), an incident no runbook covers;
- ``independent`` (``--extra-corpus``): the case against another corpus (``corpora/
  independent``, written without reading the bundled runbooks or these cases), an incident
  a runbook of its kind covers without having been written for it;
- ``history`` (``history``: case file -> corpus folder): a case against the bundled
  corpus as it was before its file's runbooks were written (``git archive <commit>
  rca/runbooks``), first contact with runbooks of today's authoring not written for it.

Every row keeps its case's id in ``case`` (the row id is suffixed ``-loco`` / ``-ind`` /
``-hist``) and its file, so cross-validation keeps a case's rows in one fold, and says whether
the corpus has a runbook of the case's class (``covered``) and whether the action came from
one (``class_hit``). ``features`` holds candidate confidence figures the product does not
read (``bench/answer_features.py``); :func:`figures` gives them with the row's strength.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from _env import REPO

KINDS = ("bundled", "independent", "history", "loco")


def read_cases(paths: list[str], split: str) -> list[dict[str, Any]]:
    """The lines of ``paths`` whose split is ``split``, each with the name of its file."""
    cases = []
    for path in paths:
        for line in (REPO / path).read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                if case.get("split", "dev") == split:
                    cases.append({**case, "_file": Path(path).name})
    return cases


def dev_cases() -> list[dict[str, Any]]:
    """The cases of ``rca eval --realworld-dev`` (every line of tests/data/dev_cases.jsonl,
    the dev lines of the real-world dev files), each with the name of its file."""
    from rca.evaluation.run import load_cases
    from rca.evaluation.suite import REALWORLD_DEV_FILES, realworld_dev_cases

    cases = [
        {**case, "_file": "dev_cases.jsonl"}
        for case in load_cases(REPO / "tests" / "data" / "dev_cases.jsonl")
    ]
    real = read_cases([str(p) for p in REALWORLD_DEV_FILES if p.is_file()], "dev")
    assert [c["id"] for c in real] == [c["id"] for c in realworld_dev_cases()]
    return cases + real


def fusion_weights(spec: str) -> Any:
    """``framework=0.5,exception_type=0.25`` over the defaults."""
    from dataclasses import replace

    from rca.retrieval.weights import DEFAULT_WEIGHTS

    values: dict[str, float] = {}
    for item in filter(None, spec.split(",")):
        name, value = item.split("=", 1)
        values[name] = float(value)
    return replace(DEFAULT_WEIGHTS, **values)


def build_rows(
    cases: list[dict[str, Any]],
    corpus: str,
    *,
    augment: bool,
    extra_corpus: str | None = None,
    weights: Any = None,
    history: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One ``bundled`` row per case against ``corpus``, a ``loco`` row when ``augment`` and
    the corpus has the case's class, an ``independent`` row against ``extra_corpus``, a
    ``history`` row against ``history[file]`` for a case of that file."""
    from rca.corpus.embeddings import embed_queries
    from rca.evaluation.run import case_incident
    from rca.retrieval.signals import build_signals

    incidents = [case_incident(case) for case in cases]
    signals = [build_signals(incident) for incident in incidents]
    vectors = embed_queries([s.embedding_text() for s in signals])
    queries = list(zip(cases, incidents, signals, vectors, strict=True))
    rows = _corpus_rows(queries, corpus, "bundled", augment, weights)
    if extra_corpus:
        rows += _corpus_rows(queries, extra_corpus, "independent", False, weights)
    for name, directory in sorted((history or {}).items()):
        chosen = [q for q in queries if q[0].get("_file") == name]
        rows += _corpus_rows(chosen, directory, "history", False, weights) if chosen else []
    return rows


def _corpus_rows(
    queries: list[tuple[Any, ...]], corpus: str, kind: str, augment: bool, weights: Any
) -> list[dict[str, Any]]:
    from answer_features import answer_features

    from rca.evaluation.metrics import keyword_hit
    from rca.evaluation.run import load_bodies, load_index
    from rca.retrieval.hybrid import search
    from rca.suggestion.confidence import Calibration
    from rca.suggestion.evidence import context_for, evidence_from_retrieved
    from rca.suggestion.providers import OfflineProvider

    index, _ = load_index(corpus)
    bodies = load_bodies(corpus, index.slugs)
    # Never abstain here: the label is about the action the provider would give.
    provider = OfflineProvider(Calibration(0.0, {}, {}, {}, 0.0))
    classes = set(index.classes)
    class_of = dict(zip(index.slugs, index.classes, strict=True))
    extra = {"weights": weights} if weights is not None else {}
    suffix = {"bundled": "", "independent": "-ind", "history": "-hist"}[kind]
    rows = []
    for case, incident, sig, vector in queries:
        category = case.get("category", "")
        variants = [(kind, suffix, 0)]
        if augment and category in classes:
            variants.append(("loco", "-loco", sum(c == category for c in index.classes)))
        for row_kind, row_suffix, left_out in variants:
            found = search(sig, vector, k=5 + left_out, index=index, **extra)
            if row_kind == "loco":
                found = [r for r in found if r.failure_class != category][:5]
            if not found:
                continue
            ctx = context_for(incident, evidence_from_retrieved(found, bodies))
            draft = provider.suggest(ctx)
            keywords = case.get("keywords") or []
            features = answer_features(ctx, found, draft.runbook)
            rows.append(
                {
                    "id": case["id"] + row_suffix,
                    "case": case["id"],
                    "file": case.get("_file", ""),
                    "kind": row_kind,
                    "augmented": row_kind == "loco",
                    "strength": draft.strength,
                    "features": features,  # bench/answer_features.py (not in the product)
                    # The corpus has a runbook of the case's class; the action came from one.
                    "covered": row_kind != "loco" and category in classes,
                    "class_hit": class_of.get(draft.runbook) == category,
                    "hit": keyword_hit(draft.action, keywords),
                    "hit_any": keyword_hit(f"{draft.action} {draft.reason}", keywords),
                }
            )
    return rows


class Figures(dict[str, float]):
    """A row's figures, its :class:`~rca.suggestion.confidence.Strength` and its candidate
    features (``bench/answer_features.py``), read by name as a calibration reads them."""

    def value(self, name: str) -> float:
        return float(self.get(name, 0.0))


def figures(row: dict[str, Any]) -> Figures:
    """The figures of ``row`` (rows dumped before the candidate features have none)."""
    return Figures({**row["strength"], **row.get("features", {})})


def read_rows(path: str) -> list[dict[str, Any]]:
    """The rows of an earlier ``--dump``; rows dumped before kinds existed get theirs."""
    rows = json.loads(Path(path).read_text(encoding="utf-8"))
    for row in rows:
        row.setdefault("kind", "loco" if row["augmented"] else "bundled")
        row.setdefault("case", row["id"].removesuffix("-loco"))
    return rows
