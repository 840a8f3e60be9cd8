"""Which runbook remediation step fits this incident best, among those that validate.

The offline composer's judgement lives here: the weights, the training/serving and framework
cues, and the facts read from shapes, memory figures and state_dict keys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ingest.linear_regex import LinearMatch
from ingest.linear_regex import compile as linear
from ingest.parsing.frames import Frame
from rca.corpus.sentences import split_sentences
from rca.retrieval.tokens import tokenize
from rca.suggestion.context import AnalysisContext, Evidence
from rca.suggestion.providers.draft import Draft
from rca.suggestion.providers.wording import (
    drop_asides,
    first_sentence,
    incident_specifics,
    shorten,
    split_step,
)
from rca.suggestion.validation import MAX_ACTION_CHARS, MAX_REASON_CHARS, validate

# --- choosing the step that fits this incident --------------------------------------
#
# Each remediation step of the best runbook, and of the runbooks of the same failure class
# that retrieval ranked nearly as high, is scored by: how well its runbook ranked, its place
# in the runbook (runbooks list the most common fix first), the words it shares with the
# incident's own code, logs and message (weighted by how rare they are among the retrieved
# steps), whether it is meant for training or for serving when the incident is one or the
# other, whether it is written for a framework the incident does not involve, and what the
# incident's shapes and memory figures say. Only steps whose composed suggestion passes
# validation compete.

MAX_CANDIDATE_RUNBOOKS = 3
MIN_RELATIVE_SCORE = 0.75  # of the top runbook's score, for a runbook's steps to compete
RUNBOOK_WEIGHT = 2.0
POSITION_PENALTY = 0.5  # per step further down the runbook
OVERLAP_WEIGHT = 1.0  # shared words count with diminishing returns: log(1 + sum / scale)
OVERLAP_SCALE = 2.0
REASON_WEIGHT = 0.3  # words of the step's reason count less than words of its action
MODE_WEIGHT = 1.5  # training step for a training incident (or serving for serving)
FRAMEWORK_WEIGHT = 0.5  # step written for a framework the incident involves
FACT_WEIGHT = 1.5  # step that names what the shapes or state_dict keys say the fix is
CONTRADICTED_PENALTY = 3.0  # step whose premise the incident's own figures rule out

#: How much a word counts by where the incident says it: the message is what retrieval
#: already matched on (and its advice, "try setting ...", is generic), while frames, logs
#: and context show this incident's code and setting; facts derived from shapes count most.
_FROM_MESSAGE, _FROM_ADVICE, _FROM_CONTEXT = 0.5, 0.25, 1.0

#: Whole words that place a text in training or in serving.
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
#: Frameworks a step may be written for; synonyms map to one name.
_FRAMEWORKS = {
    "vllm": "vllm",
    "tgi": "tgi",
    "keras": "keras",
    "tensorflow": "keras",
    "tf": "keras",
    "timm": "timm",
    "deepspeed": "deepspeed",
    "diffusion": "diffusers",
    "diffusers": "diffusers",
    "transformers": "transformers",
    "peft": "peft",
    "triton": "triton",
    "torchserve": "torchserve",
    "tensorrt": "tensorrt",
    "trtexec": "tensorrt",
    "onnx": "onnx",
    "onnxruntime": "onnx",
    "opencv": "opencv",
    "cv2": "opencv",
    "xformers": "xformers",
    "lightning": "lightning",
    "sentence_transformers": "transformers",
    "bitsandbytes": "bitsandbytes",
    "ollama": "ollama",
}
_ADVICE = linear(
    r"\b(?:try|consider|you can|you might|you may|please|if you|to avoid|see documentation"
    r"|make sure|hint)\b",
    ignore_case=True,
)
_MEMORY = r"(?P<{name}>\d+(?:\.\d+)?)\s*(?P<{name}_unit>[KMGT])iB"
_OOM_NEW = linear(
    _MEMORY.format(name="alloc")
    + r" is allocated by PyTorch, and "
    + _MEMORY.format(name="spare")
    + r" is reserved by PyTorch but unallocated"
)
_OOM_OLD = linear(
    _MEMORY.format(name="alloc")
    + r" already allocated;.*?"
    + _MEMORY.format(name="reserved")
    + r" reserved in total by PyTorch"
)
_UNITS = {"K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0 * 1024}
_FRAGMENTATION_WORDS = frozenset({"fragmentation", "expandable_segments", "max_split_size_mb"})
_KEYS_LINE = linear(r"(?P<kind>Missing|Unexpected) key\(s\) in state_dict:(?P<keys>[^\n]*)")
_KEY = linear(r'"([^"]+)"')


def _sentences(message: str) -> list[str]:
    """The message's sentences: each line of it split by the corpus's one sentence rule."""
    return [piece for line in message.splitlines() for piece in split_sentences(line)]


def _mib(match: LinearMatch, name: str) -> float:
    return float(match.group(name)) * _UNITS[match.group(f"{name}_unit")]


def _fragmented(message: str) -> bool | None:
    """From an OOM message's figures: is a large part of the memory PyTorch reserved unused
    (fragmentation), or is it really allocated? ``None`` when the message does not say."""
    if match := _OOM_NEW.search(message):
        allocated, spare = _mib(match, "alloc"), _mib(match, "spare")
    elif match := _OOM_OLD.search(message):
        allocated = _mib(match, "alloc")
        spare = max(_mib(match, "reserved") - allocated, 0.0)
    else:
        return None
    return spare >= 0.25 * max(allocated, 1.0)


def _key_prefix_words(message: str) -> list[str]:
    """When the unexpected state_dict keys are the missing ones plus a prefix (or the other
    way round), the words of a prefix fix and the prefix itself."""
    keys: dict[str, list[str]] = {"Missing": [], "Unexpected": []}
    for match in _KEYS_LINE.finditer(message):
        keys[match.group("kind")].extend(_KEY.findall(match.group("keys")))
    missing, unexpected = set(keys["Missing"]), set(keys["Unexpected"])
    for longer, shorter in ((unexpected, missing), (missing, unexpected)):
        for key in longer:
            for other in shorter:
                if key != other and key.endswith("." + other):
                    prefix = key[: -len(other)]
                    return ["prefix", "strip", *tokenize(prefix)]
    return []


def _concrete_matches(expected: list, actual: list) -> int | None:
    """Equal concrete dimensions of two aligned shapes; None when a concrete pair differs."""
    count = 0
    for e, a in zip(expected, actual, strict=True):
        if e is None or a is None:
            continue
        if e != a:
            return None
        count += 1
    return count


def _shape_words(diffs: list) -> list[str]:
    """What the shapes say about the fix, in the words runbooks use for it."""
    words: list[str] = []
    for diff in diffs[:2]:
        expected, actual = list(diff.get("expected") or []), list(diff.get("actual") or [])
        op = str(diff.get("op") or "")
        if len(actual) == len(expected) - 1:
            batch = _concrete_matches(expected[1:], actual)  # the leading (batch) axis missing
            channel = _concrete_matches(expected[:-1], actual)  # the trailing axis missing
            if batch is not None and (channel is None or batch > channel):
                words += ["batch", "expand_dims", "unsqueeze"]
            elif channel is not None and (batch is None or channel > batch):
                words += ["channel", "feature"]
        known_e = [d for d in expected if isinstance(d, int)]
        known_a = [d for d in actual if isinstance(d, int)]
        if (
            len(expected) != len(actual)
            and known_e
            and known_a
            and len(known_e) != len(known_a)
            and math.prod(known_e) == math.prod(known_a)
        ):
            words += ["reshape", "flatten"]
        if op == "conv" and len(expected) > 2 and len(actual) == len(expected):
            need, got = expected[1], actual[1]
            if need == 3 and got == 1:
                words += ["grayscale", "repeat", "rgb"]
            elif need == 3 and got == 4:
                words += ["rgba", "rgb"]
            elif need is not None and actual[-1] == need:
                words += ["permute", "layout", "hwc", "chw", "channels_last"]
    return words


_ES_PLURAL = linear(r"(?:ss|ch|sh|x|z)e$")


def _terms(text: str) -> list[str]:
    """:func:`rca.retrieval.tokens.tokenize`, with "-es" plurals folded too ("losses" -> "loss")."""
    return [token[:-1] if _ES_PLURAL.search(token) else token for token in tokenize(text)]


#: Frames that load or move weights, and frames that run the model. Out of memory while
#: only the former are on the stack means the weights themselves do not fit: precision,
#: quantisation or placement fix it, running under no_grad or smaller batches cannot.
_LOADING_FUNCTIONS = frozenset(
    {"from_pretrained", "load_state_dict", "_load_from_state_dict", "to", "cuda", "_apply",
     "load_checkpoint_and_dispatch", "dispatch_model", "load_model"}
)  # fmt: skip
_RUNNING_FUNCTIONS = frozenset(
    {"forward", "_call_impl", "_wrapped_call_impl", "__call__", "generate", "backward",
     "step", "predict", "run", "decode", "encode", "sample"}
)  # fmt: skip
_WEIGHTS_FIT_WORDS = ["torch_dtype", "float16", "bfloat16", "quantiz", "load_in_8bit",
                      "load_in_4bit", "device_map"]  # fmt: skip
_OOM = linear(r"out of memory|OutOfMemoryError|OOM when allocating", ignore_case=True)


def _loading_oom_words(ctx: AnalysisContext) -> list[str]:
    """When the GPU ran out of memory while weights were loaded or moved, the words of a
    fix that makes them fit; else nothing."""
    if not _OOM.search(f"{ctx.error_type} {ctx.message}"):
        return []
    functions = {str(frame.get("function") or "") for frame in ctx.frames}
    if functions & _LOADING_FUNCTIONS and not functions & _RUNNING_FUNCTIONS:
        return _WEIGHTS_FIT_WORDS
    return []


_GENERIC_TENSOR_WORDS = frozenset({"weight", "bias", "model", "module", "tensor", "input"})


def _tensor_words(diffs: list) -> list[str]:
    """The mismatched tensor's own name ("embed_tokens", "fc"): steps naming it fit."""
    names = " ".join(str(diff.get("tensor") or "") for diff in diffs[:2])
    return [word for word in _terms(names) if word not in _GENERIC_TENSOR_WORDS]


