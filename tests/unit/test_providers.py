"""Providers: the OpenAI client against a local chat-completions server, and the offline one."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from ingest.parsing.frames import Frame, make_frame
from ingest.parsing.logs import parse_logs
from ingest.parsing.shapes import ShapeDiff, extract_shape_diff
from ingest.parsing.stacktrace import parse_stacktrace
from rca.corpus.files import Runbook, bundled_runbook_dir, load_directory
from rca.suggestion.context import AnalysisContext, Evidence, evidence_from_runbook
from rca.suggestion.providers import (
    OfflineProvider,
    OpenAIProvider,
    ProviderError,
    parse_answer,
    provider_from_settings,
)
from rca.suggestion.validation import validate

CASES = Path(__file__).resolve().parents[1] / "data" / "dev_cases.jsonl"
MESSAGES = [{"role": "system", "content": "rules"}, {"role": "user", "content": "signals"}]
ANSWER = {
    "action": "Set in_features of the first Linear layer to 256.",
    "reason": "The flattened input has 256 features while the layer expects 512.",
    "runbook": "matmul-shape-mismatch-linear",
    "confidence": 0.8,
}


def _completion(content: str, usage: dict[str, int] | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "local-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": usage or {"prompt_tokens": 321, "completion_tokens": 54, "total_tokens": 375},
    }


def _ok(content: str) -> Response:
    return Response(json.dumps(_completion(content)), 200, content_type="application/json")


def _error(status: int, message: str = "boom", **headers: str) -> Response:
    body = {"error": {"message": message, "type": "server_error", "code": None}}
    return Response(json.dumps(body), status, headers=headers, content_type="application/json")


class ChatServer:
    """Serves the queued responses in order and records each request body and time."""

    def __init__(self, httpserver: HTTPServer, responses: Iterable[Any]) -> None:
        self.responses = list(responses)
        self.requests: list[dict[str, Any]] = []
        self.times: list[float] = []
        httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(
            self._handle
        )
        self.base_url = httpserver.url_for("/v1")

    def _handle(self, request: Request) -> Response:
        body = json.loads(request.get_data())
        self.requests.append(body)
        self.times.append(time.monotonic())
        response = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        return response if isinstance(response, Response) else response(body)

    def provider(self, **kwargs: Any) -> OpenAIProvider:
        return OpenAIProvider("sk-test", self.base_url, "local-model", **kwargs)


# --------------------------------------------------------------------------- parse_answer


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(ANSWER),
        f"Here is my answer:\n```json\n{json.dumps(ANSWER, indent=2)}\n```\nHope it helps!",
        f"```\n{json.dumps(ANSWER)}\n```",
        f"Sure. {json.dumps(ANSWER)} Let me know {{if}} you need more.",
        f'Draft: {{"note": "x"}} final: {json.dumps(ANSWER)}',
    ],
)
def test_answer_is_found_in_bare_json_fences_or_prose(text: str) -> None:
    assert parse_answer(text)["action"] == ANSWER["action"]


@pytest.mark.parametrize("text", ["", "I think you should restart it.", "{not json}", "[1, 2]"])
def test_text_without_an_answer_object_is_a_provider_error(text: str) -> None:
    with pytest.raises(ProviderError, match="action|empty"):
        parse_answer(text)


# --------------------------------------------------------------------------- OpenAI provider


def test_good_json_answer_becomes_a_draft_with_usage_and_latency(httpserver: HTTPServer) -> None:
    server = ChatServer(httpserver, [_ok(json.dumps(ANSWER))])
    draft = server.provider().suggest(MESSAGES)
    assert (draft.action, draft.reason, draft.runbook) == (
        ANSWER["action"],
        ANSWER["reason"],
        ANSWER["runbook"],
    )
    assert draft.confidence == 0.8
    assert (draft.provider, draft.model) == ("openai", "local-model")
    assert draft.usage == {"prompt_tokens": 321, "completion_tokens": 54, "total_tokens": 375}
    assert draft.latency_ms >= 0
    assert draft.raw == json.dumps(ANSWER)
    sent = server.requests[0]
    assert sent["messages"] == MESSAGES
    assert sent["model"] == "local-model"
    assert sent["response_format"] == {"type": "json_object"}


def test_nul_characters_in_the_model_output_never_reach_the_draft(httpserver: HTTPServer) -> None:
    """PostgreSQL would refuse to store the suggestion; they become U+FFFD instead."""
    answer = {**ANSWER, "action": "Set in_features\u0000 to 256."}
    content = json.dumps(answer) + "\u0000"  # escaped in the JSON, and a raw one after it
    server = ChatServer(httpserver, [_ok(content)])
    draft = server.provider().suggest(MESSAGES)
    assert "\x00" not in draft.action + draft.reason + draft.raw
    assert draft.action == "Set in_features\ufffd to 256."


def test_answer_in_a_json_fence_with_prose_is_parsed(httpserver: HTTPServer) -> None:
    text = f"Looking at the frames...\n```json\n{json.dumps(ANSWER)}\n```\nGood luck."
    server = ChatServer(httpserver, [_ok(text)])
    draft = server.provider().suggest(MESSAGES)
    assert draft.runbook == "matmul-shape-mismatch-linear"
    assert draft.raw == text


def test_rate_limit_is_retried_after_the_delay_the_server_asks_for(httpserver: HTTPServer) -> None:
    server = ChatServer(
        httpserver, [_error(429, "rate limited", **{"Retry-After": "0.3"}), _ok(json.dumps(ANSWER))]
    )
    draft = server.provider().suggest(MESSAGES)
    assert draft.action == ANSWER["action"]
    assert len(server.requests) == 2
    assert server.times[1] - server.times[0] >= 0.29


def test_server_errors_are_retried_until_success(httpserver: HTTPServer) -> None:
    fail = _error(500, **{"retry-after-ms": "10"})
    server = ChatServer(httpserver, [fail, fail, _ok(json.dumps(ANSWER))])
    draft = server.provider(max_retries=2).suggest(MESSAGES)
    assert draft.runbook == ANSWER["runbook"]
    assert len(server.requests) == 3


def test_persistent_server_error_is_a_provider_error_after_the_retries(
    httpserver: HTTPServer,
) -> None:
    server = ChatServer(httpserver, [_error(500, "overloaded", **{"retry-after-ms": "10"})])
    with pytest.raises(ProviderError, match="HTTP 500") as excinfo:
        server.provider(max_retries=2).suggest(MESSAGES)
    assert excinfo.value.status == 500
    assert len(server.requests) == 3


def test_server_rejecting_response_format_is_asked_again_without_it(httpserver: HTTPServer) -> None:
    def strict(body: dict[str, Any]) -> Response:
        if "response_format" in body:
            return _error(400, "Unrecognized request argument supplied: response_format")
        return _ok(f"```json\n{json.dumps(ANSWER)}\n```")

    server = ChatServer(httpserver, [strict])
    provider = server.provider()
    assert provider.suggest(MESSAGES).action == ANSWER["action"]
    assert ["response_format" in body for body in server.requests] == [True, False]
    provider.suggest(MESSAGES)  # remembered: no second rejected attempt
    assert ["response_format" in body for body in server.requests] == [True, False, False]


def test_other_bad_requests_are_not_retried_without_json_mode(httpserver: HTTPServer) -> None:
    server = ChatServer(httpserver, [_error(400, "messages too long")])
    with pytest.raises(ProviderError, match="HTTP 400"):
        server.provider().suggest(MESSAGES)
    assert len(server.requests) == 1


def test_garbage_answer_is_a_provider_error_keeping_the_raw_text(httpserver: HTTPServer) -> None:
    server = ChatServer(httpserver, [_ok("I am not sure what went wrong, sorry.")])
    with pytest.raises(ProviderError, match="no JSON object") as excinfo:
        server.provider().suggest(MESSAGES)
    assert excinfo.value.raw == "I am not sure what went wrong, sorry."


def test_answer_missing_the_reason_is_a_provider_error(httpserver: HTTPServer) -> None:
    server = ChatServer(httpserver, [_ok(json.dumps({"action": "Set x.", "runbook": "r"}))])
    with pytest.raises(ProviderError, match="reason"):
        server.provider().suggest(MESSAGES)


def test_slow_server_times_out_as_a_provider_error(httpserver: HTTPServer) -> None:
    def slow(body: dict[str, Any]) -> Response:
        time.sleep(0.5)
        return _ok(json.dumps(ANSWER))

    server = ChatServer(httpserver, [slow])
    with pytest.raises(ProviderError, match="timed out"):
        server.provider(timeout=0.1, max_retries=0).suggest(MESSAGES)


# --------------------------------------------------------------------------- selection

_LLM_VARS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "RCA_LLM_MODEL")


def test_offline_provider_is_the_default_without_key_or_base_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in _LLM_VARS:
        monkeypatch.delenv(name, raising=False)
    provider, name = provider_from_settings()
    assert name == "offline"
    assert isinstance(provider, OfflineProvider)


def test_base_url_alone_selects_an_openai_compatible_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in _LLM_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("RCA_LLM_MODEL", "llama3.1:8b")
    provider, name = provider_from_settings()
    assert name == "openai"
    assert isinstance(provider, OpenAIProvider)
    assert provider.model == "llama3.1:8b"


# --------------------------------------------------------------------------- offline provider


def _case(case_id: str) -> dict[str, Any]:
    for line in CASES.read_text(encoding="utf-8").splitlines():
        case: dict[str, Any] = json.loads(line)
        if case["id"] == case_id:
            return case
    raise LookupError(case_id)


def _context(case: dict[str, Any], slug: str, score: float = 0.72) -> AnalysisContext:
    """Build the context the pipeline would: parsed frames, logs and shapes, one runbook."""
    runbooks = {rb.slug: rb for rb in load_directory(bundled_runbook_dir())}
    chain = parse_stacktrace(case["traceback"]) if case["traceback"] else []
    return AnalysisContext(
        error_type=case["exception_type"],
        message=case["message"],
        frames=chain[-1]["frames"] if chain else [],
        logs=parse_logs(case["logs"]),
        shape_diff=extract_shape_diff(case["message"]),
        inference_context={"framework": case["framework"]},
        evidence=[evidence_from_runbook(runbooks[slug], score)],
    )


@pytest.mark.parametrize(
    ("case_id", "slug"),
    [
        ("c001", "cuda-oom-inference"),
        ("c014", "matmul-shape-mismatch-incompatible-components"),
        ("c020", "conv-channel-mismatch-grayscale-rgba"),
        ("c023", "checkpoint-size-mismatch-vocab"),
        ("c029", "checkpoint-keys-module-prefix"),
        ("c045", "nan-loss-numerical-ops"),
        ("c047", "seq-too-long-tokenizer-truncation"),
        ("c106", "version-transformers-import-error"),
    ],
)
def test_offline_draft_on_real_case_validates_and_cites_the_runbook(
    case_id: str, slug: str
) -> None:
    ctx = _context(_case(case_id), slug)
    draft = OfflineProvider().suggest(ctx)
    result = validate(draft, ctx)
    assert result.ok, (draft, result.complaints)
    assert draft.runbook == slug
    assert (draft.provider, draft.model) == ("offline", OfflineProvider.model)
    assert draft.confidence == 0.72


def test_offline_reason_names_the_mismatched_dimensions() -> None:
    ctx = _context(_case("c014"), "matmul-shape-mismatch-incompatible-components")
    assert "4096 instead of 768" in OfflineProvider().suggest(ctx).reason


def test_offline_reason_names_the_failing_frame_exactly_as_in_the_frames() -> None:
    ctx = _context(_case("c045"), "nan-loss-numerical-ops")
    reason = OfflineProvider().suggest(ctx).reason
    assert "/home/rfnet_project/rfnet-master/utils/math_utils.py:distance_matrix_vector" in reason


def test_offline_draft_for_a_hand_built_matmul_mismatch_mentions_both_widths() -> None:
    runbook = {rb.slug: rb for rb in load_directory(bundled_runbook_dir())}[
        "matmul-shape-mismatch-linear"
    ]
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message="mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)",
        shape_diff=[ShapeDiff(tensor=None, op="matmul", expected=[None, 512], actual=[4, 256])],
        evidence=[evidence_from_runbook(runbook, 14.2)],  # an unbounded (BM25-like) score
    )
    draft = OfflineProvider().suggest(ctx)
    assert "256 instead of 512" in draft.reason
    assert draft.action.startswith("Set the layer's `in_features`")
    assert 0 < draft.confidence <= 0.9
    assert validate(draft, ctx).ok


def test_offline_provider_is_deterministic() -> None:
    ctx = _context(_case("c020"), "conv-channel-mismatch-grayscale-rgba")
    first, second = OfflineProvider().suggest(ctx), OfflineProvider().suggest(ctx)
    assert (first.action, first.reason, first.raw) == (second.action, second.reason, second.raw)


def test_offline_provider_without_evidence_is_a_provider_error() -> None:
    with pytest.raises(ProviderError, match="no runbook"):
        OfflineProvider().suggest(AnalysisContext(error_type="E", message="m"))


# --------------------------------------------------------------------------- offline: fit


def _runbooks() -> dict[str, Runbook]:
    return {rb.slug: rb for rb in load_directory(bundled_runbook_dir())}


def _evidence(*ranked: tuple[str, float]) -> list[Evidence]:
    runbooks = _runbooks()
    return [evidence_from_runbook(runbooks[slug], score) for slug, score in ranked]


_OOM = (
    "CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 23.65 GiB"
    " of which 1.02 GiB is free. Of the allocated memory 21.87 GiB is allocated by PyTorch,"
    " and 187.45 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory"
    " is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid"
    " fragmentation."
)
_OOM_RUNBOOKS = (
    ("cuda-oom-fragmentation", 1.5),
    ("cuda-oom-inference", 1.3),
    ("cuda-oom-training", 1.25),
)


def _frame(filename: str, function: str, line: str, in_app: bool = True) -> Frame:
    return make_frame(filename, function, 10, context_line=line, in_app=in_app)


def test_offline_picks_a_training_fix_for_an_oom_raised_in_backward() -> None:
    """The message's own advice (expandable segments) does not fit: hardly any reserved
    memory is unallocated, and the frames show a training step."""
    ctx = AnalysisContext(
        error_type="torch.cuda.OutOfMemoryError",
        message=_OOM,
        frames=[
            _frame("/srv/exp/train.py", "train_epoch", "loss.backward()"),
            _frame(
                "/venv/site-packages/torch/_tensor.py",
                "backward",
                "torch.autograd.backward(",
                False,
            ),
        ],
        evidence=_evidence(*_OOM_RUNBOOKS),
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == "cuda-oom-training"
    assert "fragmentation" not in draft.reason
    assert validate(draft, ctx).ok


def test_offline_picks_a_serving_fix_for_the_same_oom_raised_in_a_request_handler() -> None:
    ctx = AnalysisContext(
        error_type="torch.cuda.OutOfMemoryError",
        message=_OOM,
        frames=[
            _frame("/srv/api/server.py", "handle_request", "out = model.generate(**inputs)"),
            _frame("/venv/site-packages/transformers/generation/utils.py", "generate", "", False),
        ],
        inference_context={"model_id": "llama-3-8b", "batch_size": 8},
        evidence=_evidence(*_OOM_RUNBOOKS),
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == "cuda-oom-inference"
    assert validate(draft, ctx).ok


def test_offline_keeps_the_fragmentation_fix_when_the_figures_show_fragmentation() -> None:
    message = _OOM.replace("187.45 MiB is reserved", "9.20 GiB is reserved")
    ctx = AnalysisContext(
        error_type="torch.cuda.OutOfMemoryError",
        message=message,
        evidence=_evidence(*_OOM_RUNBOOKS),
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == "cuda-oom-fragmentation"
    assert "expandable_segments" in draft.action


def test_offline_permutes_a_channels_last_batch_even_below_the_grayscale_runbook() -> None:
    """224 "channels" where 3 are needed and the last axis is 3: an NHWC batch, not a
    grayscale image; the axis indices in the runbook's example are dropped to validate."""
    message = (
        "Given groups=1, weight of size [32, 3, 3, 3], expected input[16, 224, 224, 3] to have"
        " 3 channels, but got 224 channels instead"
    )
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message=message,
        shape_diff=extract_shape_diff(message),
        evidence=_evidence(
            ("conv-channel-mismatch-grayscale-rgba", 1.5),
            ("conv-channel-mismatch-layout", 1.45),
        ),
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == "conv-channel-mismatch-layout"
    assert draft.action.startswith("Permute")
    assert validate(draft, ctx).ok


