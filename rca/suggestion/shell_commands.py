"""Whether an action opens with a command line ("pip install tf-keras") rather than a verb.

A shell command given as the instruction is an imperative: "Don't downgrade TensorFlow; pip
install tf-keras and set TF_USE_LEGACY_KERAS=1" tells the user what to run, as the messages
themselves do ("install ... with `pip install tf-keras`"). The programs are data
(``rca/knowledge/shell-commands.toml``); a program's name counts only when a command line
follows it -- a subcommand that is itself an imperative verb (``install``, ``uninstall``,
``run``, ``launch``), a flag (``-m``, ``--upgrade``) or an assignment (``NAME=value``) -- so a
sentence about the program ("Pip is outdated", "Accelerate the loop") is not read as one.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from rca.suggestion.imperative_verbs import IMPERATIVE_VERBS

__all__ = ["COMMANDS_FILE", "SHELL_PROGRAMS", "opens_command"]

#: The programs are data: ``rca/knowledge/shell-commands.toml``.
COMMANDS_FILE = Path(__file__).resolve().parent.parent / "knowledge" / "shell-commands.toml"
_MARKS = "`*_\"'"


def _programs() -> frozenset[str]:
    with COMMANDS_FILE.open("rb") as handle:
        return frozenset(str(name).lower() for name in tomllib.load(handle)["programs"])


#: Lower-case program names ("pip", "apt-get", "export").
SHELL_PROGRAMS = _programs()


def _argument_starts_command(word: str) -> bool:
    """A subcommand that is a verb (``install``), a flag (``-m``), an assignment or a script."""
    word = word.strip(_MARKS + ",;:")
    if not word:
        return False
    if word.startswith("-") and len(word) > 1:
        return True
    name, equals, _ = word.partition("=")
    if equals and name.replace("_", "").isalnum():
        return True
    if word.endswith(".py"):
        return True  # "python train.py --fp16"
    return word.lower() in IMPERATIVE_VERBS


def opens_command(words: list[str]) -> bool:
    """Whether ``words`` (an action split on spaces, from its first word) open with a
    command line of a known program: ``pip install x``, ``sudo apt-get install y``,
    ``python -m pip ...``, ``export NAME=1``."""
    at = 0
    while at + 1 < len(words) and words[at].strip(_MARKS).lower() in SHELL_PROGRAMS:
        if _argument_starts_command(words[at + 1]):
            return True
        at += 1  # "sudo apt-get install", "env CUDA_VISIBLE_DEVICES=0 python ..."
    return False
