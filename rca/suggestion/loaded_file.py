"""Where the loaded file is and what the loader said of it: its location can be ruled out.

"Use an absolute path", "check that the file exists", "run from the right working
directory" fix a loader that looked in the wrong place. When the message already names the
file by an absolute path and says the loader read it and rejected what it found (a protobuf
that does not parse, a zip without its central directory, an HDF5 file without its
signature, a safetensors header too large, an LFS pointer where a pickle should be), the
file is where the loader looked: the fix is its contents (fetch the real file, download it
again, convert it, load it with the reader of its format). This module reads both, as facts:

- :data:`PATH_ABSOLUTE`: the message or log lines name the file being loaded, and every
  name they give it is absolute (POSIX ``/...``, Windows ``C:\\...`` or ``\\\\host\\share``)
  or the bare name an absolute one ends in.
  A path is the loaded file's when its line says what the loader did with it (load, open,
  read, parse, restore; or rejected it, or did not find it) or its name has a model, weight,
  data or config file's extension. Traceback frames (``File "...", line N``) and source
  files (``.py``, ``.so``, ``.cpp``) are never it. ``~/m.pt`` and ``./m.pt`` are relative:
  Python does not expand ``~``.
- :data:`FORMAT_REJECTED`: the loader reached the file and rejected its contents, in the
  wordings of the frameworks' loaders (below), and nothing in the text says a file was not
  found (two readings that disagree claim nothing).
- :data:`LOCATION_RULED_OUT`, both together: steps that move, re-point or check the path
  carry it in ``unless``, and :mod:`rca.suggestion.checks.file_location` fails a suggestion
  saying so in any wording.

The rejection wordings, from each loader's own source or documentation:

- PyTorch ``torch.load``: ``PytorchStreamReader failed reading zip archive: failed finding
  central directory``, ``invalid load key, 'v'.``, ``Invalid magic number; corrupt file?``,
  ``unexpected EOF, expected N more bytes. The file might be corrupted``, ``Weights only load
  failed``, ``... is a zip archive (did you mean to use torch.jit.load()?)``;
- TensorFlow/Keras: HDF5's ``file signature not found``, ``truncated file: eof = ...``, ``bad
  object header version number``; a checkpoint's ``Data loss: not an sstable (bad magic
  number)``; protobuf's ``Error parsing message``; Keras 3's ``File format not supported``;
  a ``.keras`` archive's ``File is not a zip file``;
- ONNX Runtime: ``INVALID_PROTOBUF ... Protobuf parsing failed``, ``Unsupported model IR
  version``; the ``onnx`` checker's ``Unable to parse proto from file``;
- safetensors: ``Error while deserializing header: HeaderTooLarge`` (``HeaderTooSmall``,
  ``InvalidHeaderDeserialization``, ``MetadataIncompleteBuffer``);
- Transformers: ``Unable to load weights from pytorch checkpoint file for '...'`` (raised
  after the file was opened), ``You seem to have cloned a repository without having git-lfs
  installed``, ``... is not a valid JSON file``; tokenizers' ``data did not match any variant
  of untagged enum``; sentencepiece's ``ParseFromArray``;
- llama.cpp ``invalid magic``, ``unknown (magic, version) combination``; TensorRT
  ``Serialization Error in verifyHeader`` / ``Magic tag does not match``; NumPy ``Failed to
  interpret file ... as a pickle``; PIL ``cannot identify image file``; and the generic
  ``unsupported file format``, ``bad magic number``, ``is not a valid GGUF/ONNX/HDF5/...
  file``.

Linear time: RE2 (:mod:`ingest.linear_regex`) over at most :data:`_MAX_TEXT` characters of
at most :data:`_MAX_TEXTS` texts, each line at most :data:`_MAX_LINE`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ingest.linear_regex import compile as linear

__all__ = [
    "FORMAT_REJECTED",
    "LOCATION_RULED_OUT",
    "PATH_ABSOLUTE",
    "format_rejected",
    "loaded_file_facts",
    "loaded_paths",
]

PATH_ABSOLUTE = "path-shown-absolute"
FORMAT_REJECTED = "file-found-format-rejected"
LOCATION_RULED_OUT = "file-location-ruled-out"

_MAX_TEXT = 50_000
_MAX_TEXTS = 200
_MAX_LINE = 4_000
_MAX_LINES = 2_000

_REJECTED = linear(
    r"PytorchStreamReader failed|failed finding central directory|invalid load key"
    r"|invalid magic number|bad magic number|wrong magic number|invalid magic\b"
    r"|magic (?:number|tag|bytes) (?:does not match|mismatch)"
    r"|unknown \(magic, version\) combination|is this really a GGML file"
    r"|unexpected EOF, expected \d+ more bytes|the file might be corrupted"
    r"|weights only load failed|did you mean to use torch\.jit\.load"
    r"|file signature not found|truncated file: eof|bad object header|not an sstable"
    r"|Error parsing message|INVALID_PROTOBUF|Protobuf parsing failed|Unable to parse proto"
    r"|Unsupported model IR version"
    r"|(?:unsupported|unknown|unrecognized|unrecognised|invalid) file format"
    r"|file format (?:is )?not supported|not a zip file|BadZipFile"
    r"|Error while deserializing header|HeaderTooLarge|HeaderTooSmall|header too large"
    r"|InvalidHeaderDeserialization|MetadataIncompleteBuffer"
    r"|Unable to load weights from (?:pytorch |tensorflow |tf |flax )?checkpoint file"
    r"|cloned a repository without having git-lfs"
    r"|is not a valid (?:JSON|GGUF|GGML|ONNX|HDF5|h5|zip|safetensors|pickle|TorchScript"
    r"|TFLite|FlatBuffer|SavedModel|protobuf|YAML|msgpack|checkpoint|model)(?: file| archive)?\b"
    r"|did not match any variant of untagged enum|ParseFromArray"
    r"|verifyHeader|Failed to interpret file .{0,400} as a pickle"
    r"|Cannot load file containing pickled data|cannot identify image file",
    ignore_case=True,
)
#: A file, not its contents, was not found: the location is then the question.
_NOT_FOUND = linear(
    r"No such file or directory|does not exist|doesn'?t exist|\bErrno 2\b|errno = 2"
    r"|NO_SUCHFILE|No file or directory found|does not appear to have a file named|no file named"
    r"|is not a local folder|failed to stat|FileNotFoundError|cannot find the (?:file|path)"
    r"|could not find (?:the )?(?:file|model|checkpoint)|file not found at",
    ignore_case=True,
)
#: A line saying what a loader did with the path it names.
_LOADER_LINE = linear(
    r"\b(?:loads?|loading|loaded|opens?|opening|reads?|reading|restore|restoring|parse"
    r"|parsing|deseriali[sz]\w*|unpickl\w*)\b|checkpoint file|filepath|file name|name =",
    ignore_case=True,
)
_FRAME_LINE = linear(r"^\s*(?:File \"|at \S|#\d+ )|\.py\", line \d")
_QUOTED = linear(r"'([^'\n]{1,400})'|\"([^\"\n]{1,400})\"|`([^`\n]{1,400})`")
_TOKEN = linear(r"[^\s'\"`()\[\]{}<>,;=|]+")
_ABSOLUTE = linear(r"^(?:/[^/\s]|[A-Za-z]:[\\/]|\\\\[^\\\s])")
_RELATIVE = linear(r"^(?:\.{1,2}[\\/]|~[\\/])")
_URL = linear(r"^[A-Za-z][\w+.-]{0,20}://|^\w+@")
#: Extensions of source and library files: a frame's file, never the object loaded.
_SOURCE = linear(
    r"\.(?:py|pyc|pyx|pyi|so|dll|dylib|pyd|cpp|cc|cxx|c|h|hpp|cu|cuh|java|go|rs|js|ts)"
    r"(?:[:(]\d+\)?)?$",
    ignore_case=True,
)
#: Extensions of model, weight, data and config files: a path so named is what is loaded.
_LOADED_EXT = linear(
    r"[\w-]\.(?:pt|pth|bin|ckpt|safetensors|onnx|ort|h5|hdf5|keras|pb|pbtxt|engine|plan|trt"
    r"|gguf|ggml|tflite|pkl|pickle|npy|npz|msgpack|json|model|pdparams|pdmodel|joblib"
    r"|mlmodel|params|caffemodel|prototxt|index|tfrecord|parquet|arrow|csv|zip|tar|gz"
    r"|jpg|jpeg|png|bmp|gif|tif|tiff|webp|wav|mp3|flac|yaml|yml)$",
    ignore_case=True,
)


def _lines(texts: Iterable[str]) -> Iterator[str]:
    """The lines of the texts, bounded; traceback frame lines left out."""
    count = 0
    for text in list(texts)[:_MAX_TEXTS]:
        if not isinstance(text, str):
            continue
        for line in text[:_MAX_TEXT].splitlines():
            count += 1
            if count > _MAX_LINES:
                return
            line = line[:_MAX_LINE]
            if not _FRAME_LINE.search(line):
                yield line


def _candidates(line: str) -> Iterator[str]:
    """Path-like strings of one line: quoted ones whole (a Windows path may hold spaces),
    then the tokens outside quotes."""
    rest, end = [], 0
    for m in _QUOTED.finditer(line):
        yield (m[1] or m[2] or m[3] or "").strip()
        rest.append(line[end : m.start()])
        end = m.end()
    rest.append(line[end:])
    for m in _TOKEN.finditer(" ".join(rest)):
        yield m[0]


def loaded_paths(texts: Iterable[str]) -> list[tuple[str, bool]]:
    """Each path the texts give the loaded file, with whether it is absolute."""
    found: list[tuple[str, bool]] = []
    for line in _lines(texts):
        loader_line = bool(_LOADER_LINE.search(line) or _REJECTED.search(line))
        for raw in _candidates(line):
            path = raw.rstrip(".:;!?")
            if not path or _URL.search(path) or _SOURCE.search(path):
                continue
            absolute = bool(_ABSOLUTE.search(path))
            # A file with a loaded file's extension, or a path in a line about loading.
            if _LOADED_EXT.search(path) or (loader_line and (absolute or _RELATIVE.search(path))):
                found.append((path, absolute))
    return found


def _basename(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rpartition("/")[2]


def format_rejected(texts: Iterable[str]) -> bool:
    """Whether a loader reached the file and rejected its contents, and nothing in the
    texts says a file was not found."""
    bounded = [text[:_MAX_TEXT] for text in list(texts)[:_MAX_TEXTS] if isinstance(text, str)]
    rejected = any(_REJECTED.search(text) for text in bounded)
    return rejected and not any(_NOT_FOUND.search(text) for text in bounded)


def loaded_file_facts(texts: Iterable[str]) -> set[str]:
    """:data:`PATH_ABSOLUTE`, :data:`FORMAT_REJECTED` and, both together,
    :data:`LOCATION_RULED_OUT`, read from the message and log lines ``texts``."""
    texts = list(texts)[:_MAX_TEXTS]
    facts: set[str] = set()
    paths = loaded_paths(texts)
    # A bare name that an absolute path shown ends in is that file named again
    # ("loading file vocab.json from cache at /root/.cache/.../vocab.json").
    named = {_basename(path) for path, absolute in paths if absolute}
    if named and all(absolute or path in named for path, absolute in paths):
        facts.add(PATH_ABSOLUTE)
    if format_rejected(texts):
        facts.add(FORMAT_REJECTED)
    if {PATH_ABSOLUTE, FORMAT_REJECTED} <= facts:
        facts.add(LOCATION_RULED_OUT)
    return facts
