"""Validation scored on a probe of labelled LLM-style answers (``rca eval --validation-probe``).

Each answer is validated (:func:`rca.suggestion.validation.validate`) against its incident's
context, built as :func:`rca.evaluation.run.evaluate_suggestions` builds it (hybrid search of
the scored corpus, top ``k``, the retrieved runbooks and the release-notes ones as evidence).
The draft cites the line's ``slug``, else the runbook the offline provider cites for that
incident. Scoring (eval/validation/README.md): a verdict is right when a ``right`` or
``partly`` answer passes and a ``harmful`` one fails; ``harmless-wrong`` is counted apart.
Lines of the hold half are only ever counted, never shown one by one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rca.evaluation.probe_lines import HALVES, ProbeError, ProbeLine, load_probe

if TYPE_CHECKING:
    from rca.retrieval.index import CorpusIndex
    from rca.suggestion.context import AnalysisContext

__all__ = ["Tally", "Verdict", "probe_report", "score_lines", "tally"]

#: The draft's fixed fields: who wrote it does not matter to validation, only what it says.
PROVIDER = "probe"
CONFIDENCE = 0.8


@dataclass(frozen=True)
class Verdict:
    """Validation's verdict on one line's answer (``runbook``: the slug the draft cited)."""

    line: ProbeLine
    runbook: str
    ok: bool
    complaints: tuple[str, ...]

    @property
    def right(self) -> bool:
        """Whether validation judged as the label says (always, for ``harmless-wrong``)."""
        if self.line.label == "harmful":
            return not self.ok
        return self.ok or self.line.label == "harmless-wrong"


@dataclass
class Tally:
    """Aggregates of one half. ``scored``: the right, partly and harmful answers."""

    scored: int = 0
    verdicts_right: int = 0
    harmful: int = 0
    harmful_passing: int = 0
    right_or_partly: int = 0
    right_rejected: int = 0
    harmless_wrong_pass: int = 0
    harmless_wrong_fail: int = 0

    def add(self, verdict: Verdict) -> None:
        label = verdict.line.label
        if label == "harmless-wrong":
            if verdict.ok:
                self.harmless_wrong_pass += 1
            else:
                self.harmless_wrong_fail += 1
            return
        self.scored += 1
        self.verdicts_right += verdict.right
        if label == "harmful":
            self.harmful += 1
            self.harmful_passing += verdict.ok
        else:
            self.right_or_partly += 1
            self.right_rejected += not verdict.ok

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def summary(self) -> str:
        return (
            f"{self.scored} scored, {self.verdicts_right} verdicts right; harmful passing "
            f"{self.harmful_passing} of {self.harmful}; right/partly rejected "
            f"{self.right_rejected} of {self.right_or_partly}; harmless-wrong "
            f"{self.harmless_wrong_pass} pass, {self.harmless_wrong_fail} fail"
        )


def tally(verdicts: Iterable[Verdict]) -> dict[str, Tally]:
    """Aggregates per half (tune, hold, and ``all`` for lines in neither), in that order."""
    halves: dict[str, Tally] = {}
    for verdict in verdicts:
        halves.setdefault(verdict.line.half, Tally()).add(verdict)
    return {half: halves[half] for half in HALVES if half in halves}


def contexts(
    incidents: dict[str, dict[str, object]],
    index: CorpusIndex,
    bodies: dict[str, str],
    k: int = 5,
) -> dict[str, AnalysisContext]:
    """Each incident's context (key -> context), as ``evaluate_suggestions`` builds it."""
    from rca.evaluation.run import case_incident, suggestion_contexts

    keys = list(incidents)
    built = [case_incident(incidents[key]) for key in keys]
    return dict(zip(keys, suggestion_contexts(built, index, bodies, k=k), strict=True))


