"""The incident as the step ranker sees it: weighted words, setting (training or serving), facts.

Reading an incident is a general mechanism, like the parsers in ``ingest``: the words below
say whether ML code is training or serving a model, whatever failed. Knowledge about a
failure (which step fits) is not here; it is in the runbooks' ``Applies:`` lines.
"""

from __future__ import annotations

from dataclasses import dataclass

from ingest.linear_regex import compile as linear
from ingest.parsing.frames import Frame
from rca.corpus.sentences import split_sentences
from rca.retrieval.frame_paths import evidence_path, evidence_text
from rca.suggestion.context import AnalysisContext
from rca.suggestion.incident_facts import fact_words, terms
from rca.suggestion.premises import read_premises
from rca.suggestion.providers.offline_weights import WEIGHTS, OfflineWeights

__all__ = [
    "SOURCES",
    "IncidentView",
    "evidence_words",
    "read_incident",
    "source_weight",
    "whole_words",
]

#: Whole words that place an incident's code in training or in serving.
_TRAINING_CUES = frozenset(
    {
        "train", "training", "trainer", "backward", "optimizer", "optim", "epoch", "epochs",
        "loss", "fit", "finetune", "fine-tune", "fine-tuning", "gradient", "gradients",
        "grad", "zero_grad", "accumulation", "autograd", "lr", "learning_rate", "scheduler",
        "deepspeed", "fsdp", "lora", "qlora",
    }
)  # fmt: skip
_SERVING_CUES = frozenset(
    {
        "serve", "serving", "server", "inference", "infer", "predict", "prediction",
        "generate", "generation", "endpoint", "api", "request", "requests", "handler", "vllm",
        "triton", "tgi", "deploy", "deployment", "production", "client", "latency",
        "inference_mode", "eval", "evaluate", "evaluation",
    }
)  # fmt: skip
_WHOLE_WORD = linear(r"[A-Za-z][A-Za-z0-9_-]*")
#: A message sentence that gives advice ("try setting ...") is the framework's generic hint.
_ADVICE = linear(
    r"\b(?:try|consider|you can|you might|you may|please|if you|to avoid|see documentation"
    r"|make sure|hint)\b",
    ignore_case=True,
)


def whole_words(text: str) -> set[str]:
    """The lower-cased whole words of ``text`` (identifiers keep their ``_`` and ``-``)."""
    return {word.lower() for word in _WHOLE_WORD.findall(text)}


def _sentences(message: str) -> list[str]:
    """The message's sentences: each line of it split by the corpus's one sentence rule,
    the paths it prints without the user's directories (:func:`_log_text`)."""
    return [
        piece for line in evidence_text(message).splitlines() for piece in split_sentences(line)
    ]


def _log_text(entry: object) -> str:
    """A log entry's text (a dict's ``message``) with each path it prints reduced to its
    evidence (:func:`~rca.retrieval.frame_paths.evidence_text`): a launch command's host
    directory (``-v /data/Triton/repo:/models``) is the user's, not the failure's."""
    text = entry.get("message") if isinstance(entry, dict) else entry
    return evidence_text(str(text or ""))


#: Where an incident says a word (:func:`evidence_words`), the ``source`` of its weight.
SOURCES = ("message", "advice", "log", "context", "own_code", "own_name", "library", "path")


def evidence_words(ctx: AnalysisContext) -> dict[str, list[tuple[str, int]]]:
    """Each word of the incident with every place it is said, as ``(source, depth)``.

    Structural, like the retrieval query (:mod:`rca.retrieval.query`): the error type and
    message (``advice`` for a sentence of generic advice), log lines (both with the paths
    they print reduced as frame files are), the inference context;
    the user's own frames' source lines (``own_code``, depth 0 the innermost) and function
    names (``own_name``); library frames' functions and source lines (``library``, depth 0
    the innermost); and file names and modules (``path``: a file name without the user's
    directories, :func:`~rca.retrieval.frame_paths.evidence_path`). :func:`source_weight` weighs
    them for :func:`read_incident`; ``bench/step_evidence.py`` re-weighs them."""
    words: dict[str, list[tuple[str, int]]] = {}

    def add(text: str, source: str, depth: int = 0) -> None:
        for token in terms(text):
            words.setdefault(token, []).append((source, depth))

    add(ctx.error_type or "", "message")
    for sentence in _sentences(ctx.message or ""):
        add(sentence, "advice" if _ADVICE.search(sentence) else "message")
    depth = {True: 0, False: 0}
    for frame in reversed(ctx.frames):  # innermost first
        own = bool(frame.get("in_app"))
        add(str(frame.get("context_line") or ""), "own_code" if own else "library", depth[own])
        add(str(frame.get("function") or ""), "own_name" if own else "library", depth[own])
        path = evidence_path(str(frame.get("filename") or ""))
        add(f"{path} {frame.get('module') or ''}", "path")
        depth[own] += 1
    for entry in ctx.logs:
        add(_log_text(entry), "log")
    add(" ".join(_context_values(ctx)), "context")
    return words


