"""Step choice on two fixed halves of the dev cases: design on one, check on the other.

    SECRET_KEY=x .venv/bin/python bench/step_halves.py --dump /tmp/halves.json
    .venv/bin/python bench/step_halves.py --rows /tmp/halves.json

The dev cases of ``rca eval --realworld-dev --suggest`` (``tests/data/dev_cases.jsonl`` plus
the ``split == "dev"`` lines of :data:`rca.evaluation.suite.REALWORLD_DEV_FILES`; never a
holdout) are split by the first hex digit of ``sha1(case id)``: 0-7 is half A (where a change
is designed), 8-f half B (scored only to check that it does not hurt). A split by hash, not
by file, so that neither half is one source's style. The dump runs retrieval and the offline
provider exactly as ``rca eval --suggest`` does (release-notes runbooks, the shipped
calibration, so abstentions count) and keeps, per case, the answer's figures (fix term in
the action, in action or reason, abstained), which retrieved runbook steps hold the fix term,
and every ranked candidate step with its score parts and words.

``--rows`` prints the figures per half, the misses of ``--half`` by kind (:func:`miss_kind`),
and the choice (fix term in the chosen step's action, abstention not modelled) of each
mechanism of :data:`MECHANISMS` re-scored on both halves. Each is a general reading of the
incident against the steps, tried for issue 16; none helped half A without hurting half B
(the numbers are in :mod:`rca.suggestion.providers.offline_weights`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _env import REPO, setup_django

#: Clauses of a step's action that state when it applies ("when the build says ...",
#: "if several processes must share it"); runbook text only, never incident text.
_CONDITION = re.compile(r"\b(?:when|whenever|if|unless|where)\b([^.;:()]*)", re.IGNORECASE)
MISS_KINDS = (
    "abstained, right guess",
    "right runbook, wrong step",
    "wrong runbook cited",
    "no retrieved runbook has it",
)


def half(case_id: str) -> str:
    """``A`` for a case id whose sha1 starts with 0-7, else ``B``."""
    digest = hashlib.sha1(case_id.encode(), usedforsecurity=False).hexdigest()
    return "A" if digest[0] in "01234567" else "B"


def miss_kind(row: dict[str, Any]) -> str | None:
    """Why a case's action misses the fix term (None when it has it): it abstained although
    its guess has it; the cited runbook has a step with it (the wrong step was chosen); another
    retrieved runbook has one; no retrieved runbook has one."""
    if row["in_action"]:
        return None
    if row["abstained"] and row["guess"]:
        return MISS_KINDS[0]
    if row["step_hits"].get(row["runbook"]):
        return MISS_KINDS[1]
    return MISS_KINDS[2] if any(row["step_hits"].values()) else MISS_KINDS[3]


def _dump() -> dict[str, Any]:
    from rca.corpus.embeddings import embed_queries
    from rca.corpus.markdown import remediation_of
    from rca.evaluation.metrics import keyword_hit
    from rca.evaluation.run import _Page, case_incident, load_bodies, load_cases, load_index
    from rca.evaluation.suite import realworld_dev_cases
    from rca.retrieval.hybrid import search
    from rca.retrieval.signals import build_signals
    from rca.suggestion.evidence import (
        context_for,
        evidence_from_retrieved,
        evidence_from_runbook,
        with_documented_runbooks,
    )
    from rca.suggestion.incident_facts import terms
    from rca.suggestion.providers import OfflineProvider
    from rca.suggestion.providers.documented_steps import DOCUMENTED_PLACEHOLDER
    from rca.suggestion.providers.incident_view import read_incident
    from rca.suggestion.providers.step_ranking import _rarity, rank_steps
    from rca.suggestion.providers.wording import split_step
    from rca.suggestion.step_values import step_wordings

    corpus = REPO / "rca" / "runbooks"
    index, _ = load_index(corpus)
    bodies = load_bodies(corpus, index.slugs)
    frequency: Counter[str] = Counter()
    steps = [set(terms(s)) for body in bodies.values() for s in remediation_of(body)]
    for words in steps:
        frequency.update(words)

    def page(slug: str, at: int) -> Any:
        return _Page(slug, index.titles[at], index.classes[at], bodies[slug])

    documented = [
        evidence_from_runbook(page(slug, at), text="")
        for at, slug in sorted(enumerate(index.slugs), key=lambda pair: pair[1])
        if DOCUMENTED_PLACEHOLDER in bodies.get(slug, "")
    ]
    cases = load_cases(REPO / "tests" / "data" / "dev_cases.jsonl") + realworld_dev_cases()
    incidents = [case_incident(case) for case in cases]
    signals = [build_signals(incident) for incident in incidents]
    vectors = embed_queries([s.embedding_text() for s in signals])
    provider, rows = OfflineProvider(), []
    for case, incident, sig, vector in zip(cases, incidents, signals, vectors, strict=True):
        ctx = context_for(
            incident, evidence_from_retrieved(search(sig, vector, k=5, index=index), bodies)
        )
        ctx = with_documented_runbooks(ctx, lambda: documented)
        keywords, draft = case.get("keywords") or [], provider.suggest(ctx)
        view, rarity = read_incident(ctx), _rarity(ctx)
        candidates = []
        for c in rank_steps(ctx):
            condition: set[str] = set()
            for _, text in step_wordings(c.evidence.remediation[c.position]):
                for match in _CONDITION.finditer(split_step(text)[0]):
                    condition |= set(terms(match.group(1)))
            candidates.append(
                {
                    "runbook": c.evidence.slug,
                    "position": c.position,
                    "parts": c.parts,
                    "preference": c.preference,
                    "advice": c.advice,
                    "hit": keyword_hit(c.action, keywords),
                    "action_words": sorted(c.step_action_tokens),
                    "reason_words": sorted(c.step_reason_tokens),
                    "condition_words": sorted(condition),
                }
            )
        runbooks = [item for item in ctx.evidence if item.kind == "runbook"]
        words = {w for c in candidates for w in c["action_words"] + c["reason_words"]}
        rows.append(
            {
                "id": str(case.get("id", "")),
                "half": half(str(case.get("id", ""))),
                "in_action": keyword_hit(draft.action, keywords) and not draft.abstained,
                "in_answer": keyword_hit(f"{draft.action} {draft.reason}", keywords)
                and not draft.abstained,
                "abstained": draft.abstained,
                "guess": keyword_hit(draft.action, keywords),
                "runbook": draft.runbook,
                "step_hits": {
                    item.slug: [
                        i for i, s in enumerate(item.remediation) if keyword_hit(s, keywords)
                    ]
                    for item in runbooks
                },
                "step_words": {
                    item.slug: [sorted(set(terms(s))) for s in item.remediation]
                    for item in runbooks
                },
                "incident": {w: view.words[w] for w in words if w in view.words},
                "rarity": {w: rarity(w) for w in words},
                "candidates": candidates,
            }
        )
    return {"corpus_steps": len(steps), "corpus_frequency": dict(frequency), "rows": rows}


Rescore = Callable[[dict[str, Any], dict[str, Any], float, dict[str, Any]], float]


def _overlap(row: dict[str, Any], c: dict[str, Any], weight: Callable[[str], float]) -> float:
    """The ranking's overlap part (``OfflineWeights.overlap`` 1.0, scale 2.0, reason 0.3)
    with each shared word counted by ``weight`` instead of its rarity."""
    action = set(c["action_words"])
    shared = sum(row["incident"].get(w, 0.0) * weight(w) for w in action)
    shared += 0.3 * sum(
        row["incident"].get(w, 0.0) * weight(w) for w in set(c["reason_words"]) - action
    )
    return math.log1p(shared / 2.0)


def _distinctive(row: dict[str, Any], c: dict[str, Any], value: float, _: dict[str, Any]) -> float:
    """Overlap with a word discounted by the share of the runbook's other steps that have it:
    words every step shares say nothing about which step fits."""
    others = [
        set(s) for i, s in enumerate(row["step_words"].get(c["runbook"], [])) if i != c["position"]
    ]

    def weight(word: str) -> float:
        share = sum(word in s for s in others) / len(others) if others else 0.0
        return row["rarity"].get(word, 0.0) * (1.0 - value * share)

    return _overlap(row, c, weight) - c["parts"]["overlap"]


def _corpus_rarity(
    row: dict[str, Any], c: dict[str, Any], value: float, d: dict[str, Any]
) -> float:
    """Overlap with rarity over the whole corpus's steps (mixed in by ``value``, halved to
    the retrieved steps' range) instead of the five retrieved runbooks' steps only."""
    n, frequency = d["corpus_steps"], d["corpus_frequency"]

    def weight(word: str) -> float:
        corpus = 0.5 * math.log((n + 1) / (frequency.get(word, 0) + 0.5))
        return (1 - value) * row["rarity"].get(word, 0.0) + value * corpus

    return _overlap(row, c, weight) - c["parts"]["overlap"]


def _condition(row: dict[str, Any], c: dict[str, Any], value: float, _: dict[str, Any]) -> float:
    """A bonus for a step whose stated condition (a ``when``/``if`` clause) the incident
    says: ``value * log(1 + shared / 2)`` over the clause's words."""
    shared = sum(row["incident"].get(w, 0) * row["rarity"].get(w, 0) for w in c["condition_words"])
    return value * math.log1p(shared / 2.0)