def _frame_text(frame: Frame) -> str:
    return " ".join(
        str(frame.get(key) or "") for key in ("filename", "function", "module", "context_line")
    )


def _whole_words(text: str) -> set[str]:
    return {word.lower() for word in _WHOLE_WORD.findall(text)}


def _mode(words: set[str], bias: int = 0) -> str | None:
    training = len(_TRAINING_CUES & words)
    serving = len(_SERVING_CUES & words) + bias
    return "training" if training > serving else "serving" if serving > training else None


@dataclass
class _Incident:
    """The incident as the step selector sees it: weighted words, mode, frameworks, facts."""

    words: dict[str, float]
    mode: str | None  # "training", "serving", or None when the incident does not tell
    frameworks: frozenset[str]
    contradicted: frozenset[str]  # words of fixes whose premise the incident rules out
    facts: frozenset[str]  # words of the fix the shapes or keys point at


def _incident(ctx: AnalysisContext) -> _Incident:
    words: dict[str, float] = {}
    texts: list[str] = [ctx.error_type or ""]

    def add(text: str, weight: float) -> None:
        texts.append(text)
        for token in _terms(text):
            words[token] = max(words.get(token, 0.0), weight)

    add(ctx.error_type or "", _FROM_MESSAGE)
    message = ctx.message or ""
    for sentence in _sentences(message):
        add(sentence, _FROM_ADVICE if _ADVICE.search(sentence) else _FROM_MESSAGE)
    for frame in ctx.frames:
        add(_frame_text(frame), _FROM_CONTEXT)
    for entry in ctx.logs:
        add(str((entry.get("message") if isinstance(entry, dict) else entry) or ""), _FROM_CONTEXT)
    context = ctx.inference_context or {}
    add(" ".join(str(v) for v in context.values() if isinstance(v, str | int | float)), 1.0)
    diffs = list(ctx.shape_diff)
    facts = frozenset(
        _terms(" ".join(_shape_words(diffs) + _key_prefix_words(message)))
        + _tensor_words(diffs)
        + _loading_oom_words(ctx)
    )

    whole = _whole_words("\n".join(texts))
    frameworks = frozenset(_FRAMEWORKS[w] for w in whole | words.keys() if w in _FRAMEWORKS)
    contradicted = _FRAGMENTATION_WORDS if _fragmented(message) is False else frozenset()
    mode = _mode(whole, bias=1 if context else 0)
    return _Incident(words, mode, frameworks, contradicted, facts)


