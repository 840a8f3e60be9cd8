"""Limits a message states for a token count, a batch or a file size, and of what kind.

"The model's max seq len (32768) is larger than the maximum number of tokens that can be
stored in KV cache (7344)" is not fixed by ``--max-model-len 16384``; "n_ctx_per_seq (32768) >
n_ctx_train (4096)" not by ``-c 65536``; "max_tokens is too large: 10000. This model supports
at most 4096 completion tokens" not by ``max_tokens=8192``. :mod:`.named_limits` reads the
"max supported X: N" forms of versions and opsets by the words of X; a size's setting goes by
other names in the answer (``max_position_embeddings`` bounds ``max_model_len``), so each tool's
wording here yields a :class:`SizeBound` of a *quantity* (a family of
``rca/knowledge/size-settings.toml``: :mod:`.size_settings`), with its limit, the value the
message rejects and the limit's *kind*:

- ``model``: trained or built into the model or engine (only another model, rope scaling or a
  rebuild moves it);
- ``server``: a launch setting, bounded here by another one the message names (``unless``
  that one moves too);
- ``memory``: what this GPU's memory holds now (memory settings move it);
- ``hard``: nothing raises it (protobuf's 2 GB);
- ``request``: what one request may ask for, given the prompt it has (the completion part).

A ``minimum`` bound is a server setting that must hold the request ("LoRA rank 64 is greater
than max_lora_rank 16": ``max_lora_rank`` at least 64). Wordings are the tools' own (vLLM,
transformers, TGI, the OpenAI API, llama.cpp, TensorRT, Triton, onnx). Every pattern is RE2
(:mod:`ingest.linear_regex`) over capped texts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ingest.linear_regex import LinearMatch
from ingest.linear_regex import compile as linear
from rca.suggestion.size_settings import family_of

__all__ = ["SizeBound", "quantity_words", "read_size_bounds", "show_size"]

_MAX_TEXT = 4000
_MAX_TEXTS = 40
_MAX_FOUND = 12
_N = r"\d{1,12}(?:\.\d{1,6})?"
_NAME = r"`?(?P<{}>[A-Za-z_][\w.-]{{0,60}})`?"
_QUANTITY = {
    "context": "the context length (tokens)",
    "input": "the input length (tokens)",
    "completion": "the completion length (tokens)",
    "batch": "the batch size",
    "file_size": "the file size",
    "batched": "the scheduler's token budget (max_num_batched_tokens)",
    "prefill": "the prefill token budget (max_batch_prefill_tokens)",
    "lora_rank": "the server's maximum LoRA rank",
}
_KIND = {
    "model": "the model's or engine's own maximum: only another model, rope scaling or a"
    " rebuild moves it",
    "server": "the server's configured maximum: raise the server's setting, not the request",
    "memory": "what the GPU memory holds now: give it more memory or ask for less",
    "hard": "a hard limit nothing raises",
    "request": "what is left of the request's limit after its prompt",
}
_MINIMUM_KIND = "a server cap that must hold what the message says is needed"
_PAIRED_KIND = "a server setting bound by another one the message names: move them together"


@dataclass(frozen=True)
class SizeBound:
    """A limit the message states of a quantity (a family of :mod:`.size_settings`)."""

    quantity: str
    limit: float
    requested: float | None
    kind: str
    minimum: bool = False
    #: A family whose setting, moved in the same answer, lets this one move (a server bound).
    unless: str = ""

    def describe(self) -> str:
        what = _QUANTITY.get(self.quantity, self.quantity.replace("_", " "))
        way = "at least" if self.minimum else "at most"
        kind = _KIND.get(self.kind, "")
        if self.kind == "server":
            kind = _PAIRED_KIND if self.unless else _MINIMUM_KIND if self.minimum else kind
        told = f"{what} must be {way} {show_size(self.limit)} ({kind})"
        if self.requested is not None:
            told += f"; it {'is now' if self.minimum else 'rejects'} {show_size(self.requested)}"
        return told

    def exceeded(self) -> bool:
        """Whether the message says the value in use is already past the bound (then any
        move further that way is harm, with or without a number)."""
        if self.requested is None:  # a hard limit, or a server's cap the request is past
            return self.kind in ("hard", "server")
        return self.requested < self.limit if self.minimum else self.requested > self.limit


def quantity_words(quantity: str) -> str:
    """The quantity as named in a complaint ("the batch size")."""
    return _QUANTITY.get(quantity, quantity.replace("_", " ")).partition(" (")[0]


def show_size(value: float) -> str:
    """A size as written: 2 GB as ``2GB``, a whole count without ``.0``."""
    if value >= 2**30 and value % 2**30 == 0:
        return f"{int(value // 2**30)}GB"
    return str(int(value)) if float(value).is_integer() else str(value)


def _i(pattern: str) -> Any:
    return linear(pattern, ignore_case=True)


#: vLLM ``_get_and_verify_max_len``: "User-specified max_model_len (R) is greater than the
#: derived max_model_len (max_position_embeddings=N or model_max_length=None in ...)".
_DERIVED = _i(
    rf"max_model_len \((?P<r>{_N})\) is greater than the derived max_model_len"
    rf" \((?:[A-Za-z_]{{1,40}}=)?(?P<n>{_N})"
)
#: vLLM serving_engine / OpenAI ``context_length_exceeded``.
_CONTEXT = _i(
    rf"maximum context length is (?P<n>{_N}) tokens[.,]?\s*however,? you requested"
    rf" (?P<r>{_N}) tokens(?: \((?P<p>{_N}) in (?:the|your) (?:messages|prompt)[;,]"
    rf" (?P<c>{_N}) (?:in|for) the completion\))?"
)
#: Newer vLLM serving_engine wordings: the completion asked for and the prompt's tokens.
_CONTEXT_REST = (
    _i(
        rf"is too large: (?P<c>{_N})\.\s*This model's maximum context length is (?P<n>{_N})"
        rf" tokens and your request has (?P<p>{_N}) input tokens"
    ),
    _i(
        rf"maximum context length is (?P<n>{_N}) tokens\.\s*However, you requested (?P<c>{_N})"
        rf" output tokens and your prompt contains at least (?P<p>{_N}) input tokens"
    ),
)
#: OpenAI ``invalid_request_error`` on ``max_tokens`` (``max_completion_tokens``).
_COMPLETION = _i(
    rf"max_(?:completion_)?tokens is too large: (?P<r>{_N})\.\s*This model supports at most"
    rf" (?P<n>{_N}) completion tokens"
)
#: vLLM ``processor``: the prompt alone is longer than the server's max_model_len, which must
#: then be raised to hold it (a minimum on the context setting).
_PROMPT = _i(
    rf"decoder prompt \(length (?P<r>{_N})\) is longer than the maximum model length of"
    rf" (?P<n>{_N})"
)
#: TGI ``router/src/validation.rs``: ``MaxTotalTokens``, ``MaxNewTokens``.
_TGI_TOTAL = _i(
    rf"`inputs` tokens \+ `max_new_tokens` must be <= (?P<n>{_N})\.\s*Given: (?P<p>{_N})"
    rf" `inputs` tokens and (?P<c>{_N}) `max_new_tokens`"
)
_TGI_NEW = _i(rf"`max_new_tokens` must be <= (?P<n>{_N})\.\s*Given: (?P<r>{_N})")
#: transformers ``tokenization_utils_base``.
_TOKENIZER = _i(rf"maximum sequence length for this model \((?P<r>{_N}) > (?P<n>{_N})\)")
#: transformers ``generation_whisper``: the decoder's trained positions.
_TARGET = _i(
    rf"`max_new_tokens` is: (?P<r>{_N})\.\s*This exceeds the `?max_target_positions`? of the"
    rf" [\w-]{{1,40}} model: (?P<n>{_N})"
)
_TARGET_PROMPT = _i(rf"\bis (?P<p>{_N}), and (?:the )?`max_new_tokens` is (?P<c>{_N})")
#: llama.cpp ``llama-context.cpp`` and its server.
_TRAIN = _i(rf"n_ctx(?:_per_seq|_seq|_pre_seq)? \((?P<r>{_N})\) [<>] n_ctx_train \((?P<n>{_N})\)")
_SLOT = _i(
    rf"slot context \((?P<r>{_N})\) exceeds the training context of the model \((?P<n>{_N})\)"
)
#: vLLM KV cache checks (v0 worker, v1 ``kv_cache_utils``).
_KV = _i(
    rf"max seq len \((?P<r>{_N})\) is larger than the maximum number of tokens that can be"
    rf" stored in KV cache \((?P<n>{_N})\)"
)
_KV_ESTIMATED = _i(rf"estimated maximum model length is (?P<n>{_N})")
_KV_SEQ = _i(rf"max seq len \((?P<r>{_N})\)")
#: vLLM ``SchedulerConfig._verify_args``; TGI launcher: one setting must hold another.
_SMALLER = _i(
    _NAME.format("low")
    + rf" \((?P<r>{_N})\) is smaller than "
    + _NAME.format("high")
    + rf" \((?P<n>{_N})\)"
)
_AT_LEAST = _i(
    _NAME.format("low")
    + r" must be >= "
    + _NAME.format("high")
    + rf"\.\s*Given: (?P<r>{_N}) and (?P<n>{_N})"
)
#: vLLM LoRA: "LoRA rank 64 is greater than max_lora_rank 16."
_GREATER = _i(
    rf"\b(?P<r>{_N})\)? is (?:greater|larger) than " + _NAME.format("high") + rf"\s*\(?(?P<n>{_N})"
)
#: Triton core, the Triton TensorRT backend, TensorRT's profile check, an engine's batch.
_TRITON = _i(rf"batch-size must be <= (?P<n>{_N})")
_ENGINE_BATCH = _i(
    rf"max-batch (?P<r>{_N}) but TensorRT engine only supports max-batch (?P<n>{_N})"
)
_PROFILE = _i(
    rf"at index 0, maximum dimension in profile is (?P<n>{_N}), minimum dimension in profile"
    rf" is (?P<m>{_N}), but supplied dimension is (?P<r>{_N})"
)
#: Triton core's shape check on the batch axis ("... expected the shape of dimension 0 to be
#: between 1 and 1 but received 32"): an engine's profile when the model is TensorRT.
_DIM0 = _i(
    rf"expected the shape of dimension 0 to be between (?P<m>{_N}) and (?P<n>{_N}) but"
    rf" received (?P<r>{_N})"
)
_TENSORRT = _i(r"tensorrt|\.plan\b")
_BATCH_EXCEEDS = _i(
    rf"batch size \((?P<r>{_N})\) exceeds the max(?:imum)? batch size \((?P<n>{_N})\)"
    r"(?P<engine> of the engine)?"
)
#: A position embedding or its ids (BERT's ``position_embeddings``, GPT-2's ``wpe``).
_POSITIONS = _i(r"\bposition_(?:embeddings?|ids)\b|\bwpe\b")
#: The failure class (of the runbook retrieval ranks first) of an input longer than the
#: model's positions (``rca/runbooks``' ``failure_class``).
_TOO_LONG = "seq_too_long"
#: onnx ("exceeds", ``onnx.checker``) and protobuf's own log ("exceeded", ``message_lite.cc``).
_PROTOBUF = _i(rf"exceed(?:s|ed) maximum protobuf size of (?P<n>{_N}) ?(?P<unit>[KMG])B")


def _f(match: LinearMatch, group: str) -> float | None:
    value = match.group(group)
    return float(value) if value else None


def _pair(match: LinearMatch) -> Iterator[SizeBound]:
    """ "low (R) is smaller than high (N)": low's setting must reach N, high's stay within R
    (each unless the other moves). Only settings the families know count."""
    low, high = family_of(match.group("low")), family_of(match.group("high"))
    if low is None or high is None or low == high:
        return
    r, n = float(match.group("r")), float(match.group("n"))
    yield SizeBound(low, n, r, "server", minimum=True, unless=high)
    yield SizeBound(high, r, n, "server", unless=low)


def _bounds(text: str) -> Iterator[SizeBound]:
    for m in _DERIVED.finditer(text):
        yield SizeBound("context", float(m.group("n")), float(m.group("r")), "model")
    for m in _CONTEXT.finditer(text):
        n, p, c = float(m.group("n")), _f(m, "p"), _f(m, "c")
        asked = c if c is not None else float(m.group("r"))
        yield SizeBound("completion", n - (p or 0), asked, "request", unless="context")
    for pattern in _CONTEXT_REST:
        for m in pattern.finditer(text):
            n, p, c = float(m.group("n")), float(m.group("p")), float(m.group("c"))
            yield SizeBound("completion", n - p, c, "request", unless="context")
    for m in _PROMPT.finditer(text):
        r, n = float(m.group("r")), float(m.group("n"))
        yield SizeBound("context", r, n, "server", minimum=True)
    for m in _COMPLETION.finditer(text):
        yield SizeBound("completion", float(m.group("n")), float(m.group("r")), "model")
    for m in _TGI_TOTAL.finditer(text):
        n, p = float(m.group("n")), float(m.group("p"))
        yield SizeBound("completion", n - p, float(m.group("c")), "request", unless="context")
    for m in _TGI_NEW.finditer(text):
        if text[max(0, m.start() - 4) : m.start()].rstrip().endswith("+"):
            continue  # the total's wording ("`inputs` tokens + `max_new_tokens` must be")
        yield SizeBound(
            "completion", float(m.group("n")), float(m.group("r")), "request", unless="context"
        )
    for pattern in (_TOKENIZER, _TRAIN, _SLOT):
        for m in pattern.finditer(text):
            yield SizeBound("context", float(m.group("n")), float(m.group("r")), "model")
    for m in _TARGET.finditer(text):
        n = float(m.group("n"))
        yield SizeBound("context", n, float(m.group("r")), "model")
        for prompt in _TARGET_PROMPT.finditer(text):
            yield SizeBound("completion", n - float(prompt.group("p")), _f(prompt, "c"), "model")
    for m in _KV.finditer(text):
        yield SizeBound("context", float(m.group("n")), float(m.group("r")), "memory")
    for m in _KV_ESTIMATED.finditer(text):
        seq = _KV_SEQ.search(text)
        yield SizeBound("context", float(m.group("n")), _f(seq, "r") if seq else None, "memory")
    for pattern in (_SMALLER, _AT_LEAST):
        for m in pattern.finditer(text):
            yield from _pair(m)
    for m in _GREATER.finditer(text):
        family = family_of(m.group("high"))
        if family == "lora_rank":  # the server's cap must hold the adapter's rank
            yield SizeBound(
                family, float(m.group("r")), float(m.group("n")), "server", minimum=True
            )
    yield from _batch_bounds(text)
    for m in _PROTOBUF.finditer(text):
        scale = {"K": 2**10, "M": 2**20, "G": 2**30}[m.group("unit").upper()]
        yield SizeBound("file_size", float(m.group("n")) * scale, None, "hard")


def _batch_bounds(text: str) -> Iterator[SizeBound]:
    for m in _TRITON.finditer(text):
        yield SizeBound("batch", float(m.group("n")), None, "server")
    for pattern in (_ENGINE_BATCH, _PROFILE):
        for m in pattern.finditer(text):
            yield SizeBound("batch", float(m.group("n")), float(m.group("r")), "model")
    for m in _DIM0.finditer(text):
        kind = "model" if _TENSORRT.search(text) else "server"
        yield SizeBound("batch", float(m.group("n")), float(m.group("r")), kind)
    for m in _BATCH_EXCEEDS.finditer(text):
        kind = "model" if m.group("engine") else "server"
        yield SizeBound("batch", float(m.group("n")), float(m.group("r")), kind)


def _position_bounds(
    shape_diff: Sequence[Any], frames: Sequence[Any], classes: Sequence[str]
) -> Iterator[SizeBound]:
    """A one-axis shape diff at position embeddings (the input's length against the trained
    positions: "size of tensor a (2545) must match the size of tensor b (512)" where the
    failing line adds ``position_embeddings``, a diff of that tensor, or the failure's class
    is a sequence longer than the model's: ``classes``): a model bound."""
    failing = str((frames[-1] or {}).get("context_line") or "") if frames else ""
    at_positions = bool(_POSITIONS.search(failing[:_MAX_TEXT]))
    for diff in list(shape_diff)[:_MAX_FOUND]:
        tensor = str((diff or {}).get("tensor") or "")
        expected, actual = diff.get("expected") or [], diff.get("actual") or []
        # Under the class alone, only a broadcast of two tensors (the input's length against
        # the stored positions), not a length the message names as a setting ("`max_length`
        # is set to 4096", which the user may raise).
        broadcast = _TOO_LONG in classes and diff.get("op") == "broadcast"
        if not (at_positions or broadcast or _POSITIONS.search(tensor)) or len(expected) != 1:
            continue
        want, got = expected[0], actual[0] if len(actual) == 1 else None
        if isinstance(want, int) and isinstance(got, int) and got > want:
            yield SizeBound("context", float(want), float(got), "model")


def read_size_bounds(
    texts: Sequence[str],
    shape_diff: Sequence[Any] = (),
    frames: Sequence[Any] = (),
    classes: Sequence[str] = (),
) -> tuple[SizeBound, ...]:
    """The size bounds the message and log lines state (and a position-embedding shape diff:
    at the failing frame, or under a ``classes`` of sequences too long for the model), each
    once, at most a dozen."""
    found: list[SizeBound] = []
    for text in list(texts)[:_MAX_TEXTS]:
        for bound in _bounds((text or "")[:_MAX_TEXT]):
            if bound not in found and bound.limit >= 0:
                found.append(bound)
    found += [b for b in _position_bounds(shape_diff, frames, classes) if b not in found]
    return tuple(found[:_MAX_FOUND])
