"""What a remedy stated in an error message names: options, flags, variables, methods and
values, and packages with the direction to take them.

:mod:`.message_advice` finds the advice clause; this reads its object. "Try increasing
`gpu_memory_utilization`" names ``gpu_memory_utilization``; "Please set
PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python" a variable and its value; "you must use the
'spawn' start method" a quoted value; "Please update your jax and/or jaxlib packages" two
packages and the direction "upgrade". Untrusted text: RE2 patterns (:mod:`ingest.linear_regex`)
over clauses the caller has already bounded, and at most a few names returned.
"""

from __future__ import annotations

from collections.abc import Mapping

from ingest.linear_regex import compile as linear

__all__ = ["DIRECTIONS", "named_options", "named_packages"]

MAX_NAMES = 8


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Package verbs, and the direction each gives.
DIRECTIONS: Mapping[str, str] = {
    "install": "install", "reinstall": "install", "upgrade": "upgrade", "update": "upgrade",
    "downgrade": "downgrade", "uninstall": "remove",
}  # fmt: skip
#: Words after a package verb that are not the package ("update your jax package").
_NOT_PACKAGE = _words(
    """
    a an the your you it them this that these those its their our my latest newest new newer
    older old correct compatible appropriate required matching installed affected right
    same proper recent current supported following version versions package packages
    library libraries module modules dependency dependencies first also either both all
    """
)
#: Where a package name list ends ("upgrade jax to 0.4", "install X by running").
_PACKAGE_STOP = _words("to by with from via for in on at of so if when which that as")


#: What names an option, a flag, a variable, a method or a value.
_CODE_SPAN = linear(r"`([^`\n]{1,80})`")
_QUOTED = linear(r"(?:^|[\s(=:,])['\"]([A-Za-z0-9_.<>=!~*+/:@-]{1,40})['\"]")
_FLAG = linear(r"(?:^|[\s(=,])(--?[A-Za-z][A-Za-z0-9_-]{1,40})")
_ENV = linear(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)(?:=([^\s,;)'\"`]{1,40}))?")
_IDENT = linear(
    r"(?:^|[\s(,=])(@?[A-Za-z_.][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:\([^()\s]{0,20}\))?)"
)
_PAIR = linear(r"([A-Za-z_][A-Za-z0-9_.]*)\s?=\s?([^\s,;)'\"`]{1,40})")


def named_options(clause: str) -> tuple[list[str], str | None]:
    """What the clause names (code spans, quoted values, flags, variables, identifiers that
    look like code) and the value it gives the first one."""
    names: list[str] = []
    value: str | None = None
    for match in _CODE_SPAN.finditer(clause):
        names.append(match.group(1).strip())
    for match in _QUOTED.finditer(clause):
        names.append(match.group(1))
    for match in _FLAG.finditer(clause):
        names.append(match.group(1))
    for match in _ENV.finditer(clause):
        names.append(match.group(1))
    for match in _IDENT.finditer(clause):
        token = match.group(1)
        dotted = "." in token.strip(".") and len(token.strip(".")) > 4  # not "e.g."
        if "_" in token.strip("_") or dotted or "(" in token or "@" in token:
            names.append(token)
    if pair := _PAIR.search(clause):
        value = pair.group(2)
    return list(dict.fromkeys(n for n in names if n.strip("`'\". ")))[:MAX_NAMES], value


def named_packages(rest: str) -> tuple[str, ...]:
    """The package names right after a package verb ("your jax and/or jaxlib packages")."""
    found: list[str] = []
    for raw in rest.replace("/", " ").split()[:10]:
        word = raw.strip("`'\".,:;()")
        low = word.lower()
        if low in _PACKAGE_STOP or not word:
            break
        if low in _NOT_PACKAGE or low in ("and", "or", "and/or"):
            continue
        if not (word[0].isalpha() or word[0] == "_"):
            break
        found.append(word)
        if len(found) == 3:
            break
    return tuple(found)
