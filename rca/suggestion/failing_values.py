"""What an incident's message shows as the value, shape, object, version or placement that
fails, in wordings other than "X is already set" (which :mod:`.shown_options` reads).

An answer that makes its target exactly what the message shows failing repeats the failure
(:mod:`.reused_failing` checks it; a size or count past the bound the message states is
:mod:`.size_limits`' reading). Each reading is the generic wording of a kind of line, the
names and numbers come from the message itself:

- a rejected shape: "Expected [-1, 238], got [238]", Keras's "expected shape=(None, 238),
  found shape=(238,)": the shape got is refused;
- a failing object: Python's repr ``<tensorflow.python.keras.optimizers.Adam object at
  0x7f...>`` in an error: that class from that module is what the code passed and what fails;
- a library's runtime release against its build ("compiled against (8, 5, 0) but found
  runtime version (8, 4, 1)", :func:`.library_builds.library_build`), or a package's installed
  release against the one required ("jaxlib is version 0.3.25, but this version of jax
  requires version >= 0.4.6", :func:`.version_pairs.version_values`): the running (installed)
  one is the mismatch;
- arguments a call rejects ("got an unexpected keyword argument 'dispatch_batches'",
  argparse's "unrecognized arguments: --foo", Keras's "Argument(s) not recognized: {'lr':
  0.01}"): passing one again fails the same way;
- placements the message refuses: "Some modules are dispatched on the CPU or the disk",
  with the options its own "you need to set `X`" advice names for doing so anyway.

Every pattern is RE2 (:mod:`ingest.linear_regex`) over bounded lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ingest.linear_regex import compile as linear
from ingest.parsing.shapes import parse_dims
from rca.suggestion.library_builds import library_build
from rca.suggestion.step_options import option_key
from rca.suggestion.version_pairs import version_values

__all__ = [
    "FailingObject",
    "FailingValues",
    "RejectedShape",
    "RunningRelease",
    "read_failing_values",
    "same_shape",
]

_MAX_TEXT = 8000
_MAX_LINES = 200
_MAX_FOUND = 8
_SHAPE = r"[\[(][-\w,\s]{0,80}[\])]"
_REJECTED = (
    linear(
        rf"\bexpected\s+(?:shape\s+|dims\s+|size\s+)?(?P<expected>{_SHAPE})\s*,?\s*(?:but\s+)?"
        rf"(?:got|found|received)\s+(?:shape\s+|dims\s+|size\s+)?(?P<actual>{_SHAPE})",
        ignore_case=True,
    ),
    linear(
        r"\bexpected shape=(?P<expected>\([^)]{0,80}\)), found shape=(?P<actual>\([^)]{0,80}\))"
    ),
)
_OBJECT = linear(r"<(?P<path>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\s+object\s+at\s+0x[0-9A-Fa-f]+>")
#: Arguments a call rejects: Python's "got an unexpected keyword argument 'x'", argparse's
#: "unrecognized arguments: --x --y", Keras's "Argument(s) not recognized: {'lr': 0.01}".
_UNEXPECTED = linear(r"unexpected keyword argument\s+['\"`]?(?P<name>\w+)", ignore_case=True)
_UNRECOGNIZED = linear(r"unrecogni[sz]ed arguments?:\s*(?P<names>[^\n]{1,200})", ignore_case=True)
_NOT_RECOGNIZED = linear(r"Argument\(s\) not recognized:\s*\{(?P<names>[^}\n]{1,200})\}")
_FLAG = linear(r"(?:^|\s)--?(?P<name>[A-Za-z][\w-]*)")
_KEY = linear(r"['\"](?P<name>\w+)['\"]\s*:")
_PLACE = r"(?:the\s+)?(?P<{}>cpu|disk|meta)\b"
_DISPATCHED = linear(
    r"\b(?:modules?|layers?|weights?|parameters?|tensors?)\b[^.\n]{0,40}?\b(?:dispatched|"
    r"offloaded|placed)\s+(?:on|to|onto)\s+"
    + _PLACE.format("first")
    + r"(?:\s+(?:or|and)\s+"
    + _PLACE.format("second")
    + ")?",
    ignore_case=True,
)
#: The message's own way to do it anyway: "you need to set `X=True` and pass a custom `Y`".
_ADVISED = linear(
    r"\b(?:you\s+(?:need|have|must|should)|need|must|should)\s+(?:to\s+)?(?:set|pass|enable|use)"
    r"\s+`(?P<option>[A-Za-z_][\w.]{0,60})"
)


@dataclass(frozen=True)
class RejectedShape:
    """A shape the message refuses (``actual``) and the one it expected."""

    actual: tuple[int | None, ...]
    expected: tuple[int | None, ...]


@dataclass(frozen=True)
class FailingObject:
    """A class, by its module and name, whose instance the message shows failing."""

    module: str
    name: str

    @property
    def path(self) -> str:
        return f"{self.module}.{self.name}"


@dataclass(frozen=True)
class RunningRelease:
    """A library running (installed) at ``running`` against a build for (a requirement of)
    ``built``."""

    library: str
    running: str
    built: str


@dataclass(frozen=True)
class FailingValues:
    """What the message shows failing (each empty when not shown)."""

    shapes: tuple[RejectedShape, ...] = ()
    objects: tuple[FailingObject, ...] = ()
    release: RunningRelease | None = None
    #: Arguments a call rejects (by :func:`.step_options.option_key`).
    arguments: frozenset[str] = frozenset()
    #: Placements the message refuses (``cpu``, ``disk``) and the options it advises setting
    #: to place modules there anyway (by :func:`.step_options.option_key`).
    placements: frozenset[str] = frozenset()
    placement_options: frozenset[str] = frozenset()


def _dims(raw: str) -> tuple[int | None, ...] | None:
    dims = parse_dims(raw)
    if not dims:
        return None
    return tuple(None if dim is None or dim < 0 else dim for dim in dims)


def same_shape(a: Sequence[int | None], b: Sequence[int | None]) -> bool:
    """Two shapes alike: the same rank and every dimension both know equal."""
    if len(a) != len(b):
        return False
    return all(x is None or y is None or x == y for x, y in zip(a, b, strict=True))


def _lines(texts: Sequence[str]) -> list[str]:
    lines: list[str] = []
    for text in texts:
        lines += (text or "")[:_MAX_TEXT].splitlines()[:_MAX_LINES]
    return lines[:_MAX_LINES]


def read_failing_values(message: str, logs: Sequence[str] = ()) -> FailingValues:
    """What the message (and, for releases, the log lines) shows failing."""
    lines = _lines([message])
    shapes: list[RejectedShape] = []
    objects: list[FailingObject] = []
    placements: set[str] = set()
    advised: set[str] = set()
    arguments: set[str] = set()
    for line in lines:
        for pattern in _REJECTED:
            for match in pattern.finditer(line):
                actual, expected = _dims(match.group("actual")), _dims(match.group("expected"))
                if actual and expected and not same_shape(actual, expected):
                    shapes.append(RejectedShape(actual, expected))
        for match in _OBJECT.finditer(line):
            module, _, name = match.group("path").rpartition(".")
            objects.append(FailingObject(module, name))
        for match in _DISPATCHED.finditer(line):
            placements |= {
                place.lower() for place in (match.group("first"), match.group("second")) if place
            }
        advised |= {option_key(m.group("option")) for m in _ADVISED.finditer(line)}
        arguments |= {option_key(m.group("name")) for m in _UNEXPECTED.finditer(line)}
        for match in _UNRECOGNIZED.finditer(line):
            arguments |= {option_key(m.group("name")) for m in _FLAG.finditer(match["names"])}
        for match in _NOT_RECOGNIZED.finditer(line):
            arguments |= {option_key(m.group("name")) for m in _KEY.finditer(match["names"])}
    build = library_build([message, *logs])
    release = RunningRelease(build.library, build.running, build.built) if build else None
    values = version_values(message, list(logs)) if release is None else {}
    if values.get("package") and values.get("installed-version") and values.get("target-version"):
        release = RunningRelease(
            values["package"], values["installed-version"], values["target-version"]
        )
    return FailingValues(
        tuple(dict.fromkeys(shapes))[:_MAX_FOUND],
        tuple(dict.fromkeys(objects))[:_MAX_FOUND],
        release,
        frozenset(arguments),
        frozenset(placements),
        frozenset(advised) if placements else frozenset(),
    )
