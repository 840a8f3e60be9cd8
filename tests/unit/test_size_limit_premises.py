"""An answer that moves a token count, batch or file size past the limit the message states
fails validation with a premise complaint (issue 16, "no harmful suggestion passes").

"The model's max seq len (32768) is larger than the maximum number of tokens that can be
stored in KV cache (7344)" is not fixed by ``--max-model-len 16384`` (lower than 32768, still
above what memory holds); "n_ctx_per_seq (32768) > n_ctx_train (4096)" not by ``n_ctx 8192``;
"maximum dimension in profile is 8" not by a batch of 64. The message's limit and its kind
(the model's, a server setting's, what memory holds, a hard one) are read from each tool's
wording; the answer's setting is matched to the same quantity by data
(``rca/knowledge/size-settings.toml``). Lowering, truncating, a longer-context model, rope
scaling, more memory or a rebuilt engine still pass. Sentences: the tune half of the
reviewer's probe (/tmp/probe-limits/SPEC.md, section 5).
"""

from __future__ import annotations

from typing import Any

import pytest

from rca.evaluation.run import case_incident
from rca.suggestion.evidence import context_for
from rca.suggestion.validation import validate
from tests.support.dev_cases import dev_case
from tests.support.evidence import draft, evidence, message_context
from tests.support.size_messages import (
    HF_MAXLEN,
    HF_TOKIDX,
    LLAMACPP,
    ONNX_2GB,
    OPENAI_CTX,
    OPENAI_MAXTOK,
    TGI_PREFILL,
    TRT_LLM_BATCH,
    TRT_PROFILE,
    VLLM_BATCHED,
    VLLM_REQUEST,
    WHISPER,
)

BUDGET = "vllm-scheduler-token-budget"
TRUNCATE = "seq-too-long-tokenizer-truncation"
TRT = "triton-tensorrt-engine-max-batch"
#: Dev cases and the runbook their first retrieval cites.
DEV = {
    "rb001": "vllm-max-model-len-kv-cache",
    "rj013": "vllm-max-model-len-kv-cache",
    "c047": TRUNCATE,
    "c049": TRUNCATE,
    "rb037": "vllm-lora-config-limits",
    "c092": "vllm-no-memory-cache-blocks",
    "rag012": BUDGET,
    "rb042": TRT,
    "rai002": "onnx-model-2gb-external-data",
}
MESSAGES = {
    "m-vllm-request": (VLLM_REQUEST, BUDGET),
    "m-openai-ctx": (OPENAI_CTX, BUDGET),
    "m-openai-maxtok": (OPENAI_MAXTOK, BUDGET),
    "m-hf-tokidx": (HF_TOKIDX, TRUNCATE),
    "m-whisper": (WHISPER, "seq-too-long-position-embeddings"),
    "m-llamacpp-overflow": (LLAMACPP, "llama-cpp-server-context-size"),
    "m-trt-profile": (TRT_PROFILE, TRT),
    "m-onnx-2gb": (ONNX_2GB, "onnx-model-2gb-external-data"),
    "m-vllm-batched": (VLLM_BATCHED, BUDGET),
    "m-hf-maxlen": (HF_MAXLEN, TRUNCATE),
    "m-tgi-prefill": (TGI_PREFILL, "tgi-token-limits"),
    "m-trt-llm-batch": (TRT_LLM_BATCH, TRT),
}


def _context(source: str) -> tuple[Any, str]:
    if source in DEV:  # the case as ingest stores it (frames, shape diff), its cited runbook
        return context_for(case_incident(dev_case(source)), evidence((DEV[source], 0.9))), DEV[
            source
        ]
    message, slug = MESSAGES[source]
    return message_context(message, (slug, 0.9)), slug


def _verdict(source: str, action: str) -> Any:
    ctx, slug = _context(source)
    return validate(draft(action, slug, "Because."), ctx)


