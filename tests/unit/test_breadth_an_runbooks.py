"""Failure kinds of the ninth breadth batch (eval/realworld/cases-an.jsonl) route to the steps
written for them from their libraries' documentation (issue 16).

cases-an found the corpus without a runbook for most of its kinds, all in the LLM serving and
fine-tuning stack: an OpenAI-compatible server's 404 for a model name it did not register and
its per-prompt image limit; a host path passed to a server running in Docker; llama.cpp's
converter that does not know a tokenizer's pre-tokenizer hash or reads Meta's placeholder
vocab size; an Ollama name or tag the library does not publish; `generate()` refusing the
tokenizer's `token_type_ids`; a generation config that saves only when it is consistent; the
Trainer fast-forwarding through seen batches on resume; an adapter config written by a newer
peft; DeepSpeed's async_io op without libaio; and generation on ZeRO-3 or FSDP shards. Two
existing pages gained a step: split GGUF files joined with `cat`, and `zero_to_fp32` given a
step folder. The wordings are the libraries' own messages as other users and pages print
them; each is sent as a bare incident through lexical retrieval and the offline provider, and
the runbook must come first with its action naming the documented fix. Errors of other kinds
(the tolerated warning, a missing tokenizer folder, a device mismatch)
must not match the new signals.
"""

from __future__ import annotations

from tests.support.vendor_checks import Wording, batch_tests

WORDINGS: tuple[Wording, ...] = (
    Wording(
        "vllm-served-model-name-not-found",
        "NotFoundError",
        '{"object":"error","message":"The model `Qwen/Qwen1.5-7B-Chat` does not exist.",'
        '"type":"NotFoundError","param":null,"code":404}',
        ("--served-model-name", "/v1/models"),
    ),
    Wording(
        "vllm-multimodal-items-per-prompt",
        "ValueError",
        "ValueError: You set image=2 (or defaulted to 1) in `--limit-mm-per-prompt`, but passed"
        " 3 image items in the same prompt.",
        ("--limit-mm-per-prompt",),
    ),
    Wording(
        "vllm-multimodal-items-per-prompt",
        "BadRequestError",
        "Error code: 400 - {'object': 'error', 'message': 'At most 1 image(s) may be provided in"
        " one request.', 'type': 'BadRequestError', 'param': None, 'code': 400}",
        ("--limit-mm-per-prompt",),
    ),
    Wording(
        "container-model-path-not-mounted",
        "HFValidationError",
        "docker run --gpus all -v $PWD/data:/data ghcr.io/huggingface/text-generation-inference"
        " --model-id /home/me/models/llama\nhuggingface_hub.utils._validators.HFValidationError:"
        " Repo id must be in the form 'repo_name' or 'namespace/repo_name':"
        " '/home/me/models/llama'. Use `repo_type` argument if needed",
        ("container path",),
    ),
    Wording(
        "llama-cpp-convert-hf-to-gguf-errors",
        "NotImplementedError",
        "NotImplementedError: BPE pre-tokenizer was not recognized - update get_vocab_base_pre()",
        ("convert_hf_to_gguf_update",),
    ),
    Wording(
        "llama-cpp-convert-hf-to-gguf-errors",
        "Exception",
        "Exception: Vocab size mismatch (model has -1, but ../llama/tokenizer.model has 32000)",
        ("params.json", "vocab_size"),
    ),
    Wording(
        "ollama-model-name-not-found",
        "Error",
        "pulling manifest\nError: pull model manifest: file does not exist",
        ("library name and tag",),
    ),
    Wording(
        "generate-unused-model-kwargs",
        "ValueError",
        "ValueError: The following `model_kwargs` are not used by the model: ['token_type_ids']"
        " (note: typos in the generate arguments will also show up in this list)",
        ("return_token_type_ids=False",),
    ),
    Wording(
        "generation-config-invalid-on-save",
        "ValueError",
        "ValueError: The generation config instance is invalid -- `.validate()` throws warnings"
        " and/or exceptions. Fix these issues to save the configuration.",
        ("do_sample",),
    ),
    Wording(
        "trainer-resume-skipping-batches",
        "none (hang)",
        "Continuing training from checkpoint, will skip to saved global_step\n"
        "Will skip the first 0 epochs then the first 660000 batches in the first epoch.",
        ("ignore_data_skip=True",),
    ),
    Wording(
        "peft-adapter-config-newer-release",
        "TypeError",
        "TypeError: LoraConfig.__init__() got an unexpected keyword argument 'eva_config'",
        ("Upgrade peft",),
    ),
    Wording(
        "deepspeed-async-io-libaio",
        "AssertionError",
        "AssertionError: Unable to pre-compile async_io",
        ("DS_BUILD_AIO=0",),
    ),
    Wording(
        "sharded-model-generate",
        "RuntimeError",
        "RuntimeError: The tensor has a non-zero number of elements, but its data is not"
        " allocated yet. Caffe2 uses a lazy allocation, so you will need to call mutable_data()"
        " or raw_mutable_data() to actually allocate memory.",
        ("use_orig_params=True", "summon_full_params"),
    ),
    Wording(
        "gguf-model-file-format",
        "ValueError",
        "llama_model_load: error loading model: invalid split file:"
        " ./dbrx-16x12b-instruct-q6_k.gguf",
        ("llama-gguf-split --merge",),
    ),
    Wording(
        "zero3-checkpoint-consolidation",
        "ValueError",
        "ValueError: Unable to find 'latest' file at /out/checkpoint-500/global_step500/latest",
        ("tag argument",),
    ),
)

#: slug -> errors of other kinds that the runbook's signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "vllm-served-model-name-not-found": (
        "OSError: my-model is not a local folder and is not a valid model identifier listed on"
        " 'https://huggingface.co/models'",
    ),
    "vllm-multimodal-items-per-prompt": (
        "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0.",
    ),
    "container-model-path-not-mounted": (
        "OSError: Can't load tokenizer for './models/llama'. If you were trying to load it from"
        " 'https://huggingface.co/models', make sure you don't have a local directory with the"
        " same name.",
    ),
    "llama-cpp-convert-hf-to-gguf-errors": (
        "RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM: size mismatch for"
        " model.embed_tokens.weight: copying a param with shape torch.Size([32001, 4096])",
    ),
    "ollama-model-name-not-found": (
        "Error: llama runner process has terminated: exit status 0xc0000409",
    ),
    "generate-unused-model-kwargs": (
        "TypeError: forward() got an unexpected keyword argument 'labels'",
    ),
    "generation-config-invalid-on-save": (
        "UserWarning: `do_sample` is set to `False`. However, `temperature` is set to `0.6` --"
        " this flag is only used in sample-based generation modes. You should set"
        " `do_sample=True` or unset `temperature`.",
    ),
    "trainer-resume-skipping-batches": (
        "ValueError: Can't find a valid checkpoint at ./output/checkpoint-500",
    ),
    "peft-adapter-config-newer-release": (
        "TypeError: LoraModel.__init__() got an unexpected keyword argument 'low_cpu_mem_usage'",
    ),
    "deepspeed-async-io-libaio": ("RuntimeError: Error building extension 'cpu_adam'",),
    "sharded-model-generate": (
        "RuntimeError: Expected all tensors to be on the same device, but found at least two"
        " devices, cuda:0 and cpu!",
    ),
}


(
    test_the_library_message_routes_to_its_documented_fix,
    test_errors_of_other_kinds_do_not_match_the_new_signals,
    test_each_runbook_cites_public_sources_and_has_signals,
) = batch_tests(WORDINGS, LOOK_ALIKES)