@dataclass
class Candidate:
    evidence: Evidence
    position: int  # 0-based place of the step in its runbook
    action: str  # as it will be suggested (shortened to the limits, validated)
    reason: str
    action_tokens: set[str]
    reason_tokens: set[str]
    score: float = 0.0


def _relative(item: Evidence, top: Evidence) -> float:
    if item is top:
        return 1.0
    best = float(top.score)
    return float(item.score) / best if best > 0 else 0.0


def _candidate_runbooks(ctx: AnalysisContext) -> list[Evidence]:
    """The top runbook and the ones of its failure class ranked nearly as high."""
    runbooks = [item for item in ctx.evidence if item.kind == "runbook"]
    if not runbooks:
        return []
    ordered = sorted(runbooks, key=lambda item: -float(item.score))  # stable: ties keep order
    top = ordered[0]
    chosen = [top]
    for item in ordered[1:MAX_CANDIDATE_RUNBOOKS]:
        if item.failure_class == top.failure_class and _relative(item, top) >= MIN_RELATIVE_SCORE:
            chosen.append(item)
    return chosen


def compose(source: Evidence, action: str, reason: str, ctx: AnalysisContext) -> tuple[str, str]:
    """Action (one sentence) and reason (the step's first sentence plus the specifics)."""
    action = first_sentence(shorten(action), MAX_ACTION_CHARS).rstrip(".") + "."
    specifics = incident_specifics(ctx)
    room = MAX_REASON_CHARS - len(specifics) - 1
    base = first_sentence(reason or f"This incident matches the runbook '{source.title}'.", room)
    base = base[:1].upper() + base[1:]
    return action, f"{base} {specifics}".strip()


