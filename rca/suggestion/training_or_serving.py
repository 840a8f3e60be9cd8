"""Whether the incident's own code shows a training run or a serving (inference) run.

A CUDA out-of-memory reads the same in both; what tells them apart is where it happened:
a training loop's frames and lines (``loss.backward()``, ``optimizer.step()``,
``Trainer.train``, Keras ``fit``, ``TrainingArguments``, a log line with an epoch and a
loss or a gradient norm) or a serving path's (an engine's frames and logs, ``generate()``,
``predict``, an inference session, a request's fields in the inference context). Each
side is a fact from :data:`rca.corpus.step_metadata.FACTS` only when the incident shows
it and nothing of the other side: a training script that samples with ``generate()`` in
its evaluation shows both, and then neither fact holds (an unknown contradicts nothing).

A runbook step marked ``mode: training`` or ``mode: serving`` is a fix for that setting
only, so :func:`mode_contradictions` rules it out when the incident shows the other one.
The step ranker's preference (:func:`rca.suggestion.providers.incident_view._mode`) is
this reading where it decides and counts of cue words only where it does not, so the two
never disagree. Folding the cue words away entirely was measured and loses on dev (their
docstring says where).
Every pattern is linear-time (:mod:`ingest.linear_regex`) and reads capped lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ingest.linear_regex import compile as linear
from rca.suggestion.incident_setting import log_texts

if TYPE_CHECKING:
    from rca.suggestion.context import AnalysisContext

__all__ = ["mode_contradictions", "run_facts", "run_kind"]

_MAX_LINES = 600
_MAX_LINE = 2000
_MAX_CONTEXT = 100

#: A frame's function or a code line of a training loop.
_TRAINING_CODE = linear(
    r"\.backward\s*\(|\b(?:optimizer|optim|opt|scaler)\.step\s*\(|\bzero_grad\s*\("
    r"|\b(?:trainer|Trainer)\.train\s*\(|\b_inner_training_loop\b|\btraining_step\b"
    r"|\btrain_(?:step|epoch|one_epoch|loop|batch)\b|\b(?:run|do)_train\w*\b"
    r"|\bTrainingArguments\s*\(|\bSeq2SeqTrainer\b|\bper_device_train_batch_size\b"
    r"|\bgradient_accumulation_steps\b|\bclip_grad_norm_?\s*\(|\bfit_loop\b|\bfit\s*\("
    r"|\b(?:accelerator|engine|model_engine)\.backward\b|--do_train\b"
    r"|(?:^|[\s/])(?:train|finetune|fine_tune|pretrain)\w*\.(?:py|ya?ml)\b",
)
#: Frame files of a training loop and of a serving engine.
_TRAINING_FILE = linear(
    r"transformers/trainer(?:_seq2seq)?\.py|/trl/trainer/|lightning/(?:pytorch/)?loops/"
    r"|keras/(?:src/)?(?:engine|trainers)/\w*train"
)
_SERVING_FILE = linear(
    r"(?:^|[/\\])(?:vllm|text_generation_server|sglang|tensorrt_llm|lmdeploy|tritonserver)[/\\]"
)
#: A frame function name that is a training entry point on its own.
_TRAINING_FUNCTION = linear(r"^(?:train|fit|backward|_inner_training_loop|training_step)$")
#: A log line of a training run: "Epoch 3/10", "epoch: 1 ... loss: 0.53", "grad_norm".
_TRAINING_LOG = linear(
    r"\bepoch\s*[:=]?\s*\d+\s*/\s*\d+|\bepoch\b[^\n]{0,80}\bloss\b\s*[:=]?\s*\d"
    r"|\b(?:train_loss|grad_norm|gradient norm)\b|\bloss\s*[:=]\s*\d[^\n]{0,60}\blr\b",
    ignore_case=True,
)
#: A frame function or code line of a serving path: an engine, generation, prediction.
_SERVING_CODE = linear(
    r"\.generate\s*\(|^\s*generate\s*$|\bLLMEngine\b|\bAsyncLLM(?:Engine)?\b"
    r"|\bvllm\.entrypoints\b|\btext_generation_server\b|\bsglang\.srt\b"
    r"|\bInferenceSession\s*\(|\.predict(?:_on_batch)?\s*\(|\bpipeline\s*\(\s*[\"']"
    r"|\b(?:uvicorn|fastapi|gunicorn)\b|\bvllm\s+serve\b|--tensor-parallel-size\b"
    r"|\bmax_new_tokens\s*=|\bcreate_chat_completion\b|\bhandle_request\b",
)
#: A log line of a server: an HTTP request to an inference route, an engine's start.
_SERVING_LOG = linear(
    r"\b(?:POST|GET)\s+/(?:v1/|v2/)?(?:completions|chat|generate|predict|infer|models)\b"
    r"|\bInitializing an LLM engine\b|\bUvicorn running on\b|\brequest_id\b",
    ignore_case=True,
)
#: Inference-context fields that name a request, a server or a generation limit.
_SERVING_FIELD = linear(
    r"^(?:request\w*|endpoint|route|server\w*|replica\w*|qps|latency\w*|max_tokens"
    r"|max_new_tokens|prompt\w*|deployment\w*|served_model\w*)$",
    ignore_case=True,
)
_TRAINING_FIELD = linear(
    r"^(?:epoch\w*|optimizer\w*|learning_rate|lr|train\w*|grad\w*|global_step)$",
    ignore_case=True,
)
_OTHER = {"training": "runs-serving", "serving": "runs-training"}


def _capped(lines: Iterable[str]) -> list[str]:
    out: list[str] = []
    for text in lines:
        out.extend(line[:_MAX_LINE] for line in str(text).splitlines()[:_MAX_LINES])
        if len(out) >= _MAX_LINES:
            break
    return out[:_MAX_LINES]


def _context_sides(context: Mapping[str, Any]) -> tuple[bool, bool]:
    """(training, serving) as the inference context's field names say."""
    keys = [str(key)[:80] for key in list(context)[:_MAX_CONTEXT]]
    return (
        any(_TRAINING_FIELD.search(key) for key in keys),
        any(_SERVING_FIELD.search(key) for key in keys),
    )


