"""Package moves written as command lines are read like the same moves in prose (issue 16).

"sudo apt-get remove libcudnn6" and "conda install numpy=1.26" were read as no move at all:
:mod:`rca.suggestion.package_moves` knew pip's ``==`` and ``-U`` only, and nothing read a
removal. The managers, subcommands and pin separators are data (package-commands.toml).
"""

from __future__ import annotations

import pytest

from rca.suggestion.command_moves import command_moves, installs, removed_packages
from rca.suggestion.package_moves import Move, moves


@pytest.mark.parametrize(
    ("action", "removed"),
    [
        ("sudo apt-get remove libcudnn6", ["libcudnn6"]),
        ("sudo apt-get -y purge 'libcudnn6*'", ["libcudnn6"]),
        ("pip uninstall -y numpy", ["numpy"]),
        ("python -m pip uninstall torch torchvision", ["torch", "torchvision"]),
        ("Run `conda remove -n ml pytorch` first.", ["torch"]),
        ("Uninstall the CUDA 12 toolkit.", ["cuda"]),
        ("Purge every libnccl2 package from the image.", ["libnccl2"]),
        ("brew uninstall libomp", ["libomp"]),
    ],
)
def test_removals_are_read_from_commands_and_prose(action: str, removed: list[str]) -> None:
    assert removed_packages(action) == removed
    assert not installs(action)


@pytest.mark.parametrize(
    "action",
    [
        "Don't uninstall numpy; pin it to 1.26.",
        "Remove the `use_seedable_sampler` argument from the call.",
        "Pip is outdated; upgrade it.",
    ],
)
def test_no_removal_where_none_is_said(action: str) -> None:
    assert removed_packages(action) == []


@pytest.mark.parametrize(
    ("action", "move"),
    [
        ("conda install numpy=1.26", Move("numpy", "exact", (1, 26))),
        ("conda install -c conda-forge numpy=1.26.4", Move("numpy", "exact", (1, 26, 4))),
        (
            "sudo apt-get install -y libcudnn7=7.6.5.32-1+cuda10.1",
            Move("libcudnn7", "exact", (7, 6, 5, 32)),
        ),
        ("Run `mamba install -y scipy=1.11` in the env.", Move("scipy", "exact", (1, 11))),
    ],
)
def test_other_managers_exact_releases_are_moves(action: str, move: Move) -> None:
    assert moves(action) == [move]


def test_pip_specs_are_read_once() -> None:
    found = moves("pip install accelerate==0.23.0 --force-reinstall")
    assert found == [Move("accelerate", "exact", (0, 23, 0))]
    assert [m.kind for m in command_moves("pip install accelerate==0.23.0")] == ["exact"]


def test_a_command_inside_a_sentence_ends_with_it() -> None:
    found = command_moves("pip install tensorflow-gpu==1.3.0 so it matches cuDNN 6")
    assert [(m.package, m.kind) for m in found] == [("tensorflow-gpu", "exact")]


def test_a_replacement_installs() -> None:
    assert installs("sudo apt-get remove libcudnn6 && sudo apt-get install libcudnn5")
