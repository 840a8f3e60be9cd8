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
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rca.evaluation.run import case_incident
from rca.suggestion.evidence import context_for
from rca.suggestion.size_limits import read_size_bounds
from rca.suggestion.size_moves import size_harms
from rca.suggestion.validation import validate
from tests.support.dev_cases import dev_case
from tests.support.evidence import draft, evidence, message_context
from tests.support.linear_time import assert_linear

BUDGET = "vllm-scheduler-token-budget"
TRUNCATE = "seq-too-long-tokenizer-truncation"
TRT = "triton-tensorrt-engine-max-batch"
#: The messages, quoted from each tool's public source (SPEC.md section 1).
VLLM_REQUEST = (
    "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': \"This model's"
    " maximum context length is 4096 tokens. However, you requested 5000 tokens (1000 in the"
    " messages, 4000 in the completion). Please reduce the length of the messages or"
    " completion.\", 'type': 'BadRequestError', 'code': 400}"
)
OPENAI_CTX = (
    "openai.error.InvalidRequestError: This model's maximum context length is 8192 tokens,"
    " however you requested 9000 tokens (5000 in your prompt; 4000 for the completion). Please"
    " reduce your prompt; or completion length."
)
OPENAI_MAXTOK = (
    "openai.BadRequestError: Error code: 400 - {'error': {'message': 'max_tokens is too large:"
    " 10000. This model supports at most 4096 completion tokens, whereas you provided 10000.',"
    " 'type': 'invalid_request_error', 'param': 'max_tokens', 'code': None}}"
)
HF_TOKIDX = (
    "Token indices sequence length is longer than the specified maximum sequence length for"
    " this model (600 > 512). Running this sequence through the model will result in indexing"
    " errors"
)
WHISPER = (
    "ValueError: The length of `decoder_input_ids` equal `prompt_ids` plus special start"
    " tokens is 5, and the `max_new_tokens` is 500. Thus, the combined length of"
    " `decoder_input_ids` and `max_new_tokens` is: 505. This exceeds the `max_target_positions`"
    " of the Whisper model: 448. You should either reduce the length of your prompt, or reduce"
    " the value of `max_new_tokens`, so that their combined length is less than 448."
)
LLAMACPP = (
    "llama_new_context_with_model: n_ctx_per_seq (32768) > n_ctx_train (4096) -- possible"
    " training context overflow"
)
TRT_PROFILE = (
    "[TRT] [E] 3: [executionContext.cpp::setBindingDimensions::944] Error Code 3: API Usage"
    " Error (Parameter check failed at: runtime/api/executionContext.cpp::setBindingDimensions"
    "::944, condition: profileMaxDims.d[i] >= dimensions.d[i]. Supplied binding dimension"
    " [32,3,640,640] for bindings[0] exceed min ~ max range at index 0, maximum dimension in"
    " profile is 8, minimum dimension in profile is 1, but supplied dimension is 32.)"
)
ONNX_2GB = "ValueError: Message onnx.ModelProto exceeds maximum protobuf size of 2GB: 2712347654"
VLLM_BATCHED = (
    "ValueError: max_num_batched_tokens (2048) is smaller than max_model_len (8192). This"
    " effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM"
    " reject longer sequences. Please increase max_num_batched_tokens or decrease max_model_len."
)
HF_MAXLEN = (
    "Input length of input_ids is 4500, but `max_length` is set to 4096. This can lead to"
    " unexpected behavior. You should consider increasing `max_length` or, better yet, setting"
    " `max_new_tokens`."
)
TGI_PREFILL = (
    'Error: ArgumentValidation("`max_batch_prefill_tokens` must be >= `max_input_tokens`.'
    ' Given: 4096 and 8000")'
)
TRT_LLM_BATCH = (
    "[TensorRT-LLM][ERROR] Assertion failed: Request batch size (64) exceeds the maximum batch"
    " size (16) of the engine. Rebuild the engine with a larger --max_batch_size."
)
#: Dev cases and the runbook their first retrieval cites.
DEV = {
    "rb001": "vllm-max-model-len-kv-cache",
    "rj013": "vllm-max-model-len-kv-cache",
    "c047": TRUNCATE,
    "c049": TRUNCATE,
    "rb037": "vllm-lora-config-limits",
    "c092": "vllm-no-memory-cache-blocks",
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
]


@pytest.mark.parametrize(("source", "action"), GUARD)
def test_lowering_fitting_or_moving_what_holds_the_limit_still_passes(
    source: str, action: str
) -> None:
    verdict = _verdict(source, action)
    assert verdict.ok, verdict.complaints


def test_the_complaint_says_the_limit_its_kind_and_the_value_given() -> None:
    complaints = _verdict("rb001", "Set --max-model-len 16384 when launching vLLM.").complaints
    said = next(c for c in complaints if "the message says" in c)
    assert "at most 7344" in said and "memory" in said and "16384" in said


def _bounds(text: str) -> list[tuple[str, float, float | None, str, bool]]:
    return [(b.quantity, b.limit, b.requested, b.kind, b.minimum) for b in read_size_bounds([text])]


