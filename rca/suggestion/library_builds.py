"""A library running at one version against code, an engine or a file built for another,
read from the incident's text ("Loaded runtime CuDNN library: 7.3.1 but source was compiled
with: 7.5.0", "expecting library version 8.2.4 got 8.2.3", "Unsupported model IR version:
10, max supported IR version: 9").

Each reader is the generic wording of a kind of line; :mod:`.version_pairs` turns the result
into facts and step values and :mod:`.compatibility` looks the versions up in vendors' tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ingest.linear_regex import LinearMatch
from ingest.linear_regex import compile as linear
from rca.suggestion.cuda_components import decoded
from rca.suggestion.version_numbers import bounded_lines as _lines
from rca.suggestion.version_numbers import parse_version as _version

__all__ = ["LibraryBuild", "library_build"]

_NUM = r"\d+(?:\.\d+)*"
#: A version printed as a tuple: "(8, 5, 0)".
_TUPLE = r"\d+(?:(?:\.|,\s*)\d+)*"
_MAX_LINES = 400
_MAX_LINE = 2000
#: Library loaded at run time vs built with. Group ``run`` is the version running now,
#: ``built`` the one the code, engine or file was made with or for.
_BUILDS = (
    # "Loaded runtime CuDNN library: 7.3.1 but source was compiled with: 7.5.0."
    linear(
        rf"loaded runtime (?P<lib>\w+) library:? (?P<run>{_NUM})[^\n]{{0,80}}?"
        rf"\b(?:compiled|built) (?:with|against):? (?P<built>{_NUM})",
        ignore_case=True,
    ),
    # "The detected CUDA version (11.8) mismatches the version that was used to compile
    # PyTorch (12.1)."
    linear(
        rf"detected (?P<lib>\w+) version \(?(?P<run>{_NUM})\)? mismatches the version that was"
        rf" used to (?:compile|build) \w+ \(?(?P<built>{_NUM})",
        ignore_case=True,
    ),
    # "not compatible with this version of TensorRT, expecting library version 8.2.4 got 8.2.3"
    linear(
        rf"this version of (?P<lib>\w+), expecting (?:library )?version (?P<run>{_NUM}),?"
        rf" got (?P<built>{_NUM})",
        ignore_case=True,
    ),
    # "ONNX model has a newer ir_version (0.0.5) than this parser was built against (0.0.3)"
    linear(
        rf"(?P<lib>\w+) model has a newer \w+ \((?P<built>{_NUM})\) than this \w+ was"
        rf" (?:built|compiled) against \((?P<run>{_NUM})\)",
        ignore_case=True,
    ),
    # "Unsupported model IR version: 10, max supported IR version: 9"
    linear(
        rf"unsupported model (?P<lib>\w+) version:? (?P<built>{_NUM}),? max(?:imum)? supported"
        rf" \w+ version:? (?P<run>{_NUM})",
        ignore_case=True,
    ),
    # PyTorch: "cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but
    # found runtime version (8, 4, 1)", "cuDNN version mismatch: PyTorch was compiled
    # against 7102 but linked against 7605".
    linear(
        rf"(?P<lib>\w+) version (?:incompatibility|mismatch):?\s+\w+ was compiled\s+against\s+"
        rf"\(?(?P<built>{_TUPLE})\)?\s+but (?:found runtime version|linked against)\s+"
        rf"\(?(?P<run>{_TUPLE})\)?",
        ignore_case=True,
    ),
    # JAX: "Found cuDNN version 8600, but JAX was built against version 8906, which is newer."
    linear(
        rf"found (?P<lib>\w+) version (?P<run>{_NUM}),? but \w+ was (?:built|compiled) against"
        rf" version (?P<built>{_NUM})",
        ignore_case=True,
    ),
    # JAX, over several lines: "Outdated cuDNN installation found. Version JAX was built
    # against: 8907 Minimum supported: 9100 Installed version: 8907".
    linear(
        rf"outdated (?P<lib>\w+) installation found[^\x00]{{0,300}}?minimum supported:?\s*"
        rf"(?P<built>{_NUM})[^\x00]{{0,120}}?installed version:?\s*(?P<run>{_NUM})",
        ignore_case=True,
    ),
)


@dataclass(frozen=True)
class LibraryBuild:
    """A library (or file format) running at one version against code, an engine or a
    file made for another."""

    library: str
    running: str
    built: str

    @property
    def running_older(self) -> bool:
        return _version(self.running) < _version(self.built)


def _dotted(library: str, text: str) -> str:
    """A version as dots: a tuple's commas, or an integer in the library's documented
    encoding (:func:`rca.suggestion.cuda_components.decoded`)."""
    return decoded(library, text.replace(" ", "").replace(",", "."))


def library_build(texts: Sequence[str]) -> LibraryBuild | None:
    """The first line (or, for wordings over several lines, text) saying a library runs at
    one version against a build for another."""
    whole = [text[: _MAX_LINE * 2] for text in texts[:_MAX_LINES] if "\n" in text[: _MAX_LINE * 2]]
    for line in [*_lines(texts), *whole]:
        for pattern in _BUILDS:
            match: LinearMatch | None = pattern.search(line)
            if match is None:
                continue
            lib = match.group("lib")
            run, built = _dotted(lib, match.group("run")), _dotted(lib, match.group("built"))
            if _version(run) != _version(built):
                return LibraryBuild(lib, run, built)
    return None