def _position(row: dict[str, Any], c: dict[str, Any], value: float, _: dict[str, Any]) -> float:
    """The position penalty at ``value`` per place instead of 0.5."""
    return c["parts"]["position"] * (value / 0.5 - 1.0)


MECHANISMS: dict[str, tuple[Rescore, list[float]]] = {
    "distinctive": (_distinctive, [0.25, 0.5, 0.75, 1.0]),
    "corpus_rarity": (_corpus_rarity, [0.25, 0.5, 1.0]),
    "condition": (_condition, [0.25, 0.5, 1.0]),
    "position": (_position, [0.25, 0.4, 0.6, 0.75]),
}


def _chosen(row: dict[str, Any], rescore: Rescore | None, value: float, d: dict[str, Any]) -> Any:
    best, best_score = None, float("-inf")
    for c in row["candidates"]:
        score = sum(c["parts"].values()) + c["preference"]
        if rescore is not None and not c["advice"]:
            score += rescore(row, c, value, d)
        if score > best_score + 1e-12:
            best, best_score = c, score
    return best


def _choice_hits(rows: list[dict[str, Any]], rescore: Rescore | None, value: float, d: Any) -> int:
    return sum(bool((c := _chosen(r, rescore, value, d)) and c["hit"]) for r in rows)


