"""A layer loaded from trained weights is not resized (issue 16 item 2, "the layer is pretrained").

The fact ``pretrained-weights-loaded`` is read from the incident's own text: a loader call in
a frame, a loader's log line, a weights file's name. Steps that change a layer's width
(``in_features``, a dummy pass to recompute it, rebuilding a Keras model from the data's
shape) name it in ``unless``; the step "load the model files made for this architecture"
``fits`` it. The wordings below are phrasings of libraries' loaders, not any case's text.
"""

from __future__ import annotations

from typing import Any

import pytest

from ingest.parsing.frames import make_frame
from ingest.parsing.shapes import extract_shape_diff
from rca.suggestion.context import AnalysisContext
from rca.suggestion.environment_facts import environment_facts
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.validation import validate
from tests.support.dev_cases import dev_case
from tests.support.evidence import evidence
from tests.support.frames import USER_FORWARD

_FACT = "pretrained-weights-loaded"

#: Lines that load trained weights, as different libraries and users write them.
LOADING = (
    "model = AutoModel.from_pretrained(args.model_dir)",
    "net.load_state_dict(torch.load(weights_path, map_location='cpu'))",
    "state = torch.load('runs/exp3/best.pt')",
    "Loading checkpoint shards: 100%|##########| 3/3 [00:04<00:00]",
    "loaded weights from /srv/models/base-1.0.safetensors",
    "ckpt_path: /data/models/v2-pruned.ckpt",
    "model.load_weights('checkpoints/final.h5')",
    "Some weights of the model checkpoint at my-org/encoder were not used when initializing",
    "with safe_open(path, framework='pt') as f:",
    "Loading model from llama-7b.Q4_K_M.gguf",
)

#: Lines that look alike and load nothing.
NOT_LOADING = (
    "x = self.fc(x)",
    "tf.keras.layers.Dense(10, activation='relu')",
    "model.gradient_checkpointing_enable()",
    "return torch.utils.checkpoint.checkpoint(layer, hidden)",
    "sys.path.append(root)",
    "mat1 and mat2 shapes cannot be multiplied (256x4096 and 768x320)",
    "images = torch.stack(batch)",
)


@pytest.mark.parametrize("line", LOADING)
def test_loading_trained_weights_is_read_from_many_wordings(line: str) -> None:
    assert _FACT in environment_facts([line]), line


@pytest.mark.parametrize("line", NOT_LOADING)
def test_lines_that_load_nothing_give_no_such_fact(line: str) -> None:
    assert _FACT not in environment_facts([line]), line


def _matmul_ctx(**extra: Any) -> AnalysisContext:
    case = dev_case("c014")  # mat1 and mat2 shapes cannot be multiplied (bare message)
    return AnalysisContext(
        error_type=case["exception_type"],
        message=case["message"],
        shape_diff=extract_shape_diff(case["message"]),
        evidence=evidence(("matmul-shape-mismatch-linear", 0.9)),
        **extra,
    )


def _where(line: str) -> dict[str, Any]:
    """The line as a frame's code for a call, as a log line for the rest."""
    if "(" in line and not line.startswith(("Loading", "Some", "loaded")):
        frame = make_frame("/srv/app/run.py", "main", 40, context_line=line, in_app=True)
        return {"frames": [frame]}
    return {"logs": [{"message": line}]}


def test_without_loading_evidence_the_users_layer_may_be_resized() -> None:
    ctx = _matmul_ctx(frames=USER_FORWARD)
    assert _FACT not in read_premises(ctx).facts
    assert "in_features" in OfflineProvider().suggest(ctx).action


@pytest.mark.parametrize("line", LOADING)
def test_a_loaded_layer_is_never_resized_whatever_the_wording(line: str) -> None:
    """Metamorphic: the same failure with the loading said another way (a frame, a log line,
    a file name) rules out the same steps and chooses the same one."""
    ctx = _matmul_ctx(**_where(line))
    assert _FACT in read_premises(ctx).facts, line
    ranked = rank_steps(ctx)
    assert ranked
    assert all("in_features" not in c.action for c in ranked), line
    assert all("dummy forward pass" not in c.action for c in ranked), line
    action = OfflineProvider().suggest(ctx).action
    assert "checkpoint or model files made for this architecture" in action, line


def test_restating_the_resize_step_fails_validation_on_a_loaded_layer() -> None:
    ctx = _matmul_ctx(**_where(LOADING[1]))
    resize = Draft(
        "Set the layer's `in_features` to the actual flattened size (4096), or use"
        " `nn.LazyLinear`.",
        "The weight must have as many input columns as the features produced.",
        "matmul-shape-mismatch-linear",
        0.5,
        "test",
        "test",
    )
    check = validate(resize, ctx)
    assert not check.premises_ok and not check.ok
