"""Packages the incident shows installed at their newest, and steps that would only repeat that.

A log that says ``pip install git+https://github.com/deepmind/dm-haiku`` or
``pip install -U transformers`` shows the package at its newest: pip builds a VCS URL from
the repository's tip when no ref is given, and ``-U/--upgrade`` "upgrades all specified
packages to the newest available version" (pip's documentation, *pip install* and *VCS
Support*). Upgrading such a package again installs the same code and changes nothing, so a
step whose only upgrades of the packages this incident names are of such packages is not a
fix here; a step that also upgrades another package the incident names (the runtime the
fresh library needs, say) still is.

What a step upgrades is read from its install command when it gives one in a code span
(``pip install -U dm-haiku flax``: the command is what runs, the prose around it describes
which of the listed packages applies), else from its words (:func:`.package_moves.moves`).
A VCS install names its package as ``name @ git+URL`` does, else by the repository's name
(the pip name of most libraries: ``dm-haiku``, ``transformers``, ``peft``). A pinned install
(``pkg==1.2``, ``git+URL@v1.2``) is a chosen release, not the newest: it shows nothing.
Linear time: RE2 patterns over bounded lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ingest.linear_regex import compile as linear
from rca.suggestion.incident_setting import log_texts
from rca.suggestion.package_moves import NOT_PACKAGES, moves, package_name

if TYPE_CHECKING:
    from rca.suggestion.context import AnalysisContext

__all__ = ["fresh_packages", "repeats_fresh_install", "step_repeats_fresh_install"]

_MAX_LINES = 200
_MAX_LINE = 2000
_INSTALL = linear(r"\b(?:pip3?|uv\s+pip)\s+install\s+(?P<list>[^\n`|;&]{1,400})")
#: ``git+https://host/owner/repo(.git)(@ref)``, the ref a branch name at most.
_VCS = linear(
    r"^(?:(?P<named>[A-Za-z][\w.-]*)\s*@\s*)?git\+\S+?/(?P<repo>[A-Za-z][\w.-]*?)(?:\.git)?"
    r"(?:@(?P<ref>[\w.-]+))?(?:#\S*)?$"
)
_TIP_REFS = frozenset({"main", "master", "head", "develop", "dev"})
_UPGRADE = frozenset({"-u", "--upgrade"})
_SPAN = linear(r"`([^`\n]{1,400})`")
_WORD = linear(r"[A-Za-z][A-Za-z0-9_-]*")
_AND = linear(r"\s*,\s+|\s+(?:and|or)\s+")


def _lines(texts: Sequence[str]) -> list[str]:
    lines = [line[:_MAX_LINE] for text in texts for line in str(text).splitlines()]
    return lines[:_MAX_LINES]


def fresh_packages(texts: Sequence[str]) -> frozenset[str]:
    """The packages ``texts`` (message and log lines) show installed from a repository's tip
    or upgraded to the newest release, as pip names them."""
    found: set[str] = set()
    for line in _lines(texts):
        for match in _INSTALL.finditer(line):
            tokens = match.group("list").replace(" @ ", "@").split()[:24]
            upgrade = bool(_UPGRADE & {token.lower() for token in tokens})
            for token in tokens:
                token = token.strip("'\",")
                vcs = _VCS.match(token)
                if vcs is not None:
                    ref = (vcs.group("ref") or "").lower()
                    if not ref or ref in _TIP_REFS:
                        found.add(package_name(vcs.group("named") or vcs.group("repo")))
                elif upgrade and not token.startswith("-") and _WORD.fullmatch(token):
                    found.add(package_name(token))  # no version specifier: the newest
    return frozenset(found - NOT_PACKAGES)


def _named(texts: Sequence[str]) -> frozenset[str]:
    """Every word of ``texts`` as a package name (``jax.core`` names jax)."""
    return frozenset(
        package_name(match.group(0)) for line in _lines(texts) for match in _WORD.finditer(line)
    )


def _upgraded(action: str) -> set[str]:
    """The packages ``action`` upgrades: by its install command when a code span gives one."""
    commands = [m.group(1) for m in _SPAN.finditer(action) if _INSTALL.search(m.group(1))]
    # "Upgrade A and B": the words' reader takes the verb's first object; each joined one
    # is read as upgraded too, which can only keep a step (more upgrades, fewer all-fresh).
    words = _AND.sub(" and upgrade ", action)
    found = [move for text in (commands or [words]) for move in moves(text)]
    return {move.package for move in found if move.kind == "up" and move.package}


def repeats_fresh_install(action: str, texts: Sequence[str]) -> str | None:
    """Why ``action`` changes nothing: every package it upgrades that the incident names is
    one the incident shows installed at its newest already; None when that is not so."""
    fresh = fresh_packages(texts)
    if not fresh:
        return None
    named = _upgraded(action) & _named(texts)
    if not named or not named <= fresh:
        return None
    listed = ", ".join(sorted(named))
    return f"the incident shows {listed} at its newest already: upgrading changes nothing"


def step_repeats_fresh_install(action: str, ctx: AnalysisContext) -> bool:
    """:func:`repeats_fresh_install` over the incident's message and log lines."""
    texts = [ctx.message or "", *log_texts(ctx.logs)]
    return repeats_fresh_install(action, texts) is not None
