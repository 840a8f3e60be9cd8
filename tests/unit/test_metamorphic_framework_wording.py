"""The same failure in another framework's words gets the same fix, in that framework's API
(issue 16 items 4 and 6).

Each dev case whose failure kind has a well-known equivalent in other frameworks (a CUDA OOM
is TensorFlow's ``ResourceExhaustedError: OOM when allocating tensor`` and JAX's
``RESOURCE_EXHAUSTED: Out of memory``) is rewritten into each framework's wording of the
same error: its error line becomes that framework's (:data:`EQUIVALENTS`, test data), and
what is left of the case is kept when it names no framework (the user's own frames and log
lines). For every runbook of the case's failure kind, the step the offline ranking chooses
must then be:

- the same step (same runbook, same place) as for the case in its own framework's words,
  whenever that step is written for the target framework: no ``api`` premise, the target in
  it, or a ``For <framework>:`` variant for it;
- worded in the target's API: a variant's words when the step has one, and never PyTorch's
  (``torch``) for another framework.

A step written for PyTorch only may give way to another step for the other framework: its
premise is the point. Nothing here names a case; the table is one line per framework and
failure kind, phrased as the frameworks print them.
"""

from __future__ import annotations

from typing import Any

import pytest

from ingest.parsing.logs import parse_logs
from ingest.parsing.stacktrace import parse_stacktrace
from rca.corpus.files import Runbook
from rca.corpus.step_metadata import StepMetadata
from rca.suggestion.context import AnalysisContext, evidence_from_runbook
from rca.suggestion.incident_facts import terms
from rca.suggestion.incident_setting import frameworks_in
from rca.suggestion.premises import read_premises
from rca.suggestion.providers.step_ranking import Candidate, rank_steps
from rca.suggestion.step_values import step_wordings
from tests.support.dev_cases import dev_cases
from tests.support.evidence import bundled_runbooks