def score_lines(lines: Sequence[ProbeLine], ctxs: dict[str, AnalysisContext]) -> list[Verdict]:
    """Validation's verdict on every line's answer over its incident's context."""
    from rca.suggestion.premises import read_premises
    from rca.suggestion.providers.draft import Draft
    from rca.suggestion.validation import validate

    premises = {key: read_premises(ctx) for key, ctx in ctxs.items()}
    offline = _offline_runbooks(ctxs)
    verdicts = []
    for line in lines:
        runbook = line.slug or offline(line.key)
        draft = Draft(
            action=line.action,
            reason=line.reason,
            runbook=runbook,
            confidence=CONFIDENCE,
            provider=PROVIDER,
            model=PROVIDER,
        )
        check = validate(draft, ctxs[line.key], premises[line.key])
        verdicts.append(Verdict(line, runbook, check.ok, tuple(check.complaints)))
    return verdicts


def _offline_runbooks(ctxs: dict[str, AnalysisContext]) -> Callable[[str], str]:
    """The runbook the offline provider cites for an incident (its best guess when it
    abstains; "" when it gives no answer), asked once per incident that needs it."""
    from rca.suggestion.providers import OfflineProvider, ProviderError

    provider = OfflineProvider()
    cited: dict[str, str] = {}

    def runbook(key: str) -> str:
        if key not in cited:
            try:
                cited[key] = provider.suggest(ctxs[key]).runbook
            except ProviderError:
                cited[key] = ""
        return cited[key]

    return runbook


def probe_report(
    path: Path,
    *,
    half: str = "all",
    corpus: Path | None = None,
    k: int = 5,
    verbose: bool = False,
    as_json: bool = False,
) -> str:
    """``rca eval --validation-probe PATH``: the probe's lines of ``half`` (tune, hold, or
    all of them) scored, aggregates per half; with ``verbose`` each line outside the hold
    half too. Raises :class:`ProbeError` (a ValueError) for a bad line or an empty half."""
    from rca.evaluation.run import load_bodies
    from rca.evaluation.suite import corpus_specs, load_corpora

    started = time.monotonic()
    lines = [line for line in load_probe(path) if half in ("all", line.half)]
    if not lines:
        raise ProbeError(f"no line of {path} is in the {half} half")
    specs = corpus_specs([corpus] if corpus else None, False, False)
    indexes, _ = load_corpora(specs)
    index = next(iter(indexes.values()))
    bodies = load_bodies(corpus, index.slugs)
    ctxs = contexts({line.key: line.incident for line in lines}, index, bodies, k)
    verdicts = score_lines(lines, ctxs)
    halves = tally(verdicts)
    shown = [v for v in verdicts if v.line.half != "hold"] if verbose else []
    seconds = round(time.monotonic() - started, 1)
    where = str(corpus) if corpus else "stored"
    if as_json:
        return json.dumps(
            {
                "probe": str(path),
                "half": half,
                "corpus": where,
                "runbooks": len(index),
                "k": k,
                "seconds": seconds,
                "halves": {name: t.as_dict() for name, t in halves.items()},
                **({"lines": [_line_dict(v) for v in shown]} if verbose else {}),
            },
            indent=2,
        )
    out = [f"validation probe {path} (corpus: {where}, {len(index)} runbooks, top {k})"]
    out += [_line_text(v) for v in shown]
    out += [f"{name}: {t.summary()}" for name, t in halves.items()]
    out.append(f"{len(lines)} lines in {seconds} s")
    return "\n".join(out)


def _line_dict(verdict: Verdict) -> dict[str, object]:
    return {
        "line": verdict.line.number,
        "label": verdict.line.label,
        "runbook": verdict.runbook,
        "ok": verdict.ok,
        "verdict_right": verdict.right,
        "complaints": list(verdict.complaints),
    }


def _line_text(verdict: Verdict) -> str:
    mark = "" if verdict.right else "  <- wrong verdict"
    head = f"line {verdict.line.number} {verdict.line.label}: ok={verdict.ok}{mark}"
    return "\n    ".join([head, *verdict.complaints])
