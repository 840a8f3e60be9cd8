"""An action may open with a command line instead of a verb (issue 16, fresh probe).

"Don't downgrade TensorFlow; pip install tf-keras and set TF_USE_LEGACY_KERAS=1" was re-asked
because its instruction opens with "pip": the format rule wanted an English verb. Messages
themselves write the fix that way ("install ... with `pip install tf-keras`"). The programs
are data (``rca/knowledge/shell-commands.toml``); a program's name counts only with a
command line after it, so a sentence about the program is still no instruction.
"""

from __future__ import annotations

import pytest

from rca.suggestion.shell_commands import SHELL_PROGRAMS
from rca.suggestion.validation import format_ok

REASON = "The installed Keras is Keras 3, which transformers does not support yet."


@pytest.mark.parametrize(
    "action",
    [
        "Don't downgrade TensorFlow; pip install tf-keras and set TF_USE_LEGACY_KERAS=1 "
        "before importing transformers.",
        "pip install tf-keras before importing transformers.",
        "`pip install -U transformers` in the serving image.",
        "Do not pin keras; python -m pip install tf-keras.",
        "Never downgrade TensorFlow; uv pip install tf-keras.",
        "sudo apt-get install libgl1 in the container.",
        "conda install -c nvidia cuda-toolkit=12.1.",
        "env CUDA_VISIBLE_DEVICES=0 python serve.py --port 8000",
        "torchrun --nproc_per_node 4 train.py",
    ],
)
def test_a_command_line_opens_an_action(action: str) -> None:
    assert format_ok(action, REASON) == (True, "")


@pytest.mark.parametrize(
    "action",
    [
        "Pip is outdated in this image.",
        "Python 3.8 lacks this module.",
        "Accelerate the data loader.",
        "Don't downgrade TensorFlow; pip.",
        "Conda environments differ.",
    ],
)
def test_a_program_named_without_a_command_line_is_no_instruction(action: str) -> None:
    ok, problem = format_ok(action, REASON)
    assert not ok and "imperative verb" in problem


def test_the_programs_are_lower_case_names() -> None:
    assert {"pip", "conda", "apt-get", "export", "python"} <= SHELL_PROGRAMS
    assert all(name == name.lower() and " " not in name for name in SHELL_PROGRAMS)
