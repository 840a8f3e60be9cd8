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
from rca.suggestion.context import AnalysisContext
from rca.suggestion.incident_facts import fact_words, terms
from rca.suggestion.premises import read_premises
from rca.suggestion.providers.offline_weights import WEIGHTS

__all__ = ["IncidentView", "read_incident", "whole_words"]

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
    """The message's sentences: each line of it split by the corpus's one sentence rule."""
    return [piece for line in message.splitlines() for piece in split_sentences(line)]


def _frame_text(frame: Frame) -> str:
    return " ".join(
        str(frame.get(key) or "") for key in ("filename", "function", "module", "context_line")
    )


@dataclass(frozen=True)
class IncidentView:
    """What the step ranker matches steps against."""

    words: dict[str, float]  # token -> how much it counts, by where the incident says it
    whole: frozenset[str]  # every whole word, for framework names
    mode: str | None  # "training", "serving", or None when the incident does not tell
    facts: frozenset[str]  # names from rca.corpus.step_metadata.FACTS
    fact_words: frozenset[str]  # the mismatched tensor's name, the key prefix


def _mode(words: set[str], bias: int) -> str | None:
    training = len(_TRAINING_CUES & words)
    serving = len(_SERVING_CUES & words) + bias
    return "training" if training > serving else "serving" if serving > training else None


def read_incident(ctx: AnalysisContext) -> IncidentView:
    """Weigh the incident's words by where it says them and read its setting and facts."""
    words: dict[str, float] = {}
    texts: list[str] = [ctx.error_type or ""]

    def add(text: str, weight: float) -> None:
        texts.append(text)
        for token in terms(text):
            words[token] = max(words.get(token, 0.0), weight)

    add(ctx.error_type or "", WEIGHTS.from_message)
    message = ctx.message or ""
    for sentence in _sentences(message):
        advice = _ADVICE.search(sentence)
        add(sentence, WEIGHTS.from_advice if advice else WEIGHTS.from_message)
    for frame in ctx.frames:
        add(_frame_text(frame), WEIGHTS.from_context)
    for entry in ctx.logs:
        text = entry.get("message") if isinstance(entry, dict) else entry
        add(str(text or ""), WEIGHTS.from_context)
    context = ctx.inference_context or {}
    values = (v for v in context.values() if isinstance(v, str | int | float))
    add(" ".join(str(v) for v in values), WEIGHTS.from_context)
    whole = whole_words("\n".join(texts))
    bias = WEIGHTS.serving_context_bias if context else 0
    diffs = list(ctx.shape_diff)
    return IncidentView(
        words=words,
        whole=frozenset(whole | words.keys()),
        mode=_mode(whole, bias),
        facts=read_premises(ctx).facts,  # the facts premises check: message, frames and logs
        fact_words=fact_words(message, diffs),
    )
