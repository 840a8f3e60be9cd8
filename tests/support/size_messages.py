"""Error messages that state a size limit, quoted from each tool's public source.

Shared by the size-bound tests (tests/unit/test_size_limit_premises.py: the reviewer's probe,
section 1 of its SPEC; tests/unit/test_size_bound_reading.py: the reader on its own).
"""

from __future__ import annotations

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