def _valid_wording(source: Evidence, step: str, ctx: AnalysisContext) -> tuple[str, str] | None:
    """The step as a suggestion that passes validation: as written, else without its
    parenthetical examples (which may name axes or sizes this incident does not have)."""
    action, reason = split_step(step)
    variants = [(action, reason), (drop_asides(action), drop_asides(reason))]
    for variant_action, variant_reason in dict.fromkeys(variants):
        composed = compose(source, variant_action, variant_reason, ctx)
        draft = Draft(*composed, runbook=source.slug, confidence=0.0, provider="", model="")
        if validate(draft, ctx).ok:
            return composed
    return None


def _names_fact(tokens: set[str], facts: frozenset[str]) -> bool:
    """Whether a step's words name a fact ("embed" also matches "embedding")."""
    return any(
        token == fact or (len(fact) >= 4 and token.startswith(fact))
        for token in tokens
        for fact in facts
    )


def rank_steps(ctx: AnalysisContext) -> list[Candidate]:
    """Every step of the candidate runbooks that validates, best fit for this incident first."""
    runbooks = _candidate_runbooks(ctx)
    if not runbooks:
        return []
    candidates: list[Candidate] = []
    for item in runbooks:
        for position, step in enumerate(item.remediation):
            wording = _valid_wording(item, step, ctx)
            if wording is None:
                continue
            action, reason = split_step(step)
            candidates.append(
                Candidate(item, position, *wording, set(_terms(action)), set(_terms(reason)))
            )
    if not candidates:
        return []
    incident = _incident(ctx)
    # How rare each word is among all the retrieved runbooks' steps: a word most steps
    # share ("model", "tensor") says little about which step fits.
    documents = [
        set(_terms(step))
        for item in ctx.evidence
        if item.kind == "runbook"
        for step in item.remediation
    ]
    frequency: dict[str, int] = {}
    for document in documents:
        for token in document:
            frequency[token] = frequency.get(token, 0) + 1

    def rarity(token: str) -> float:
        return math.log((len(documents) + 1) / (frequency.get(token, 0) + 0.5))

    def shared(tokens: set[str]) -> float:
        return sum(incident.words.get(token, 0.0) * rarity(token) for token in tokens)

    top = runbooks[0]
    for candidate in candidates:
        item, own = candidate.evidence, candidate.action_tokens
        overlap = shared(own) + REASON_WEIGHT * shared(candidate.reason_tokens - own)
        score = RUNBOOK_WEIGHT * _relative(item, top) - POSITION_PENALTY * candidate.position
        score += OVERLAP_WEIGHT * math.log1p(overlap / OVERLAP_SCALE)
        words = _whole_words(split_step(item.remediation[candidate.position])[0])
        mode = _mode(words) or _mode(_whole_words(item.title))
        if mode and incident.mode:
            score += MODE_WEIGHT if mode == incident.mode else -MODE_WEIGHT
        named = {_FRAMEWORKS[w] for w in words if w in _FRAMEWORKS}
        if named & incident.frameworks:
            score += FRAMEWORK_WEIGHT
        elif named and incident.frameworks:  # written for another framework than this one's
            score -= FRAMEWORK_WEIGHT
        if _names_fact(own, incident.facts):
            score += FACT_WEIGHT
        elif _names_fact(candidate.reason_tokens, incident.facts):
            score += REASON_WEIGHT * FACT_WEIGHT
        if (own | set(_terms(item.title))) & incident.contradicted:
            score -= CONTRADICTED_PENALTY
        candidate.score = score
    # A stable sort keeps the first of equal scores: the better runbook, the earlier step.
    return sorted(candidates, key=lambda c: -c.score)
