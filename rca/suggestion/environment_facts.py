"""Facts read from what an incident's text says about its environment and its own code.

The other half of :mod:`.incident_facts` (which reads shapes, keys and memory figures):
sentences in the message and the log lines that say which library versions were built
against which, which package versions are installed, and how the failing code runs. Each
fact has a name from :data:`rca.corpus.step_metadata.FACTS`; which steps it makes the fix
(``fits``) or rules out (``unless``) is written in the runbooks. Nothing here knows a
runbook, a package or a case: every pattern is the generic wording of a kind of line
(pip's output, a loader's "built with X, found Y", a ``with torch.no_grad():`` frame, a
``from_pretrained`` call or a weights file's name).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ingest.linear_regex import compile as linear

__all__ = ["environment_facts", "installed_versions", "rejected_arguments", "requirements"]

_MAX_LINES = 400
_MAX_LINE = 2000
_VERSION = linear(r"(?:^|[^\w.])(\d+\.\d+(?:\.\d+)*)(?:$|[^\w])")
#: A line about a build: "source was compiled with: 8.6.0", "the version that was used to
#: compile PyTorch (11.8)", "built against CUDA 12.1".
_BUILT = linear(
    r"\b(?:compiled|built)\s+(?:with|against|for|using)\b|\bused to (?:compile|build)\b",
    ignore_case=True,
)
#: ... and about what was found at run time: "Loaded runtime CuDNN library: 8.5.0",
#: "The detected CUDA version (12.1) mismatches".
_FOUND = linear(
    r"\b(?:loaded|found|detected|installed|runtime|mismatch(?:es|ed)?)\b", ignore_case=True
)
_PACKAGE = r"[A-Za-z][A-Za-z0-9_.-]*[A-Za-z0-9]"
_NUMBER = r"\d+(?:\.\d+)*"
#: ``accelerate>=0.20.1``, ``torch >= 2.1``: a version a message says is needed.
_REQUIRES = linear(rf"(?:^|[^\w.-])(?P<pkg>{_PACKAGE})\s*(?P<op>>=|==|~=|>)\s*(?P<ver>{_NUMBER})")
#: A ``pip freeze`` line, alone on its line: what is installed, not a requirement.
_FREEZE_LINE = linear(rf"^\s*(?P<pkg>{_PACKAGE})\s*==\s*v?(?P<ver>{_NUMBER})(?:\+[\w.]+)?\s*$")
#: Installed versions as pip and users print them: ``accelerate Version: 0.25.0`` (pip show),
#: ``Requirement already satisfied: x in /site-packages (0.25.0)``, a ``pip list`` row (a
#: local build suffix kept out: ``torch   2.1.2+cu121``), a ``pip freeze`` line
#: (``accelerate==0.23.0`` alone on its line), an installed package's metadata folder
#: (``site-packages/torch-2.1.0.dist-info``), and a message's own words ("the versions of
#: TensorFlow you are currently using is 2.8.0", "your currently installed version of Keras
#: is Keras 3", "You are using pip version 21.2.4", "your triton version is 3.1.0").
_INSTALLED = (
    linear(rf"(?P<pkg>{_PACKAGE})\s+Version:\s*v?(?P<ver>{_NUMBER})", ignore_case=True),
    linear(
        rf"Requirement already satisfied:\s*(?P<pkg>{_PACKAGE})[^\n(]*\((?P<ver>{_NUMBER})\)",
        ignore_case=True,
    ),
    linear(rf"^\s*(?P<pkg>{_PACKAGE})\s{{2,}}v?(?P<ver>{_NUMBER})(?:\+[\w.]+)?\s*$"),
    _FREEZE_LINE,
    linear(
        rf"(?:site|dist)-packages[/\\](?P<pkg>{_PACKAGE})-(?P<ver>{_NUMBER})"
        r"(?:\.?(?:post|dev|rc)\d+)?(?:\+[\w.]+)?"
        r"\.(?:dist|egg)-info\b"
    ),
    linear(
        rf"\bversions? of (?P<pkg>{_PACKAGE}) you are (?:currently )?using (?:is|are):? "
        rf"v?(?P<ver>{_NUMBER})"
        rf"|\binstalled version of (?P<pkg2>{_PACKAGE}) is (?:{_PACKAGE} )?v?(?P<ver2>{_NUMBER})"
        rf"|\byou are (?:currently )?using (?P<pkg3>{_PACKAGE}) (?:version )?v?(?P<ver3>{_NUMBER})"
        rf"|\byour (?P<pkg4>{_PACKAGE}) version is:? v?(?P<ver4>{_NUMBER})",
        ignore_case=True,
    ),
)
#: ``Successfully installed accelerate-0.25.0 peft-0.7.1``: pip's name-version list.
_SUCCESSFULLY = linear(r"Successfully installed\s+(?P<list>[^\n]+)", ignore_case=True)
_WHEEL = linear(rf"^(?P<pkg>{_PACKAGE})-v?(?P<ver>{_NUMBER})$")
#: A frame line or log line that runs code without autograd.
_NO_AUTOGRAD = linear(r"\b(?:no_grad|inference_mode)\s*\(|@torch\.(?:no_grad|inference_mode)\b")
#: A serving engine's log of graph capture: "Capturing cudagraphs for decoding",
#: "Capturing the model for CUDA graphs", "CUDA graph capture".
_CUDA_GRAPHS = linear(
    r"\bcaptur\w*\b[^\n]{0,40}\bcuda ?graphs?\b|\bcuda ?graphs?\b[^\n]{0,20}\bcaptur",
    ignore_case=True,
)
#: Code or log lines that load trained weights, in a library's usual words: a loader call or
#: frame (``from_pretrained``, ``load_state_dict``, ``torch.load``, Keras ``load_weights`` /
#: ``load_model``, ``safe_open``, a hub download), a loader's log ("Loading checkpoint
#: shards", "loaded weights from", "not initialized from the model checkpoint"), or the name
#: of a weights file (``.safetensors``, ``.ckpt``, ``.pth``, ``.pt``, ``.gguf``, ``.h5``).
_LOADS_WEIGHTS = linear(
    r"pretrained"
    r"|\b(?:load_state_dict|load_weights|load_model|load_checkpoint|safe_open|hf_hub_download"
    r"|snapshot_download)\w*"
    r"|\btorch\.load\b|\bsafetensors\b|\bmodel checkpoint\b|\bcheckpoint shards\b"
    r"|\bload(?:s|ed|ing)?\b[^\n]{0,60}?\b(?:checkpoints?|state[_ ]?dicts?|weights)\b"
    r"|[\w-]\.(?:safetensors|ckpt|pth|pt|gguf|h5)\b|\bpytorch_model[\w.-]*\.bin\b",
    ignore_case=True,
)
#: A build that says it has no GPU support: "compiled without GPU support" (bitsandbytes),
#: "Torch not compiled with CUDA enabled", "built without CUDA".
_NO_GPU_BUILD = linear(
    r"\b(?:compiled|built)\s+without\s+(?:GPU|CUDA|ROCm)\b"
    r"|\bnot\s+(?:compiled|built)\s+with\s+(?:GPU|CUDA|ROCm)\b",
    ignore_case=True,
)
#: A loader that says it took its CPU-only binary because no GPU one fits: bitsandbytes'
#: "CUDA SETUP: Defaulting to libbitsandbytes_cpu.so..." and "Loading binary
#: .../libbitsandbytes_cpu.so" (the state its later releases word "compiled without GPU
#: support"); any ``<name>_cpu`` shared library a line says it defaults or falls back to.
_CPU_BINARY_CHOSEN = linear(
    r"\b(?:default(?:s|ed|ing)?|fall(?:s|ing)?\s*back|loading\s+binary)\s+(?:to\s+)?"
    r"[^\s]{0,300}_cpu\.(?:so|dll|dylib)\b",
    ignore_case=True,
)
#: ONNX Runtime's list of the execution providers its build has ("Available providers:
#: 'AzureExecutionProvider, CPUExecutionProvider'"): a list with no GPU provider in it.
_AVAILABLE_PROVIDERS = linear(
    r"\bavailable providers\s*(?:are\s*)?:\s*(?P<list>[^\n]{1,400})", ignore_case=True
)
_PROVIDER = linear(r"\b(\w+)ExecutionProvider\b")
#: Providers that run on the host, not on an accelerator.
_HOST_PROVIDERS = frozenset({"cpu", "azure"})
#: A model that is quantized already: a checkpoint named for its format
#: (``Mixtral-8x7B-Instruct-v0.1-GPTQ``, ``-AWQ``, ``.Q4_K_M.gguf``, ``-bnb-4bit``, ``-int4``),
#: a bitsandbytes load (``load_in_4bit=True``, ``BitsAndBytesConfig(``) or an engine flag
#: (``--quantization awq``, ``--quantize gptq``, ``quantization="fp8"``).
_QUANTIZED = linear(
    r"(?:^|[^A-Za-z0-9])(?:GPTQ|AWQ|GGUF|EXL2|bnb-[48]bit|int[48]|nf4|fp8)(?:$|[^A-Za-z0-9])"
    r"|[-_.](?:[48]bit|Q[2-8]_K(?:_[SML])?|Q[48]_0)(?:$|[^A-Za-z0-9])"
    r"|\bload_in_[48]bit\s*=\s*True|\bBitsAndBytesConfig\s*\("
    r"|--quantiz(?:e|ation)[ =]+\w|\bquantization\s*=\s*[\"']\w",
    ignore_case=True,
)
#: A warning line as loggers and Python print one: ``UserWarning:`` (after ``file.py:12:``),
#: ``WARNING 08-15 21:06:16 config.py:1514]``, glog's ``W0922 07:46:01``, ``[W] [TRT]``,
#: ``[W:onnxruntime:...]``, a timestamp then ``WARNING``.
_WARNING_LINE = linear(
    r"^\s*(?:\S+:\d+:\s*)?[A-Z]\w*Warning\b|^\s*Warning\b"
    r"|^[\d\-:,. T\[\]]*WARN(?:ING)?\b|\]\s*WARN(?:ING)?\b|^\s*W\d{4}\s|\[W(?:ARN(?:ING)?)?\]|\[W:"
    r"|^[\d\-:,. T]*:\s*W\s+\S+\.(?:cc|cpp|h|py):\d"
)
#: An error line: a traceback's start, ``ValueError:`` / ``torch.OutOfMemoryError:`` at the
#: start, glog's ``E0922``, ``[E] [TRT]``, ``[E:onnxruntime:...]``, a timestamp or a
#: ``[Logger]`` tag then ``ERROR``.
_ERROR_LINE = linear(
    r"^\s*Traceback \(most recent call last\)"
    r"|^\s*(?:[\w.]+\.)?(?:[A-Z]\w*)?(?:Error|Exception)\b"
    r"|^[\d\-:,. T\[\]]*(?:ERROR|FATAL|CRITICAL)\b|\]\s*(?:ERROR|FATAL)\b"
    r"|^\s*E\d{4}\s|\[E(?:RROR)?\]|\[E:|^[\d\-:,. T]*:\s*[EF]\s+\S+\.(?:cc|cpp|h|py):\d"
)
#: Arguments an API says it rejects: ``unexpected keyword argument 'lr'``,
#: ``Argument(s) not recognized: {'lr': 0.002}``, ``Keyword argument not understood: 'x'``.
_REJECTED = (
    linear(r"unexpected keyword argument\s+['\"`](?P<name>\w+)['\"`]", ignore_case=True),
    linear(r"argument\s+not understood:?\s+['\"`](?P<name>\w+)['\"`]", ignore_case=True),
)
_REJECTED_SET = linear(
    r"(?:not recognized|unrecognized|unexpected|unknown)\s+(?:keyword\s+)?"
    r"arguments?\)?:?\s*\{(?P<names>[^}\n]{1,500})\}",
    ignore_case=True,
)
_REJECTED_SET_ALT = linear(
    r"argument\(s\)\s+not recognized:?\s*\{(?P<names>[^}\n]{1,500})\}", ignore_case=True
)
_QUOTED_KEY = linear(r"['\"](\w+)['\"]\s*:")


def _lines(texts: Iterable[str]) -> list[str]:
    lines: list[str] = []
    for text in texts:
        lines.extend(line[:_MAX_LINE] for line in text.splitlines()[:_MAX_LINES])
    return lines[: _MAX_LINES * 4]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def _package_name(name: str) -> str:
    """pip's normalised project name (``Tf_Keras`` -> ``tf-keras``)."""
    return name.lower().replace("_", "-").replace(".", "-")