@pytest.mark.parametrize(
    ("text", "bound"),
    [
        (
            "User-specified max_model_len (65536) is greater than the derived max_model_len"
            " (max_position_embeddings=32768 or model_max_length=None in model's config.json).",
            ("context", 32768, 65536, "model", False),
        ),
        (
            "User-specified max_model_len (8192) is greater than the derived max_model_len"
            " (None=2048.0 or model_max_length=None in model's config.json).",
            ("context", 2048, 8192, "model", False),
        ),
        (
            "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given:"
            " 3000 `inputs` tokens and 2000 `max_new_tokens`",
            ("completion", 1096, 2000, "request", False),
        ),
        (
            "Input validation error: `max_new_tokens` must be <= 1024. Given: 2048",
            ("completion", 1024, 2048, "request", False),
        ),
        (
            "n_ctx_per_seq (4096) < n_ctx_train (131072) -- the full capacity of the model will"
            " not be utilized",
            ("context", 131072, 4096, "model", False),
        ),
        (
            "the slot context (8192) exceeds the training context of the model (4096) - capping",
            ("context", 4096, 8192, "model", False),
        ),
        (
            "To serve at least one request with the models's max seq len (131072), (16.00 GiB KV"
            " cache is needed, which is larger than the available KV cache memory (9.39 GiB)."
            " Based on the available memory, the estimated maximum model length is 76912.",
            ("context", 76912, 131072, "memory", False),
        ),
        (
            "inference request batch-size must be <= 8 for 'resnet50'",
            ("batch", 8, None, "server", False),
        ),
        (
            "configuration specified max-batch 128 but TensorRT engine only supports max-batch 1",
            ("batch", 1, 128, "model", False),
        ),
        (
            "ValueError: LoRA rank 64 is greater than max_lora_rank 16.",
            ("lora_rank", 64, 16, "server", True),
        ),
        (ONNX_2GB, ("file_size", 2 * 2**30, None, "hard", False)),
        (
            "'max_tokens' or 'max_completion_tokens' is too large: 4000. This model's maximum"
            " context length is 4096 tokens and your request has 1000 input tokens",
            ("completion", 3096, 4000, "request", False),
        ),
        (
            "This model's maximum context length is 4096 tokens. However, you requested 4000"
            " output tokens and your prompt contains at least 1000 input tokens",
            ("completion", 3096, 4000, "request", False),
        ),
        (
            "The decoder prompt (length 9000) is longer than the maximum model length of 8192.",
            ("context", 9000, 8192, "server", True),
        ),
        (
            "model expected the shape of dimension 0 to be between 1 and 1 but received 32"
            " for yolov5x6_tensorrt",
            ("batch", 1, 32, "model", False),
        ),
    ],
)
def test_each_tools_wording_is_read_as_a_bound_of_its_kind(text: str, bound: tuple[Any]) -> None:
    assert _bounds(text) == [bound]


@pytest.mark.parametrize(
    "text",
    [
        "DataLoader worker (pid 7) is killed by signal: Bus error. It is possible that"
        " dataloader's workers are out of shared memory. Please try to raise your shared memory"
        " limit.",
        "Token id 32000 is out of vocabulary",
        HF_MAXLEN,
        "the request exceeds the available context size, try increasing it",
    ],
)
def test_a_limit_whose_fix_is_raising_it_is_no_bound(text: str) -> None:
    assert _bounds(text) == []


def test_a_server_setting_may_be_raised_up_to_the_models_stated_maximum() -> None:
    bounds = read_size_bounds(["n_ctx_per_seq (4096) < n_ctx_train (131072)"])
    assert size_harms("Start llama-server with -c 32768.", bounds) == []
    assert size_harms("Raise n_ctx.", bounds) == []
    assert size_harms("Set n_ctx to 262144.", bounds)


def test_a_length_the_message_advises_raising_is_no_model_bound() -> None:
    """transformers' "`max_length` is set to 4096 ... consider increasing `max_length`" is a
    setting, not the model's positions, even under a sequence-too-long runbook."""
    assert _verdict("m-hf-maxlen", "Increase max_length to 5000.").premises_ok


def test_a_prompt_longer_than_the_servers_length_rules_out_lowering_it() -> None:
    bounds = read_size_bounds(
        ["The decoder prompt (length 9000) is longer than the maximum model length of 8192."]
    )
    assert size_harms("Set --max-model-len 16384.", bounds) == []
    assert size_harms("Lower --max-model-len to 4096.", bounds)
    assert size_harms("Reduce max_model_len.", bounds)


def test_what_the_answer_reports_keeps_or_turns_down_is_no_move() -> None:
    bounds = read_size_bounds([VLLM_REQUEST])
    assert size_harms("Reduce max_tokens; the completion used 4000 tokens.", bounds) == []
    assert size_harms("Do not raise max_tokens to 8192; lower it to 2000.", bounds) == []
    assert size_harms("Shorten the messages and keep max_tokens 4000.", bounds) == []


_PIECES = st.sampled_from(
    [
        "max_model_len ",
        "(9999) ",
        "n_ctx_train (1",
        "is greater than max_lora_rank ",
        "raise ",
        "-c ",
        "9x9x9",
        "=",
        "batch size ",
        "`",
        "1.",
        "model with ",
    ]
)


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(_PIECES, max_size=400).map("".join))
def test_readers_stay_bounded_on_any_text(text: str) -> None:
    bounds = read_size_bounds([text] * 3)
    assert len(bounds) <= 12
    assert len(size_harms(text, bounds)) <= len(bounds)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "piece",
    ["max_model_len (9", "n_ctx_per_seq (1", "raise max_tokens to 9 ", "-c 1x", "=" * 3, "(1,"],
)
def test_readers_are_linear_in_adversarial_length(piece: str) -> None:
    bounds = read_size_bounds([LLAMACPP, VLLM_BATCHED, TRT_PROFILE])

    def read(n: int) -> object:
        text = piece * n
        return read_size_bounds([text]), size_harms(text, bounds)

    assert_linear(read, small=10, large=120)  # under both readers' cuts (2,000 characters)
