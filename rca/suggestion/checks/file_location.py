"""A suggestion that re-points or checks a file's path when the path cannot be the cause.

When :mod:`rca.suggestion.loaded_file` reads ``file-location-ruled-out`` (the message names
the loaded file by an absolute path and says the loader read it and rejected its contents:
``Load model from /srv/m.onnx failed: Protobuf parsing failed``), "use an absolute path",
"check that the file exists", "run it from the project's working directory" or "fix the
model path" change nothing: the loader found the file. Runbook steps that say so carry the
fact in ``unless``; this check catches the same action in any wording, from any runbook or
an LLM, so validation fails it whoever wrote it.

An action that also names what is wrong with the contents (fetch the LFS file, download it
again, convert it, compare its size or checksum, load it with its format's reader) is not
failed: it names the way out too. Linear time: RE2 (:mod:`ingest.linear_regex`) over at most
:data:`MAX_SCAN_CHARS` characters.
"""

from __future__ import annotations

from collections.abc import Iterable

from ingest.linear_regex import compile as linear
from rca.suggestion.checks import MAX_SCAN_CHARS
from rca.suggestion.loaded_file import LOCATION_RULED_OUT

__all__ = ["location_violations", "names_contents", "repoints_path"]

_PATH_WORDS = linear(
    r"\babs(?:olute)?[ _-]?path|\babspath\b|\brealpath\b"
    r"|\b(?:full|complete|correct|right|proper|exact)\s+(?:file\s+|model\s+)?path\b"
    r"|\bpath\.(?:exists|isfile|isdir)\b|\.(?:exists|is_file|is_dir|resolve)\(\)"
    r"|\bworking\s+dir(?:ectory)?\b|\bcwd\b|\bgetcwd\b|\bchdir\b"
    r"|\brelative\s+(?:path|to\s+(?:the\s+)?(?:script|current|project|notebook))",
    ignore_case=True,
)
#: "Check that the file exists", "make sure the model path is correct", "fix the path".
_CHECKS_LOCATION = linear(
    r"\b(?:check|verify|ensure|confirm|make\s+sure|double-check)\b[^.;\n]{0,80}?"
    r"\b(?:exists?|is\s+(?:present|there|reachable|accessible)|can\s+be\s+found"
    r"|(?:path|location|directory|folder)\s+(?:is|are)\s+(?:correct|right|valid)"
    r"|points?\s+(?:to|at)\s+(?:the\s+)?(?:right|correct|existing))\b"
    r"|\b(?:check|verify|fix|correct|double-check|confirm)\s+(?:the\s+|your\s+|that\s+)?"
    r"(?:[\w`.-]+\s+){0,2}?(?:file\s*)?path\b"
    r"|\bpoint\b[^.;\n]{0,60}?\b(?:at|to)\s+(?:the\s+)?(?:right|correct|existing|actual)\s+"
    r"(?:file|directory|folder|path|location)\b",
    ignore_case=True,
)
#: Words of a fix to the file's contents: the action then names the way out too.
_CONTENTS = linear(
    r"\b(?:lfs|re-?download\w*|download\w*|convert\w*|re-?export\w*|export\w*|rebuild\w*"
    r"|regenerat\w*|re-?sav\w*|checksums?|hash|sha\d*|corrupt\w*|truncat\w*|pointer"
    r"|format|formats|size|sizes|header|magic)\b",
    ignore_case=True,
)


def repoints_path(action: str) -> bool:
    """Whether ``action`` makes a path absolute, re-points it, or checks that it exists."""
    text = (action or "")[:MAX_SCAN_CHARS]
    return bool(_PATH_WORDS.search(text) or _CHECKS_LOCATION.search(text))


def names_contents(action: str) -> bool:
    """Whether ``action`` also names a fix to the file's contents (fetch, convert, re-download)."""
    return bool(_CONTENTS.search((action or "")[:MAX_SCAN_CHARS]))


def location_violations(action: str, facts: Iterable[str]) -> list[str]:
    """Why re-pointing the path cannot fix this incident (empty: it may, or the action does
    not re-point it)."""
    if LOCATION_RULED_OUT not in set(facts) or not repoints_path(action):
        return []
    if names_contents(action):
        return []
    return [
        "do not change or check the file's path: the message names it by an absolute path and"
        " says the loader read it and rejected its contents; fix the file itself (fetch the"
        " real file, download it again, convert it, or load it with its format's reader)"
    ]