def test_offline_adds_the_batch_axis_when_the_shapes_say_it_is_missing() -> None:
    ctx = AnalysisContext(
        error_type="ValueError",
        message="Input 0 of layer model is incompatible with the layer",
        shape_diff=[
            ShapeDiff(tensor="input_1", op="input", expected=[None, 64, 3], actual=[64, 3])
        ],
        evidence=_evidence(("tf-input-shape-batch-dim", 1.0)),
    )
    draft = OfflineProvider().suggest(ctx)
    assert "batch axis" in draft.action
    ctx.shape_diff = [
        ShapeDiff(tensor="input_1", op="input", expected=[None, 64, 3], actual=[None, 64])
    ]
    assert "feature/channel axis" in OfflineProvider().suggest(ctx).action


def test_offline_strips_the_prefix_the_state_dict_keys_show() -> None:
    message = (
        "Error(s) in loading state_dict for Net:\n"
        '\tMissing key(s) in state_dict: "conv1.weight", "fc.bias".\n'
        '\tUnexpected key(s) in state_dict: "_orig_mod.conv1.weight", "_orig_mod.fc.bias".'
    )
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message=message,
        logs=parse_logs(["checkpoint written by train.py --compile"]),
        evidence=_evidence(("checkpoint-keys-module-prefix", 1.0)),
    )
    assert OfflineProvider().suggest(ctx).action.startswith("Strip the prefix")