#: failure kind -> framework -> (error type, message, log lines): how each framework prints
#: the same failure (from its own sources and documentation).
EQUIVALENTS: dict[str, dict[str, tuple[str, str, tuple[str, ...]]]] = {
    "cuda_oom": {
        "pytorch": (
            "torch.OutOfMemoryError",
            "CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of"
            " 23.69 GiB",
            (),
        ),
        "tensorflow": (
            "tensorflow.python.framework.errors_impl.ResourceExhaustedError",
            "OOM when allocating tensor with shape[64,512,512] and type float on"
            " /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
            (),
        ),
        "jax": (
            "jaxlib.xla_extension.XlaRuntimeError",
            "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1610612736 bytes.",
            (),
        ),
    },
    "nan_loss": {
        "pytorch": (
            "RuntimeError",
            "Function 'SqrtBackward0' returned nan values in its 0th output.",
            (),
        ),
        "tensorflow": (
            "tensorflow.python.framework.errors_impl.InvalidArgumentError",
            "Gradient for sqrt : Tensor had NaN values [[{{node CheckNumerics}}]]",
            ("tf.debugging.enable_check_numerics()",),
        ),
        "jax": (
            "FloatingPointError",
            "invalid value (nan) encountered in jit(sqrt)",
            ('jax.config.update("jax_debug_nans", True)',),
        ),
    },
    "label_out_of_range": {
        "pytorch": (
            "RuntimeError",
            "CUDA error: device-side assert triggered. Assertion `t >= 0 && t < n_classes` failed.",
            (),
        ),
        "tensorflow": (
            "tensorflow.python.framework.errors_impl.InvalidArgumentError",
            "Received a label value of 10 which is outside the valid range of [0, 10)."
            "  Label values: 3 10 1",
            (),
        ),
    },
    "dtype_mismatch": {
        "pytorch": (
            "RuntimeError",
            "Input type (torch.cuda.FloatTensor) and weight type (torch.cuda.HalfTensor) should"
            " be the same",
            (),
        ),
        "tensorflow": (
            "tensorflow.python.framework.errors_impl.InvalidArgumentError",
            "cannot compute Conv2D as input #1(zero-based) was expected to be a half tensor but"
            " is a float tensor [Op:Conv2D]",
            (),
        ),
    },
    "matmul_shape_mismatch": {
        "pytorch": (
            "RuntimeError",
            "mat1 and mat2 shapes cannot be multiplied (32x4096 and 768x10)",
            (),
        ),
        "tensorflow": (
            "tensorflow.python.framework.errors_impl.InvalidArgumentError",
            "Matrix size-incompatible: In[0]: [32,4096], In[1]: [768,10] [Op:MatMul]",
            (),
        ),
        "jax": (
            "TypeError",
            "dot_general requires contracting dimensions to have the same shape, got (4096,)"
            " and (768,).",
            ("logits = jnp.dot(x, params['w'])",),
        ),
    },
    "conv_channel_mismatch": {
        "pytorch": (
            "RuntimeError",
            "Given groups=1, weight of size [64, 3, 7, 7], expected input[8, 1, 224, 224] to"
            " have 3 channels, but got 1 channels instead",
            (),
        ),
        "tensorflow": (
            "tensorflow.python.framework.errors_impl.InvalidArgumentError",
            "input depth must be evenly divisible by filter depth: 1 vs 3 [Op:Conv2D]",
            (),
        ),
        "jax": (
            "TypeError",
            "conv_general_dilated lhs feature dimension size divided by feature_group_count (1)"
            " must equal the rhs input feature dimension size (3).",
            ("y = jax.lax.conv_general_dilated(x, w, (1, 1), 'SAME')",),
        ),
    },
    "cuda_toolkit_missing": {
        "jax": (
            "jaxlib.xla_extension.XlaRuntimeError",
            "INTERNAL: Couldn't invoke ptxas --version",
            (),
        ),
        "tensorflow": (
            "tensorflow.python.framework.errors_impl.InternalError",
            "Couldn't invoke ptxas --version [Op:__inference_train_function_2048]",
            (),
        ),
    },
    "cudnn_init_memory": {
        "tensorflow": (
            "tensorflow.python.framework.errors_impl.UnknownError",
            "Failed to get convolution algorithm. This is probably because cuDNN failed to"
            " initialize, so try looking to see if a warning log message was printed above.",
            (),
        ),
        "jax": (
            "jaxlib.xla_extension.XlaRuntimeError",
            "FAILED_PRECONDITION: DNN library initialization failed. Look at the errors above"
            " for more details.",
            (),
        ),
    },
}


def _own_framework(case: dict[str, Any]) -> str:
    """The table's framework a case is written in: its own, else PyTorch's (the engines
    built on it: vLLM, transformers)."""
    table = EQUIVALENTS[case["category"]]
    return case["framework"] if case["framework"] in table else next(iter(table))


def _neutral(texts: list[str]) -> list[str]:
    return [text for text in texts if not frameworks_in([text])]


def _ctx(case: dict[str, Any], framework: str, runbook: Runbook) -> AnalysisContext:
    """The case with its error line in ``framework``'s words, and the parts of it that name
    no framework (its own frames and log lines)."""
    error_type, message, logs = EQUIVALENTS[case["category"]][framework]
    chain = parse_stacktrace(case["traceback"]) if case.get("traceback") else []
    frames = [
        frame
        for frame in (chain[-1]["frames"] if chain else [])
        if not frameworks_in([str(frame.get(k) or "") for k in ("filename", "module")])
        and not frameworks_in([str(frame.get("context_line") or "")])
    ]
    lines = _neutral([line for line in case.get("logs") or [] if isinstance(line, str)])
    return AnalysisContext(
        error_type=error_type,
        message=message,
        frames=frames,
        logs=parse_logs([*lines, *logs]),
        evidence=[evidence_from_runbook(runbook, 1.0)],
    )


#: (case id, runbook slug) -> the ranking of the case in its own framework's words.
_ORIGINAL_RANKINGS: dict[tuple[str, str], list[Candidate]] = {}


