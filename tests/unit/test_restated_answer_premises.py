"""An answer that restates or says a runbook step is judged by what it says itself (issue 16:
a premise rules out wrong answers, never right ones). The reviewer's false positives: a
step's ``says`` phrase inside a clause the answer turns down, and the restated step's own text
deciding a limit, a key prefix or a tensor target the answer gives itself.
"""

from __future__ import annotations

import pytest

from rca.suggestion.negated_clauses import said_parts
from rca.suggestion.premises import premise_complaints, read_premises
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear


def _complaints(action: str, runbook: str, message: str, *ranked: tuple[str, float]) -> list[str]:
    ctx = message_context(message, *ranked)
    return premise_complaints(draft(action, runbook), ctx, read_premises(ctx))


_CUDNN = (
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against (8, 9, 2) but"
    " found runtime version (8, 5, 0)"
)
_CUDNN_RANKED = (("cuda-driver-too-old", 0.5), ("cuda-shared-library-version-mismatch", 0.9))


@pytest.mark.parametrize(
    "action",
    [
        "Install cuDNN 8.9.2 or newer so it matches the build; no need to update the driver.",
        "Install cuDNN 8.9.2 or newer so it matches the build (updating the NVIDIA driver does"
        " not help).",
        "Install cuDNN 8.9.2 or newer instead of updating the NVIDIA driver.",
        "Install cuDNN 8.9.2 or newer; do not upgrade the driver.",
    ],
)
def test_a_step_phrase_the_answer_turns_down_is_not_said(action: str) -> None:
    """runtime-older-than-build rules out the driver-update step, not an answer that says
    the driver needs no update."""
    assert _complaints(action, "cuda-driver-too-old", _CUDNN, *_CUDNN_RANKED) == []


@pytest.mark.parametrize(
    "action",
    [
        "Update the NVIDIA driver to 550 or newer.",
        "Install cuDNN 8.9.2, then update the NVIDIA driver.",
        "Install cuDNN 8.9.2 and update the NVIDIA driver (the old one does not help).",
    ],
)
def test_a_step_phrase_the_answer_says_is_still_held_to_the_step(action: str) -> None:
    complaints = _complaints(action, "cuda-driver-too-old", _CUDNN, *_CUDNN_RANKED)
    assert any("runs at an older version than" in c for c in complaints), complaints


@pytest.mark.parametrize(
    ("action", "said"),
    [
        ("Install cuDNN; no need to update the driver.", ["Install cuDNN"]),
        ("Install cuDNN (updating the driver does not help).", ["Install cuDNN"]),
        ("Install torch instead of downgrading the driver", ["Install torch"]),
        ("Keep 535 rather than installing 470, then reboot.", ["Keep 535", "then reboot"]),
        ("You don't need to update the driver.", []),
        ("Never install 470. Use torch 2.1.", ["Use torch 2.1"]),
        ("Update the driver to 550.54.14", ["Update the driver to 550.54.14"]),
    ],
)
def test_said_parts_drop_what_a_clause_turns_down(action: str, said: list[str]) -> None:
    assert said_parts(action) == said


def test_said_parts_take_linear_time() -> None:
    def read(n: int) -> None:
        said_parts("do not (" * (n // 8))
        said_parts("a" * n)
        said_parts("not help " * (n // 9))

    assert_linear(read, 100, 4000)