def test_offline_considers_only_runbooks_of_the_top_class_ranked_nearly_as_high() -> None:
    serialization = "/usr/lib/python3/site-packages/torch/serialization.py"
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message="Attempting to deserialize object on a CUDA device but"
        " torch.cuda.is_available() is False.",
        frames=[
            _frame("/app/worker.py", "<module>", 'state = torch.load("model.pt")'),
            _frame(serialization, "load", "return _load(opened_zipfile,", False),
            _frame(
                serialization, "_cuda_deserialize", "device = validate_cuda_device(location)", False
            ),
        ],
        evidence=_evidence(
            ("device-mismatch-dataparallel", 1.5),
            ("cuda-not-available-cpu-build", 1.45),  # another class: never cited
            ("device-mismatch-inputs-not-moved", 0.6),  # same class, far below: not a candidate
        ),
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook == "device-mismatch-dataparallel"
    assert "map_location" in draft.action  # the fix for the user's own torch.load call


def test_offline_shortens_an_over_long_step_by_dropping_its_example() -> None:
    ctx = AnalysisContext(
        error_type="RuntimeError",
        message="[TRT] [E] 1: Serialization assertion magicTagRead == kMAGIC_TAG failed",
        evidence=_evidence(("version-tensorrt-engine-mismatch", 1.0)),
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.action.startswith("Rebuild the engine")
    assert "trtexec" not in draft.action and validate(draft, ctx).ok


def test_offline_reason_names_the_dtypes_of_a_type_mismatch() -> None:
    ctx = _context(_case("c037"), "dtype-mismatch-input-weight-type")
    reason = OfflineProvider().suggest(ctx).reason
    assert "CUDAFloatTensor and CUDAHalfTensor" in reason


@pytest.mark.parametrize(
    "case_id", [json.loads(line)["id"] for line in CASES.read_text().splitlines()]
)
def test_offline_draft_validates_for_every_dev_case_with_its_category_runbooks(
    case_id: str,
) -> None:
    """Whatever step fits, the draft cites a given runbook and passes validation."""
    case = _case(case_id)
    same_class = [rb for rb in _runbooks().values() if rb.failure_class == case["category"]]
    ctx = _context(case, same_class[0].slug)
    ctx.evidence = [
        evidence_from_runbook(rb, 1.0 - 0.05 * i) for i, rb in enumerate(same_class[:3])
    ]
    draft = OfflineProvider().suggest(ctx)
    assert draft.runbook in ctx.allowed_slugs
    assert validate(draft, ctx).ok, (draft.action, validate(draft, ctx).complaints)


def _matmul_ctx() -> AnalysisContext:
    return AnalysisContext(
        error_type="RuntimeError",
        message="mat1 and mat2 shapes cannot be multiplied (4x256 and 512x10)",
        shape_diff=[ShapeDiff(tensor=None, op="matmul", expected=[None, 512], actual=[4, 256])],
        evidence=_evidence(("matmul-shape-mismatch-linear", 0.8)),
    )


def test_offline_reason_offers_the_runner_up_fix_when_it_is_a_different_one() -> None:
    ctx = _matmul_ctx()
    draft = OfflineProvider().suggest(ctx)
    first, _, alternative = draft.reason.partition(" If that does not apply: ")
    assert alternative, draft.reason
    assert "256 instead of 512" in first
    # Another step of the cited runbook, not the chosen one reworded.
    openings = [step.strip("*").split()[:2] for step in ctx.evidence[0].remediation]
    assert alternative.split()[:2] in openings
    assert alternative.split()[:2] != draft.action.split()[:2]
    assert validate(draft, ctx).ok


def test_offline_leaves_the_alternative_out_when_the_reason_would_grow_too_long(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import rca.suggestion.providers.offline as offline

    full = OfflineProvider().suggest(_matmul_ctx()).reason
    first = full.partition(" If that does not apply: ")[0]
    monkeypatch.setattr(offline, "MAX_REASON_CHARS", len(full) - 1)
    assert OfflineProvider().suggest(_matmul_ctx()).reason == first


def test_dropping_asides_keeps_the_parentheses_of_code() -> None:
    from rca.suggestion.providers.wording import drop_asides, shorten

    action = "Call `scaler.unscale_()` and read `x.size(0)` before clipping (see the AMP notes)"
    assert drop_asides(action) == "Call `scaler.unscale_()` and read `x.size(0)` before clipping"
    nested = "Permute HWC to CHW (`x.permute(0, 3, 1, 2)` for batches) or use `ToTensor()`."
    assert drop_asides(nested) == "Permute HWC to CHW or use `ToTensor()`."
    long_action = action + " and then `model.eval()` " + "x" * 200 + " (an example)"
    shortened = shorten(long_action)
    assert "`x.size(0)`" in shortened and "`model.eval()`" in shortened
    assert "(an example)" not in shortened and "(see the AMP notes)" not in shortened


_OLD_OOM = (
    "CUDA out of memory. Tried to allocate 500.00 MiB (GPU 0; 23.69 GiB total capacity;"
    " 22.91 GiB already allocated; 218.56 MiB free; 22.92 GiB reserved in total by PyTorch)"
)


def test_offline_does_not_offer_another_frameworks_step() -> None:
    """A transformers server's OOM while loading: the diffusers step (half precision and
    offload, which fits the loading) is not for it."""
    ctx = AnalysisContext(
        error_type="torch.cuda.OutOfMemoryError",
        message=_OLD_OOM,
        frames=[
            _frame(
                "/srv/chat/server.py", "load", "model = AutoModelForCausalLM.from_pretrained(n)"
            ),
            _frame("/srv/.venv/site-packages/transformers/modeling_utils.py", "to", "x", False),
        ],
        evidence=_evidence(("cuda-oom-diffusers-pipeline", 1.4), ("cuda-oom-inference", 1.35)),
    )
    draft = OfflineProvider().suggest(ctx)
    assert "diffusers" not in draft.action, draft.action


_OWN_RUNBOOK = """---
slug: team-oom
title: Our GPU ran out of memory
failure_class: cuda_oom
signals: ['CUDA out of memory']
---
# Our GPU ran out of memory

## Symptoms

- `CUDA out of memory`

## Diagnosis

Check the allocator figures.

## Remediation

1. **Set the allocator to grow its segments.** Reason: it recombines freed blocks.{applies}
2. **Reduce the batch size.** Reason: activations scale with the batch.

## Verify

It runs.
"""


@pytest.mark.parametrize(
    ("applies", "expected"),
    [
        ("", "Set the allocator to grow its segments."),
        ("\n   Applies: {unless: [memory-not-fragmented]}", "Reduce the batch size."),
    ],
)
def test_a_users_runbook_steers_the_offline_step_with_its_applies_line(
    applies: str, expected: str
) -> None:
    """Without metadata the runbook's first step wins; with it, the incident's figures (memory
    really allocated) rule that step out, and no code names either step."""
    from rca.corpus.files import parse_runbook

    runbook = parse_runbook(_OWN_RUNBOOK.replace("{applies}", applies))
    ctx = AnalysisContext(
        error_type="torch.OutOfMemoryError",
        message=_OOM,
        evidence=[evidence_from_runbook(runbook, 1.0)],
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.action == expected
    assert validate(draft, ctx).ok