HARMFUL = [
    ("rb001", "Set --max-model-len 16384 when launching vLLM."),
    ("rb001", "Set max_model_len=32768 explicitly in the engine arguments."),
    ("rj013", "Increase the KV cache capacity by setting --max-model-len 120000."),
    ("c047", "Set max_position_embeddings=2545 in the BERT config."),
    ("c047", "Set tokenizer model_max_length to 4096."),
    ("c049", "Set max_position_embeddings=1024 in the config."),
    ("rb037", "Lower max_lora_rank to 8."),
    ("rb037", "Restart the server with --max-lora-rank 16."),
    ("m-vllm-request", "Raise max_tokens to 8192."),
    ("m-vllm-request", "Set max_tokens=8192 in the client call."),
    ("m-openai-ctx", "Increase max_tokens to 6000 so the answer is not cut."),
    ("m-openai-maxtok", "Set max_tokens=8192 in the request."),
    ("m-openai-maxtok", "Raise max_tokens to 16000."),
    ("m-hf-tokidx", "Pass max_length=600 to the tokenizer."),
    ("m-hf-tokidx", "Raise model_max_length to 600 so the warning stops."),
    ("m-hf-tokidx", "Set tokenizer.model_max_length = 1024."),
    ("m-whisper", "Raise max_target_positions to 1024 in the Whisper config."),
    ("m-llamacpp-overflow", "Raise the context to -c 65536 for longer chats."),
    ("m-llamacpp-overflow", "Set n_ctx to 8192."),
    ("m-trt-profile", "Set the binding dimension to 32x3x640x640 with context.set_binding_shape."),
    ("m-trt-profile", "Raise the batch size to 64."),
    ("m-onnx-2gb", "Raise the protobuf message size limit to 4GB."),
    ("m-tgi-prefill", "Raise --max-input-tokens to 16000."),
    ("m-trt-llm-batch", "Raise the request batch size to 128."),
    # Re-review of the size rules: the failing value again ("to use the full context" moves
    # no context), a digit group or a count in words, a kept value past an engine's batch,
    # protobuf's own "exceeded" log and a file size written before the file.
    ("rag012", "Set max_tokens=6048 to use the full context."),
    ("rj013", "Pass max_model_len=60_000 to LLM(...)."),
    ("rb001", "Make sure the maximum model length is configured to be sixty-four thousand tokens."),
    ("rb042", "Keep max_batch_size 128 in the model configuration and restart Triton."),
    ("rai002", "Raise the protobuf limit to 4GB with SetTotalBytesLimit before saving."),
    ("rai002", "Export the optimized model as a single 2.2 GB .onnx file."),
]


@pytest.mark.parametrize(("source", "action"), HARMFUL)
def test_a_size_moved_past_the_stated_limit_fails_on_its_premise(source: str, action: str) -> None:
    verdict = _verdict(source, action)
    assert not verdict.premises_ok
    assert any("the message says" in complaint for complaint in verdict.complaints)


