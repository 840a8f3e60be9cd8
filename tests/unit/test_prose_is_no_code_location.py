"""A code location is read only where the answer writes one as code (issue 16, fresh probe).

The location rule fails an answer naming a place its stack frames lack: a made-up
``train.py:42`` or function. It read prose and inline code as places: an un-backticked dict
comprehension ("for k, v in sd.items()") named ``sd.items()``, and any word after
"method"/"function" was a function name ("the spawn start method avoids it" named
``avoids``), so right answers were re-asked. A place now needs the marks of one: a file
name (with or without its line), or a name backticked, call-shaped (``main()``) or, after
"function"/"method", shaped as an identifier.
"""

from __future__ import annotations

import pytest

from ingest.parsing.frames import make_frame
from rca.suggestion.checks.code_locations import code_locations, unmatched_locations
from rca.suggestion.validation import validate
from tests.support.evidence import draft, incident_context

FRAMES = [make_frame("/srv/app/train.py", "main", 12, in_app=True)]
_FORK = (
    "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with"
    " multiprocessing, you must use the 'spawn' start method"
)
_RUNBOOK = "cuda-fork-subprocess-reinit"


@pytest.mark.parametrize(
    "text",
    [
        # rw006 / rp001 (dev), as the probe's right answers wrote them
        "Remove the leading 'module.' from each key: "
        "{k.removeprefix('module.'): v for k, v in sd.items()}.",
        "CUDA cannot be re-initialized in a forked subprocess; the spawn start method avoids it.",
        # other wordings of the same shapes
        "Rename the keys with [k[7:] for k in state.keys()] before loading.",
        "Iterate for k, v in checkpoint.items() and drop the prefix.",
        "The default start method is fork on Linux.",
        "Use the function described in the docs to strip the prefix.",
        "Pin numpy<2 in requirements.txt and keep the weights in ckpt.pt.",
        "Set it in e.g. the launcher script.",
    ],
)
def test_prose_and_inline_code_name_no_location(text: str) -> None:
    assert code_locations(text) == []


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("Fix the reshape in train.py:42.", ["train.py:42"]),
        ("Move the call inside `load_weights()`.", ["load_weights()"]),
        ("Edit the function `build_head` so it keeps 512 features.", ["build_head"]),
        ("Patch the method Trainer.fit_loop to detach the loss.", ["Trainer.fit_loop"]),
        ("Strip the prefix in `utils.loader` before loading.", ["utils.loader"]),
        ("Check for NaNs in compute_loss() first.", ["compute_loss()"]),
        ("Call set_start_method('spawn') in main() and in serve.py.", ["serve.py"]),
    ],
)
def test_a_made_up_location_written_as_code_still_fails(text: str, missing: list[str]) -> None:
    assert unmatched_locations(text, FRAMES)[1] == missing


def test_the_right_answer_in_prose_passes_the_location_rule() -> None:
    ctx = incident_context(_FORK, (_RUNBOOK, 0.9), frames=FRAMES)
    answer = draft(
        "Set VLLM_WORKER_MULTIPROC_METHOD=spawn before starting vLLM.",
        _RUNBOOK,
        "CUDA cannot be re-initialized in a forked subprocess; the spawn start method avoids it.",
    )
    result = validate(answer, ctx)
    assert result.stack_path_match == 1.0
    assert not [c for c in result.complaints if "code locations" in c]
