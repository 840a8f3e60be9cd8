"""The part of a stack frame's file name that is evidence about a failure (pure).

Where a user keeps their code (``/home/<user>/projects/...``, ``C:\\Users\\...``, a conda env's
name, ``/workspace``, ``/content/drive``, ``/kaggle/working``) is arbitrary: another team hits
the same failure under other directories. Its words must not count as incident words: a
home directory says ``home``, which a ``CUDA_HOME`` runbook shares, so renaming the user's
folders changed which runbook or step won. What a file name does tell is *whose code* the
frame is in: an installed library's own tree (``torch/nn/modules/module.py`` under
``site-packages``), the standard library's (``multiprocessing/pool.py``), or, for the user's
own code, the file's basename (``train.py``). :func:`evidence_path` keeps exactly that; every
reader of frame file names as words (the step ranker's words, the incident's frameworks)
goes through it. The same holds for paths a message or log line prints (a ``docker run -v``
host directory, a checkpoint's folder): :func:`evidence_text` reduces each the same way.
One kind of printed path is a library's own, whatever its directories: a C, C++ or CUDA
source file that a compiled library's logger names (``tensorflow/core/.../bfc_allocator.cc``);
:func:`compiled_sources` finds them for the readers of whose code ran (the incident's
frameworks), while the retrieval text still keeps only their file names.
"""

from __future__ import annotations

from ingest.linear_regex import compile as linear

__all__ = ["compiled_sources", "evidence_path", "evidence_text"]

#: Directories that hold installed packages (pip, distro Python).
_INSTALLED = frozenset({"site-packages", "dist-packages"})
#: ``python3.10`` (``lib/python3.10/...``, POSIX) or ``Python310`` (``Python310\\lib``, Windows).
_INTERPRETER = linear(r"python\d+(?:\.\d+)?", ignore_case=True)
_LIB = frozenset({"lib", "lib64"})


def _parts(filename: str) -> list[str]:
    return [part for part in filename.replace("\\", "/").split("/") if part]


def _library_tree(parts: list[str]) -> list[str]:
    """The path under the innermost installed-packages or standard-library directory;
    empty when the file is in neither (the user's own code)."""
    for i in range(len(parts) - 2, -1, -1):
        if parts[i].lower() in _INSTALLED:
            return parts[i + 1 :]
    for i in range(len(parts) - 2, 0, -1):
        before, part = parts[i - 1].lower(), parts[i].lower()
        if (before in _LIB and _INTERPRETER.fullmatch(part)) or (
            part in _LIB and _INTERPRETER.fullmatch(before)
        ):
            return parts[i + 1 :]
    return []


def evidence_path(filename: str) -> str:
    """``filename`` without the user's directories: the library's own tree for a file under
    ``site-packages`` / ``dist-packages`` or the standard library, else the basename.

    ``/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py`` ->
    ``torch/nn/modules/module.py``; ``/home/alice/proj/train.py`` -> ``train.py``;
    ``<frozen importlib._bootstrap>`` stays as it is."""
    parts = _parts(filename or "")
    if not parts:
        return ""
    return "/".join(_library_tree(parts) or parts[-1:])


#: A URL (kept: its address is the library's documentation or hub, not the user's tree), a
#: Windows path (``C:\\...``), or a token with two or more ``/`` (``/data/x/repo``,
#: ``../c10/cuda/x.cpp``); RE2, so linear in the text whatever it holds.
_PATH_TOKEN = linear(
    r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"<>]*"
    r"|[A-Za-z]:\\[\w.@+~\-\\/]*"
    r"|[\w.@+~\-]*(?:/[\w.@+~\-]*){2,}"
)


def _reduced(token: str) -> str:
    if "://" in token:
        return token
    return evidence_path(token) or token


def evidence_text(text: str) -> str:
    """``text`` with every path it prints reduced by :func:`evidence_path`, so that the
    user's directories (``-v /data/Triton/model_repository:/models``) say nothing while a
    library file (``/usr/local/cuda/lib64/libcudnn.so.8`` -> ``libcudnn.so.8``) and an
    installed package's tree still do. URLs stay as they are."""
    return _PATH_TOKEN.sub(lambda match: _reduced(match.group(0)), text)


#: The file name ends of C, C++ and CUDA sources and headers.
_COMPILED = linear(r"\.(?:c|cc|cpp|cxx|cu|cuh|h|hh|hpp|hxx|inl)$", ignore_case=True)


def compiled_sources(text: str) -> list[str]:
    """The C, C++ and CUDA source paths ``text`` prints (``/`` separated), as a compiled
    library's logger names its own code: ``W tensorflow/core/common_runtime/bfc_allocator.cc``,
    ``../c10/cuda/CUDACachingAllocator.cpp``, ``/onnxruntime_src/onnxruntime/core/session/x.cc``.
    Their directories are the library's source tree, not the user's folders (a user's own
    code in a log line is a Python script), so they may tell whose code ran; URLs and paths
    of any other file are left out."""
    return [
        token.replace("\\", "/")
        for match in _PATH_TOKEN.finditer(text)
        if "://" not in (token := match.group(0)) and _COMPILED.search(token)
    ]