def run_kind(
    message: str,
    frames: Iterable[Mapping[str, Any]],
    logs: Iterable[str],
    context: Mapping[str, Any] | None = None,
) -> str | None:
    """``"training"`` or ``"serving"`` when the incident shows only that side, else None."""
    frames = list(frames)[:_MAX_LINES]
    functions = [str(frame.get("function") or "")[:200] for frame in frames]
    files = [str(frame.get("filename") or "")[:500] for frame in frames]
    code = _capped([str(frame.get("context_line") or "") for frame in frames] + [message])
    log_lines = _capped(logs)
    training = (
        any(_TRAINING_FUNCTION.search(name) for name in functions)
        or any(_TRAINING_FILE.search(name) for name in files)
        or any(_TRAINING_CODE.search(line) for line in code + log_lines)
        or any(_TRAINING_LOG.search(line) for line in log_lines + code)
    )
    serving = (
        any(_SERVING_CODE.search(line) for line in functions + code + log_lines)
        or any(_SERVING_FILE.search(name) for name in files)
        or any(_SERVING_LOG.search(line) for line in log_lines)
    )
    if context:
        by_training, by_serving = _context_sides(context)
        training, serving = training or by_training, serving or by_serving
    if training == serving:
        return None
    return "training" if training else "serving"


def run_facts(ctx: AnalysisContext) -> frozenset[str]:
    """``runs-training`` or ``runs-serving`` for an analysis context (see :func:`run_kind`)."""
    kind = run_kind(ctx.message or "", ctx.frames, log_texts(ctx.logs), ctx.inference_context)
    return frozenset({f"runs-{kind}"}) if kind else frozenset()


def mode_contradictions(mode: str | None, facts: frozenset[str]) -> list[str]:
    """Why a step that fixes only ``mode`` (training or serving) does not apply: the
    incident shows the other setting."""
    if mode in _OTHER and _OTHER[mode] in facts:
        other = "serving" if mode == "training" else "training"
        return [f"the step fixes {mode} runs but the incident's code shows a {other} run"]
    return []
