"""Pure checks that decide whether a suggestion can be trusted, and what to tell its author.

Every suggestion is stored with this record, so a user can see why it is (or is not)
trustworthy; the complaints are phrased for the LLM, which is re-asked with them. The
heuristics lean lenient on what counts as a code location or a dimension: a false alarm
costs a re-ask and maybe the offline fallback, while what we want to catch is a fabricated
file:line or tensor size.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ingest.parsing.frames import Frame
from ingest.parsing.shapes import ShapeDiff, incompatibility

if TYPE_CHECKING:
    from rca.suggestion.context import AnalysisContext

__all__ = [
    "IMPERATIVE_VERBS",
    "MAX_ACTION_CHARS",
    "MAX_REASON_CHARS",
    "MAX_UNKNOWN_DIM_SHARE",
    "MIN_STACK_PATH_MATCH",
    "Validation",
    "code_locations",
    "format_ok",
    "grounded",
    "named_dims",
    "shape_incompatibility",
    "stack_path_match",
    "unknown_dim_share",
    "unsourced_urls",
    "urls_in",
    "validate",
]

MAX_ACTION_CHARS = 200
MAX_REASON_CHARS = 400
MIN_STACK_PATH_MATCH = 0.92
MAX_UNKNOWN_DIM_SHARE = 0.3
#: Texts are scanned up to this length; a valid answer is far shorter (200 + 400 chars).
MAX_SCAN_CHARS = 4000


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


IMPERATIVE_VERBS = _words(
    """
    accumulate add adjust align allocate apply attach authenticate avoid bound build bump
    call cap cast change check choose clamp clean clear clip clone collate combine compile
    compute configure convert copy correct create declare decrease delete detach disable
    download downgrade drop enable ensure evict exclude export feed fetch filter fine-tune
    fix flatten free freeze give guard ignore import increase initialize initialise inject
    install keep kill launch limit load lower make map match merge migrate mirror mount move
    normalize normalise offload open order pad pass patch permute pin place point pre-download
    prefer preprocess provide prune put quantize raise re-download re-export read reboot
    rebuild recompute reduce regenerate register reinstall release reload remap remove rename
    reorder repeat replace request reset reshape resize restart restore resume retrain retry
    return reuse revert rewrite run save scale send serve set shard shrink skip slice sort
    specify split squeeze start stop store stream strip sum switch sync tie tokenize train
    transpose trim truncate tune unfreeze uninstall unsqueeze unwrap update upgrade use
    validate verify view warm wrap
    """
)

# --------------------------------------------------------------------------- format


_SENTENCE_BREAK = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\betc)[.!?]\s+[A-Z]")


def format_ok(action: Any, reason: Any) -> tuple[bool, str]:
    """Tell whether the answer has the shape users expect: "<Verb> <object>." plus a reason.

    Returns ``(ok, problem)``; ``problem`` is empty when ``ok``.
    """
    if not isinstance(action, str) or not action.strip():
        return False, "action is missing: give one imperative sentence"
    if not isinstance(reason, str) or not reason.strip():
        return False, "reason is missing: give the technical basis in one or two sentences"
    action, reason = action.strip(), reason.strip()
    if len(action) > MAX_ACTION_CHARS:
        return False, f"action is {len(action)} characters; keep it within {MAX_ACTION_CHARS}"
    if len(reason) > MAX_REASON_CHARS:
        return False, f"reason is {len(reason)} characters; keep it within {MAX_REASON_CHARS}"
    head, _, rest = action.lstrip("`*_\"' ").partition(" ")
    first = head.strip(",.:;`*_\"'").lower()
    if first not in IMPERATIVE_VERBS:
        return False, f"action must start with an imperative verb (like Set, Reduce), not {first!r}"
    if not re.search(r"[A-Za-z0-9`]", rest):
        return False, "action needs an object: say what to act on"
    if _SENTENCE_BREAK.search(action.rstrip(".!? ")):
        return False, "action must be a single sentence; put the explanation in reason"
    return True, ""


def grounded(slug: Any, allowed_slugs: Iterable[str]) -> bool:
    """The cited runbook was one of those given to the provider (no invented citations)."""
    return isinstance(slug, str) and bool(slug.strip()) and slug.strip() in set(allowed_slugs)


# --------------------------------------------------------------------------- URLs

# What a reader (or a chat client) could follow: a scheme URL, a "www." host, a script or
# data URI, or a bare host under a common public suffix. Texts are cut into tokens first and
# each token is looked at once, so the cost stays linear in the text whatever it holds.
_TOKEN_BREAK = re.compile(r"[\s()\[\]<>\"'`|,;]+")
_URL_START = re.compile(
    r"(?i)[a-z][a-z0-9+.-]{0,30}://"
    r"|(?<![a-z0-9])(?:www\.(?=\w)|(?:javascript|vbscript|data|file):(?=\S))"
)
_HOST_LABEL = re.compile(r"(?i)[a-z0-9-]+")
#: Suffixes a bare ``name.suffix`` must end with to count as a host; ``io``/``ai`` are left
#: out on purpose: ``torchvision.io`` and ``tf.io`` are Python modules, not sites.
_PUBLIC_SUFFIXES = frozenset(
    ("com", "net", "org", "info", "biz", "xyz", "top", "site", "online", "ru", "cn", "tk")
    + ("example",)
)
_URL_TRAILER = ".,;:!?*_~"


def _bare_host(token: str) -> bool:
    """``evil.com`` or ``evil.com:8080/x``: dot-separated labels ending in a public suffix."""
    host, _, port = token.split("/", 1)[0].partition(":")
    labels = host.split(".")
    return (
        len(labels) >= 2
        and labels[-1].lower() in _PUBLIC_SUFFIXES
        and all(_HOST_LABEL.fullmatch(label) for label in labels)
        and (not port or port.isdigit())
    )


def urls_in(text: str) -> list[str]:
    """The URLs a text carries, in order, without trailing sentence punctuation."""
    if not isinstance(text, str):
        return []
    found: list[str] = []
    for token in _TOKEN_BREAK.split(text[:MAX_SCAN_CHARS]):
        token = token.rstrip(_URL_TRAILER)
        start = _URL_START.search(token) if ":" in token or "." in token else None
        url = token[start.start() :] if start else token if _bare_host(token) else ""
        if url and url not in found:
            found.append(url)
    return found


def unsourced_urls(text: str, runbook_texts: Iterable[str]) -> list[str]:
    """URLs in ``text`` that none of ``runbook_texts`` contains (case-insensitive).

    An LLM that read attacker-written incident text may be steered into sending the
    engineer to the attacker's site; a URL is only trusted when our own runbook has it.
    """
    corpus = "\n".join(runbook_texts).lower()
    return [url for url in urls_in(text) if url.lower() not in corpus]


def _cited_runbook_texts(slug: Any, ctx: AnalysisContext) -> list[str]:
    """What the cited runbook showed the provider: its chunks and remediation steps.

    Past-fix evidence contributes its runbook's steps but not its text, which an LLM wrote.
    """
    texts: list[str] = []
    for item in ctx.evidence:
        if not isinstance(slug, str) or item.slug != slug.strip():
            continue
        texts.extend(item.remediation)
        if item.kind == "runbook":
            texts.append(item.text)
    return texts


# --------------------------------------------------------------------------- code locations

_EXTENSIONS = r"py|pyx|ipynb|java|kt|scala|cc|cpp|cu|go|rs"
_FILE_REF = re.compile(
    rf"(?<![\w/.\\-])(?P<file>(?:[A-Za-z]:)?[/\\]?(?:[\w.-]+[/\\])*[\w-][\w.-]*\.(?:{_EXTENSIONS}))"
    rf"(?::(?P<tail>\d+|[A-Za-z_]\w*))?(?![\w(])"
)
_FILE_SUFFIX = re.compile(rf"\.(?:{_EXTENSIONS})$")
_NAME = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
# "function foo", "method Foo.bar", "def foo": always meant as a place in the code.
_CUED_BY_KIND = re.compile(rf"\b(?:function|method|frame|def)\s+`?(?P<name>{_NAME})(?:\(\))?`?")
# "in foo.bar", "inside train_step()": a location unless it is a library API.
_CUED_BY_PLACE = re.compile(
    rf"\b(?:in|inside|within|at)\s+(?:the\s+)?`?(?P<name>{_NAME}\(\)|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)`?"
)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
#: Roots of names that are library APIs or everyday variables, not places in the user's code.
_API_ROOTS = _words(
    """
    torch nn F tf keras np numpy jax jnp transformers peft accelerate vllm onnx onnxruntime
    ort os sys math re json pathlib model self tokenizer trainer optimizer scaler x y tensor
    inputs outputs out batch img image Image PIL cv2 datasets torchvision transforms timm
    bitsandbytes bnb deepspeed optimum triton tritonclient grpc pip cuda amp dist mp
    multiprocessing huggingface_hub sentence_transformers diffusers pipe pipeline config args
    loss data dataset dataloader loader logits labels weights layer module net safetensors
    """
)


def code_locations(text: str) -> list[str]:
    """The code locations a suggestion names, in order of appearance, without duplicates.

    Files (``model.py``, ``src/model.py:123``, ``model.py:forward``) always count; function
    and dotted names count when the text places something in them ("in ``train_step()``",
    "function ``forward``") and they are not an API of a known library (``torch.no_grad()``).
    """
    if not isinstance(text, str):
        return []
    text = text[:MAX_SCAN_CHARS]
    found: list[tuple[int, str]] = []
    for match in _FILE_REF.finditer(text):
        found.append((match.start(), match.group(0)))
    code_spans = [m.span() for m in _CODE_SPAN.finditer(text)]
    for pattern in (_CUED_BY_KIND, _CUED_BY_PLACE):
        for match in pattern.finditer(text):
            if any(start <= match.start() < end for start, end in code_spans):
                continue  # "for k, v in sd.items()" is code, not prose placing something
            name = match.group("name")
            bare = name.removesuffix("()")
            if _FILE_SUFFIX.search(bare) or bare.split(".")[0] in _API_ROOTS:
                continue
            found.append((match.start("name"), name))
    locations: list[str] = []
    for _, name in sorted(found):
        if name not in locations:
            locations.append(name)
    return locations


def _norm_path(path: str) -> str:
    return path.replace("\\", "/")


def _file_matches(frame_file: str, named: str) -> bool:
    frame_file, named = _norm_path(frame_file), _norm_path(named)
    return bool(frame_file) and (frame_file == named or frame_file.endswith("/" + named))


def _function_matches(frame: Frame, name: str) -> bool:
    function = frame.get("function") or ""
    return bool(function) and (function == name or function.endswith("." + name))


def _location_in_frames(location: str, frames: list[Frame]) -> bool:
    file_match = _FILE_REF.fullmatch(location)
    if file_match:
        tail = file_match.group("tail")
        for frame in frames:
            if not _file_matches(frame.get("filename") or "", file_match.group("file")):
                continue
            if tail is None:
                return True
            if tail.isdigit() and frame.get("lineno") == int(tail):
                return True
            if not tail.isdigit() and _function_matches(frame, tail):
                return True
        return False
    name = location.removesuffix("()")
    parts = name.split(".")
    for frame in frames:
        module = frame.get("module") or ""
        if _function_matches(frame, parts[-1]):
            return True
        if module and (name == module or name == f"{module}.{frame.get('function')}"):
            return True
    return False


def _unmatched_locations(text: str, frames: list[Frame]) -> tuple[list[str], list[str]]:
    named = code_locations(text)
    return named, [loc for loc in named if not _location_in_frames(loc, frames)]


def stack_path_match(text: str, frames: list[Frame]) -> float:
    """Share of the code locations named in ``text`` that exist in the frames (1.0 if none).

    A ``file:line`` must match a frame's file and line; ``file:function`` its file and
    function; a function or dotted name must match a frame's function or module.
    """
    named, missing = _unmatched_locations(text, frames)
    if not named:
        return 1.0
    return round((len(named) - len(missing)) / len(named), 4)


# --------------------------------------------------------------------------- dimensions


def shape_incompatibility(diffs: Iterable[ShapeDiff]) -> float:
    """How far the actual shapes are from the expected ones: the worst diff, 0.0 with none."""
    return max((incompatibility(diff) for diff in diffs or ()), default=0.0)


_DIM_PATTERN = r"\d+|None|-1|\?|_"
_SHAPE_LITERAL = re.compile(
    rf"[\[(]\s*(?:{_DIM_PATTERN})(?:\s*,\s*(?:{_DIM_PATTERN}))*\s*,?\s*[\])]"
    rf"|\b\d+(?:\s?[x×]\s?\d+)+\b"
)
_CUED_DIM = re.compile(
    r"\b(?:dim(?:ension)?s?|size|width|height|channels?|features?|in_features|out_features"
    r"|hidden_size|vocab(?:_size)?|seq_len|max_length|rows?|columns?)"
    r"\s*(?:of|=|:|is|to|from)?\s*(?P<n>\d+)\b(?![.,]\d)"
)
_BARE_INT = re.compile(r"(?<![\w.:/\\=-])(?P<n>\d+)(?![\w%]|[.,]\d)")
_UNIT_AFTER = re.compile(
    r"\s*(?:%|percent|ms\b|s\b|secs?\b|seconds?\b|minutes?\b|mins?\b|hours?\b|h\b|days?\b"
    r"|[KMGT]i?B\b|bytes?\b|-?bits?\b|GPUs?\b|gpus?\b|cores?\b|nodes?\b|workers?\b"
    r"|processes\b|threads\b|epochs?\b|steps?\b|times\b|x\b|retries\b|attempts\b|requests?\b"
    r"|st\b|nd\b|rd\b|th\b)",
    re.IGNORECASE,
)
_NOT_DIM_BEFORE = re.compile(
    r"(?:\b(?:version|v|release|opset|python|cuda|cudnn|driver|nccl|line|lines|port|pid|step|epoch"
    r"|rank|gpu|device|error|code|status|signal|http|errno|exit|top|attempt|retry|sm|level"
    r"|number|no)|#)\s*$",
    re.IGNORECASE,
)


def named_dims(text: str) -> set[int]:
    """Numbers in ``text`` that read as tensor dimensions.

    Shape literals (``[4, 256]``, ``4x256``) and cued numbers (``dim 512``, ``in_features=768``)
    always count; a bare number counts unless it is a version, a percentage, a line number
    after ``:``, a quantity with a unit (``8-bit``, ``2 GPUs``, ``16 GiB``), follows a word
    such as "version", "line" or "port", or is 0 or 1 (indices and flags more often than sizes).
    """
    if not isinstance(text, str):
        return set()
    text = text[:MAX_SCAN_CHARS]
    dims: set[int] = set()
    for match in _SHAPE_LITERAL.finditer(text):
        dims.update(int(n) for n in re.findall(r"(?<![-\w])\d+", match.group(0)))
    for match in _CUED_DIM.finditer(text):
        dims.add(int(match.group("n")))
    for match in _BARE_INT.finditer(text):
        number = int(match.group("n"))
        if number < 2 or len(match.group("n")) > 9:
            continue
        if _UNIT_AFTER.match(text, match.end()) or _NOT_DIM_BEFORE.search(
            text[max(match.start() - 24, 0) : match.start()]
        ):
            continue
        dims.add(number)
    return dims


def _diff_dims(diffs: Iterable[ShapeDiff]) -> set[int]:
    dims: set[int] = set()
    for diff in diffs or ():
        for dim in [*(diff.get("expected") or ()), *(diff.get("actual") or ())]:
            if isinstance(dim, int) and not isinstance(dim, bool):
                dims.add(dim)
    return dims


def unknown_dim_share(text: str, diffs: Iterable[ShapeDiff]) -> float:
    """Share of the dimensions named in ``text`` that appear in no shape of the diff.

    0.0 when the diff is empty (nothing to check against) or no dimension is named.
    """
    known = _diff_dims(diffs)
    named = named_dims(text)
    if not known or not named:
        return 0.0
    return round(len(named - known) / len(named), 4)


# --------------------------------------------------------------------------- the record


class Answer(Protocol):
    action: str
    reason: str
    runbook: str


@dataclass
class Validation:
    """The validation record stored with every suggestion and shown in the UI and API."""

    format_ok: bool
    grounded: bool
    stack_path_match: float
    shape_incompatibility: float
    unknown_dim_share: float
    ok: bool
    complaints: list[str] = field(default_factory=list)
    #: No URL in action or reason that the cited runbook does not contain.
    urls_grounded: bool = True

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def validate(draft: Answer, ctx: AnalysisContext) -> Validation:
    """Check a draft against the context it was written from; complaints say how to fix it."""
    complaints: list[str] = []
    is_formatted, problem = format_ok(draft.action, draft.reason)
    if not is_formatted:
        complaints.append(problem)
    allowed = ctx.allowed_slugs
    is_grounded = grounded(draft.runbook, allowed)
    if not is_grounded:
        complaints.append(
            f"cite exactly one runbook slug from this list: {', '.join(allowed) or '(none)'};"
            f" {draft.runbook!r} is not one of them"
        )
    text = f"{draft.action or ''}\n{draft.reason or ''}"
    named, missing = _unmatched_locations(text, ctx.frames)
    path_match = round((len(named) - len(missing)) / len(named), 4) if named else 1.0
    if path_match < MIN_STACK_PATH_MATCH:
        complaints.append(
            "name code locations only as they appear in the stack frames; not in the frames: "
            + ", ".join(missing)
        )
    foreign = unsourced_urls(text, _cited_runbook_texts(draft.runbook, ctx))
    if foreign:
        complaints.append(
            "give no URL that the cited runbook does not contain; remove: " + ", ".join(foreign)
        )
    unknown_share = unknown_dim_share(text, ctx.shape_diff)
    if unknown_share > MAX_UNKNOWN_DIM_SHARE:
        unknown = sorted(named_dims(text) - _diff_dims(ctx.shape_diff))
        complaints.append(
            "name tensor dimensions only from the shape diff "
            f"({', '.join(map(str, sorted(_diff_dims(ctx.shape_diff))))}); not in it: "
            + ", ".join(map(str, unknown))
        )
    return Validation(
        format_ok=is_formatted,
        grounded=is_grounded,
        stack_path_match=path_match,
        shape_incompatibility=shape_incompatibility(ctx.shape_diff),
        unknown_dim_share=unknown_share,
        ok=not complaints,
        complaints=complaints,
        urls_grounded=not foreign,
    )