def requirements(lines: Sequence[str]) -> list[tuple[str, str, tuple[int, ...]]]:
    """(package, operator, version) for each version requirement the lines state."""
    found = []
    for line in lines:
        for match in _REQUIRES.finditer(line):
            found.append(
                (_package_name(match.group("pkg")), match.group("op"), _version(match["ver"]))
            )
    return found


def installed_versions(lines: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """The package versions the lines show installed, by pip's normalised name."""
    found: dict[str, tuple[int, ...]] = {}
    for line in lines:
        for pattern in _INSTALLED:
            for match in pattern.finditer(line):
                groups = match.groupdict()
                pairs = ((groups.get(f"pkg{n}"), groups.get(f"ver{n}")) for n in ("", 2, 3, 4))
                package, version = next(((p, v) for p, v in pairs if p and v), ("", ""))
                if package:
                    found[_package_name(package)] = _version(version)
        for match in _SUCCESSFULLY.finditer(line):
            for item in match.group("list").split()[:100]:
                if wheel := _WHEEL.match(item):
                    found[_package_name(wheel.group("pkg"))] = _version(wheel.group("ver"))
    return found


def _meets(installed: tuple[int, ...], op: str, required: tuple[int, ...]) -> bool:
    if op == "==":
        return installed == required
    if op == ">":
        return installed > required
    return installed >= required  # >= and ~= (at least the floor)


def _built_for_other_version(lines: Sequence[str]) -> bool:
    """A line says something was built with one version and found another at run time."""
    return any(
        _BUILT.search(line)
        and _FOUND.search(line)
        and len({m.group(1) for m in _VERSION.finditer(line)}) >= 2
        for line in lines
    )


def _gpu_support_not_built(lines: Sequence[str]) -> bool:
    """A line says the installed build has no GPU support, or lists only host providers."""
    for line in lines:
        if _NO_GPU_BUILD.search(line) or _CPU_BINARY_CHOSEN.search(line):
            return True
        for match in _AVAILABLE_PROVIDERS.finditer(line):
            names = {m.group(1).lower() for m in _PROVIDER.finditer(match.group("list"))}
            if names and names <= _HOST_PROVIDERS:
                return True
    return False


def _outcome_facts(texts: Sequence[str]) -> set[str]:
    """``error-raised`` when the message opens with an error line; ``warning-only`` when it
    opens with a warning line and no line of the message, frames or logs is an error."""
    message = next((line for line in _lines(texts[:1]) if line.strip()), "")
    if _ERROR_LINE.search(message):
        return {"error-raised"}
    if _WARNING_LINE.search(message) and not any(
        _ERROR_LINE.search(line) for line in _lines(texts)
    ):
        return {"warning-only"}
    return set()


def environment_facts(texts: Sequence[str]) -> set[str]:
    """The environment facts the texts (message, frame lines, log lines) show."""
    lines = _lines(texts)
    facts: set[str] = set()
    if _built_for_other_version(lines):
        facts.add("library-version-mismatch")
    installed = installed_versions(lines)
    stated = [line for line in lines if not _FREEZE_LINE.search(line)]
    if any(
        package in installed and _meets(installed[package], op, version)
        for package, op, version in requirements(stated)
    ):
        facts.add("required-version-installed")
    if any(_NO_AUTOGRAD.search(line) for line in lines):
        facts.add("autograd-off-in-code")
    if any(_CUDA_GRAPHS.search(line) for line in lines):
        facts.add("cuda-graphs-captured")
    if any(_LOADS_WEIGHTS.search(line) for line in lines):
        facts.add("pretrained-weights-loaded")
    if _gpu_support_not_built(lines):
        facts.add("gpu-support-not-built")
    if any(_QUANTIZED.search(line) for line in lines):
        facts.add("model-already-quantized")
    facts |= _outcome_facts(texts)
    return facts


def rejected_arguments(message: str) -> list[str]:
    """The argument names the message says an API rejected (unexpected, not recognized)."""
    names: list[str] = []
    for line in _lines([message]):
        for pattern in _REJECTED:
            names.extend(match.group("name") for match in pattern.finditer(line))
        for pattern in (_REJECTED_SET, _REJECTED_SET_ALT):
            for match in pattern.finditer(line):
                names.extend(_QUOTED_KEY.findall(match.group("names")))
    return list(dict.fromkeys(names))[:20]