def _report(dumped: dict[str, Any], design: str) -> None:
    rows = dumped["rows"]
    halves = {h: [r for r in rows if r["half"] == h] for h in "AB"}
    for name, sub in halves.items():
        print(
            f"half {name} ({len(sub)} cases): "
            f"fix term in action {sum(r['in_action'] for r in sub)},"
            f" in action or reason {sum(r['in_answer'] for r in sub)},"
            f" abstained {sum(r['abstained'] for r in sub)}"
        )
    kinds = Counter(
        k if (k := miss_kind(r)) == MISS_KINDS[0] or not r["abstained"] else f"{k} (abstained)"
        for r in halves[design]
        if miss_kind(r)
    )
    print(f"misses of half {design}:")
    for kind, count in sorted(kinds.items()):
        print(f"  {count:>4}  {kind}")
    print("choice (fix term in the chosen step, abstention not modelled), half A / half B:")
    print(
        f"  as ranked: {_choice_hits(halves['A'], None, 0, dumped)} / "
        f"{_choice_hits(halves['B'], None, 0, dumped)}"
    )
    for name, (rescore, values) in MECHANISMS.items():
        found = [
            f"{v}: {_choice_hits(halves['A'], rescore, v, dumped)} / "
            f"{_choice_hits(halves['B'], rescore, v, dumped)}"
            for v in values
        ]
        print(f"  {name}: " + ", ".join(found))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", help="write the rows here (JSON)")
    parser.add_argument("--rows", help="read the rows of an earlier --dump")
    parser.add_argument("--half", default="A", choices="AB", help="whose misses to classify")
    args = parser.parse_args()
    if args.rows:
        dumped = json.loads(Path(args.rows).read_text(encoding="utf-8"))
    else:
        setup_django()
        dumped = _dump()
    if args.dump:
        Path(args.dump).write_text(json.dumps(dumped), encoding="utf-8")
    _report(dumped, args.half)


if __name__ == "__main__":
    main()
