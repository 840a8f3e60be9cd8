"""The side of a release an incident rules out because it states what it needs, not what
broke: a requirement against the version found, a package "too old", a runtime library
older than the one the code was built with.

:mod:`.cause_releases` reads the releases a message names as the cause ("removed in 0.4.34",
"requires protobuf<4"); these wordings name the other end. "jaxlib is version 0.3.25, but
this version of jax requires version >= 0.4.6" rules out every jaxlib before 0.4.6, so
"downgrade jaxlib to 0.3.15" goes the wrong way; "Cannot find a working triton installation
... or it is too old" names no number, only the way (any downgrade of triton is wrong);
"Loaded runtime CuDNN library: 7.3.1 but source was compiled with: 7.5.0" rules out moving
cuDNN further down from 7.3 (compared by major and minor, so "install cuDNN 7.3" is the
runtime it has, not a move down). Each is read by the existing readers --
:func:`.version_pairs.version_change` for the requirement and its direction,
:func:`.library_builds.library_build` for the runtime -- and turned into a
:class:`~.cause_releases.NamedCause`, which the premise check holds every suggestion's
package moves to (:func:`.cause_releases.moves_towards`).
"""

from __future__ import annotations

from collections.abc import Sequence

from rca.suggestion.cause_releases import NamedCause
from rca.suggestion.environment_facts import installed_versions
from rca.suggestion.library_builds import library_build
from rca.suggestion.package_moves import NOT_PACKAGES, package_name
from rca.suggestion.version_numbers import bounded_lines, parse_version
from rca.suggestion.version_pairs import VersionChange, version_change

__all__ = ["required_causes", "with_required_causes"]

#: The parts of a runtime's version a build check compares (cuDNN's: major and minor).
_RUNTIME_PARTS = 2
_MAX_PHRASE = 120
#: How :mod:`.version_pairs` words the target of a package the text calls too new.
_TOO_NEW = "a release older than"


def _next(version: tuple[int, ...]) -> tuple[int, ...]:
    return (*version[:-1], version[-1] + 1) if version else version


def _change_cause(change: VersionChange) -> NamedCause | None:
    """The side a version change rules out. An upgrade: every release below the one
    installed (moving further down), or below the floor when none is shown ("jaxlib==0.3.25"
    beside a matching older jax stays allowed; "downgrade jaxlib to 0.3.15" does not). A
    downgrade: past a ceiling the text states, or past the installed release the text calls
    too new; not a pin against another package ("torchvision 0.15.2 requires torch==2.0.1"):
    moving that other package up with it is a fix too."""
    package = package_name(change.package)
    if not package or package in NOT_PACKAGES or package[0].isdigit():
        return None
    target = change.target.strip()
    op = target.split(" ", 1)[0] if target[:1] in "<>=" else ""
    number = parse_version(target.split(" ", 1)[-1]) if op else ()
    installed = parse_version(change.installed)
    shown = f"{change.installed} installed; " if change.installed else ""
    phrase = f"{change.package}: {shown}{change.direction} to {target}"[:_MAX_PHRASE]
    if change.direction == "upgrade":
        release = installed or (number if op in (">=", "==") else _next(number))
        return NamedCause(package, release, "below", phrase)
    if change.direction != "downgrade":
        return None
    if op in ("<", "<=") and number:
        return NamedCause(package, number if op == "<" else _next(number), "from", phrase)
    if target.startswith(_TOO_NEW):
        return NamedCause(package, _next(installed), "from", phrase)
    return None


def required_causes(message: str, texts: Sequence[str]) -> tuple[NamedCause, ...]:
    """The sides of releases the message and log or code lines rule out by what they say is
    needed: the requirement's (:func:`_change_cause`) and, for a runtime library older than
    its build, every release below the runtime's (major, minor)."""
    causes: list[NamedCause] = []
    lines = bounded_lines([message, *texts])
    change = version_change(message, texts, installed_versions(lines))
    if change is not None and (cause := _change_cause(change)) is not None:
        causes.append(cause)
    build = library_build([message, *texts])
    if build is not None and build.running_older:
        package = package_name(build.library)
        running = parse_version(build.running)[:_RUNTIME_PARTS]
        if package and package not in NOT_PACKAGES and running:
            phrase = f"runtime {build.library} {build.running}, built against {build.built}"
            causes.append(NamedCause(package, running, "below", phrase))
    return tuple(causes)


def with_required_causes(
    causes: tuple[NamedCause, ...], message: str, texts: Sequence[str]
) -> tuple[NamedCause, ...]:
    """``causes`` and, after them, each of :func:`required_causes` they do not hold yet."""
    held = {(c.package, c.release, c.side) for c in causes}
    extra = [
        c for c in required_causes(message, texts) if (c.package, c.release, c.side) not in held
    ]
    return (*causes, *extra)