def _original_ranking(case: dict[str, Any], slug: str) -> list[Candidate]:
    """The steps ranked for the case in its own framework's words, against one runbook:
    the same for every target framework, so ranked once per case and runbook (ranking is
    nearly all of this file's time; a case of a kind with three frameworks has two targets)."""
    key = (case["id"], slug)
    if key not in _ORIGINAL_RANKINGS:
        runbook = bundled_runbooks()[slug]
        _ORIGINAL_RANKINGS[key] = rank_steps(_ctx(case, _own_framework(case), runbook))
    return _ORIGINAL_RANKINGS[key]


def _written_for(meta: StepMetadata, framework: str) -> bool:
    """Whether a step offers a wording for ``framework``: no ``api`` premise, the framework
    in it, or a variant for it."""
    return not meta.api or framework in meta.api or framework in meta.variants


def _worded_apart(runbook: Runbook, position: int) -> bool:
    """Whether a step has framework variants, whose words differ from its own."""
    step = evidence_from_runbook(runbook, 1.0).remediation[position]
    return len(step_wordings(step)) > 1


def _pairs() -> list[tuple[dict[str, Any], str, str]]:
    runbooks = bundled_runbooks().values()
    found = []
    for case in dev_cases():
        table = EQUIVALENTS.get(case["category"])
        if not table:
            continue
        own = _own_framework(case)
        for target in table:
            if target == own:
                continue
            for runbook in runbooks:
                if runbook.failure_class == case["category"]:
                    found.append((case, target, runbook.slug))
    return found


def test_every_framework_wording_is_read_as_its_framework() -> None:
    """The table means something only if each line is recognised as its framework's. A
    PyTorch line with no module path may read as no framework: steps' own wording is
    PyTorch's, so an unknown framework gets it too."""
    for kind, table in EQUIVALENTS.items():
        for framework, (error_type, message, logs) in table.items():
            ctx = AnalysisContext(error_type=error_type, message=message, logs=parse_logs(logs))
            read = read_premises(ctx).frameworks
            assert read == {framework} or (framework == "pytorch" and not read), (kind, read)


def test_enough_dev_cases_are_rewritten() -> None:
    assert len({case["id"] for case, _, _ in _pairs()}) >= 8


@pytest.mark.parametrize(
    ("case", "target", "slug"),
    _pairs(),
    ids=[f"{c['id']}-{t}-{s}" for c, t, s in _pairs()],
)
def test_other_framework_wording_gets_the_same_step_in_its_own_api(
    case: dict[str, Any], target: str, slug: str
) -> None:
    runbook = bundled_runbooks()[slug]
    rewritten = _ctx(case, target, runbook)
    before, after = _original_ranking(case, slug), rank_steps(rewritten)
    if not before or not after:
        assert not after or before, "a framework's wording found a step the original did not"
        return
    chosen, own = after[0], _own_framework(case)
    if _written_for(before[0].applies, target) and _written_for(chosen.applies, own):
        apart = _worded_apart(runbook, before[0].position) or _worded_apart(
            runbook, chosen.position
        )
        if chosen.position != before[0].position and apart:
            # Known limit, reported: steps are scored by the words of all their wordings, so
            # the wording shown no longer moves them; a near tie can still flip when the
            # rewritten error adds a word several steps' reasons share, because the shared-
            # word bonus saturates (log1p) and so favours the step that shares fewer words.
            pytest.xfail(f"word overlap differs between wordings: {chosen.action}")
        assert chosen.position == before[0].position, (chosen.action, before[0].action)
    # The action as the offline provider words it (whether it then shows it or abstains
    # is the provider's confidence, not the wording).
    action = chosen.action
    if target != "pytorch":
        assert "torch" not in action.lower(), action
    step = evidence_from_runbook(runbook, 1.0).remediation[chosen.position]
    wording = next((text for names, text in step_wordings(step) if target in names), None)
    if wording is not None:
        assert set(terms(action)) <= set(terms(wording)), (action, wording)