def source_weight(source: str, depth: int, weights: OfflineWeights = WEIGHTS) -> float:
    """How much a word said at ``(source, depth)`` counts in the step overlap: the message
    :attr:`~OfflineWeights.from_message` (its advice :attr:`~OfflineWeights.from_advice`),
    everything else (frames, logs, context) :attr:`~OfflineWeights.from_context`, whatever
    the depth. Weighing frames by kind (own source line, library frame, file name) as the
    retrieval query does was measured and not adopted (:mod:`.offline_weights`)."""
    del depth  # every frame alike; kept so that ``bench/step_evidence.py`` can re-weigh
    if source == "message":
        return weights.from_message
    return weights.from_advice if source == "advice" else weights.from_context


def _context_values(ctx: AnalysisContext) -> list[str]:
    context = ctx.inference_context or {}
    return [str(v) for v in context.values() if isinstance(v, str | int | float)]


def _frame_text(frame: Frame) -> str:
    filename = evidence_path(str(frame.get("filename") or ""))
    return " ".join(
        [filename, *(str(frame.get(key) or "") for key in ("function", "module", "context_line"))]
    )


@dataclass(frozen=True)
class IncidentView:
    """What the step ranker matches steps against."""

    words: dict[str, float]  # token -> how much it counts, by where the incident says it
    whole: frozenset[str]  # every whole word, for framework names
    mode: str | None  # "training", "serving", or None when the incident does not tell
    facts: frozenset[str]  # names from rca.corpus.step_metadata.FACTS
    fact_words: frozenset[str]  # the mismatched tensor's name, the key prefix


def _mode(words: set[str], bias: int, facts: frozenset[str]) -> str | None:
    """Training or serving: what the premises read (``runs-training`` / ``runs-serving``,
    :func:`rca.suggestion.training_or_serving.run_kind`, the code's own evidence) where they
    decide, else cue-word counts, a preference only.

    One reading where the stricter one decides: the ranker never prefers the setting the
    premise checker rules out; on dev this changes no suggestion (265 cases, 92665c1 plus
    the unknown-setting order). The cue words stay for the rest because dropping them loses
    (same cases, with the unknown-setting weight as a score term: fix term in action
    163 -> 160, abstained 39 -> 42; two head-size mismatches lose the step of their
    setting, three answers abstain; commit d862872 names the cases): they read what
    ``run_kind`` does not (a script named ``inference.py``, "vllm" or "triton" in a path,
    "train" in a log line, an inference context's model and batch), and an incident with
    no setting has every marked step ranked below its score
    (:attr:`~.offline_weights.OfflineWeights.mode_unknown`)."""
    if "runs-training" in facts or "runs-serving" in facts:
        return "training" if "runs-training" in facts else "serving"
    training = len(_TRAINING_CUES & words)
    serving = len(_SERVING_CUES & words) + bias
    return "training" if training > serving else "serving" if serving > training else None


def read_incident(ctx: AnalysisContext, weights: OfflineWeights = WEIGHTS) -> IncidentView:
    """Weigh the incident's words by where it says them and read its setting and facts."""
    words: dict[str, float] = {}
    for token, places in evidence_words(ctx).items():
        weight = max(source_weight(source, depth, weights) for source, depth in places)
        if weight > 0:
            words[token] = weight
    message = ctx.message or ""
    texts = [ctx.error_type or "", ctx.error_type or "", *_sentences(message)]
    texts += [_frame_text(frame) for frame in ctx.frames]
    texts += [_log_text(entry) for entry in ctx.logs]
    texts.append(" ".join(_context_values(ctx)))
    whole = whole_words("\n".join(texts))
    bias = weights.serving_context_bias if ctx.inference_context else 0
    diffs = list(ctx.shape_diff)
    facts = read_premises(ctx).facts  # the facts premises check: message, frames and logs
    return IncidentView(
        words=words,
        whole=frozenset(whole | words.keys()),
        mode=_mode(whole, bias, facts),
        facts=facts,
        fact_words=fact_words(message, diffs),
    )