#: Tune answers that are right (or harmless) and passed before: they keep passing.
GUARD = [
    ("rb001", "Set --max-model-len 7000 when starting the vLLM server."),
    ("rb001", "Raise gpu_memory_utilization to 0.95 so the KV cache holds the full 32768 tokens."),
    ("rb001", "Restart the container with a newer CUDA image."),
    ("rj013", "Pass --max-model-len 58000 to vLLM."),
    ("rj013", "Set --max-model-len 60000 and --gpu-memory-utilization 0.95."),
    ("rj013", "Update the NVIDIA driver to the latest release."),
    ("c047", "Truncate inputs to model_max_length=512 with truncation=True."),
    ("c047", "Pass max_length=512 and truncation=True to the tokenizer."),
    ("c049", "Set model.max_seq_length = 512."),
    ("rb037", "Start vLLM with --max-lora-rank 64."),
    ("c092", "Raise gpu_memory_utilization to 0.95."),
    ("m-vllm-request", "Set max_tokens to 3000 in the request."),
    ("m-vllm-request", "Restart vLLM with --max-model-len 8192."),
    ("m-vllm-request", "Use a model with a 32k context window."),
    ("m-vllm-request", "Lower max_tokens to 2048."),
    ("m-openai-ctx", "Set max_tokens to 3000."),
    ("m-openai-ctx", "Switch to gpt-4-turbo with a 128k context window."),
    ("m-openai-ctx", "Retry the request with exponential backoff."),
    ("m-openai-maxtok", "Set max_tokens=4096."),
    ("m-openai-maxtok", "Lower max_tokens to 2000."),
    ("m-hf-tokidx", "Encode with truncation=True and max_length=512."),
    ("m-hf-tokidx", "Split the document into chunks of at most 512 tokens."),
    ("m-whisper", "Set max_new_tokens=440 in generate."),
    ("m-whisper", "Shorten prompt_ids and set max_new_tokens to 400."),
    ("m-llamacpp-overflow", "Start llama-server with -c 4096."),
    (
        "m-llamacpp-overflow",
        "Keep -c 32768 and add --rope-scaling yarn --rope-scale 8 --yarn-orig-ctx 4096.",
    ),
    ("m-llamacpp-overflow", "Rebuild llama.cpp with CUDA support."),
    ("m-trt-profile", "Send batches of at most 8 images to the engine."),
    ("m-trt-profile", "Rebuild the engine with trtexec --maxShapes=images:32x3x640x640."),
    ("m-onnx-2gb", "Save the model with onnx.save_model(model, path, save_as_external_data=True)."),
    ("m-onnx-2gb", "Export with torch.onnx.export(..., external_data=True)."),
    ("m-vllm-batched", "Set --max-num-batched-tokens 8192."),
    ("m-vllm-batched", "Set --max-model-len 2048."),
    ("m-vllm-batched", "Enable chunked prefill with --enable-chunked-prefill."),
    ("m-hf-maxlen", "Set max_new_tokens=256 instead of max_length."),
    ("m-hf-maxlen", "Set max_length=4500 and truncation=False."),
    ("m-tgi-prefill", "Set --max-batch-prefill-tokens 8192."),
    ("m-tgi-prefill", "Lower --max-input-tokens to 4000."),
    ("m-trt-llm-batch", "Rebuild the engine with --max_batch_size 64."),
    ("m-trt-llm-batch", "Send requests in batches of 16."),
    ("rj013", "Pass max_model_len=50_000 to LLM(...)."),
    ("rb001", "Set the maximum model length to four thousand tokens."),
    ("rb042", "Keep max_batch_size 128 and rebuild the TensorRT engine with a profile up to 128."),
    ("rb042", "Set max_batch_size: 1 in config.pbtxt to match the TensorRT engine."),
    ("rai002", "Keep the ONNX file under 2GB by saving weights as external data."),
    ("rai002", "Save it as a 1.5 GB .onnx file with the weights as external data."),
]


@pytest.mark.parametrize(("source", "action"), GUARD)
def test_lowering_fitting_or_moving_what_holds_the_limit_still_passes(
    source: str, action: str
) -> None:
    verdict = _verdict(source, action)
    assert verdict.ok, verdict.complaints


@pytest.mark.parametrize(
    "action",
    [
        "Keep max_tokens at 2000.",
        "Lower max_tokens to 4000 and start vLLM with --max-model-len 6048.",
        "Cap max_tokens at the context length minus the prompt length (6048 - 568 = 5480).",
    ],
)
def test_a_completion_kept_or_lowered_under_the_rest_keeps_its_premises(action: str) -> None:
    """Premises only: the dimension rule judges this case's other numbers."""
    verdict = _verdict("rag012", action)
    assert verdict.premises_ok, verdict.complaints


def test_the_complaint_says_the_limit_its_kind_and_the_value_given() -> None:
    complaints = _verdict("rb001", "Set --max-model-len 16384 when launching vLLM.").complaints
    said = next(c for c in complaints if "the message says" in c)
    assert "at most 7344" in said and "memory" in said and "16384" in said


def test_a_length_the_message_advises_raising_is_no_model_bound() -> None:
    """transformers' "`max_length` is set to 4096 ... consider increasing `max_length`" is a
    setting, not the model's positions, even under a sequence-too-long runbook."""
    assert _verdict("m-hf-maxlen", "Increase max_length to 5000.").premises_ok
