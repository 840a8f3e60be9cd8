"""Whether an answer's target is exactly what the message shows failing.

"Flatten the input to shape [238]" when the message says "Expected [-1, 238], got [238]"; "import
Adam from tensorflow.python.keras.optimizers" when a ``<tensorflow.python.keras.optimizers.Adam
object>`` is what could not be interpreted; "prepend the cuDNN 8.4.1 folder to
LD_LIBRARY_PATH" when the runtime 8.4.1 is the mismatch; "set ``dispatch_batches=False``"
when the call rejects that argument; ``device_map='cpu'`` when modules
dispatched to the CPU are the failure: each keeps (or restores) the failing state, from any
author. What the message shows is read by :mod:`.failing_values`; here the answer's own
words are read, without the clauses it turns down (:func:`.negated_clauses.turned_down`) and
not where a word marks the value as the old one ("from [238] to [1, 238]", "in place of
8.4.1", "instead of"). The complaints are phrased for the LLM, which is re-asked with them.

Every pattern is RE2 (:mod:`ingest.linear_regex`) over at most :data:`_MAX_ACTION` characters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ingest.linear_regex import compile as linear
from rca.suggestion.failing_values import FailingValues, read_failing_values, same_shape
from rca.suggestion.incident_setting import log_texts
from rca.suggestion.negated_clauses import turned_down
from rca.suggestion.old_mentions import before_mention
from rca.suggestion.step_options import options_set_by

if TYPE_CHECKING:
    from rca.suggestion.context import AnalysisContext

__all__ = ["failing_value_violations", "reused_failing"]

_MAX_ACTION = 2000
#: Right before a mention: it names the old value (:mod:`.old_mentions`), a stated one ("is
#: [238]"), or what the target is built for or matches ("the framework release built for
#: CuDNN 7.3.1"), not the target itself.
_OLD = before_mention(
    *("preference", "source", "comparison", "preferred-over", "negation", "current-state"),
    *("judged-old", "state-verbs", "built-for", "capability"),
    then=r"(?:\s+(?:the|a|an))?"
    r"(?:\s+(?:input\s+|tensor\s+)?(?:shape|size|dims|version|release))?\s*[=:]?\s*$",
)
#: Before a shape the answer makes the input: not a model configuration's ``dims:`` field
#: (Triton's config.pbtxt leaves the batch axis out of ``dims``, so [238] there is right).
_SHAPE_TARGET = linear(
    r"(?:\b(?:to|as|into|with|of|shape|size)\s*[=:]?\s*|\.(?:reshape|view)\(\s*)"
    r"(?P<dims>[\[(]\s*-?\d[-\d,\s]{0,60}[\])]|-?\d+(?:\s*,\s*-?\d+){0,7}\s*\))"
)
_SHAPE_VERB = linear(
    r"\b(?:reshape|flatten|resize|send|pass|feed|make|convert|change|squeeze|view|give|provide"
    r"|build|create|use|set)\b",
    ignore_case=True,
)
_IMPORT_PROSE = linear(
    r"\bimport\s+`?(?P<name>[A-Za-z_]\w*)`?\s+from\s+`?(?P<module>[\w.]+)", ignore_case=True
)
_IMPORT_CODE = linear(r"\bfrom\s+(?P<module>[\w.]+)\s+import\s+(?P<names>\w+(?:\s*,\s*\w+)*)")
_DOTTED = linear(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_VERSION = linear(r"\d+(?:\.\d+)+|\(\s*\d+(?:\s*,\s*\d+)+\s*\)")
_WORD = linear(r"[A-Za-z0-9]+")
#: Characters a release may stand after the library's name and still be its own
#: ("cuDNN 8.4.1", "libcudnn8=8.4.1", "jaxlib==0.3.25", "cuDNN runtime 8.4.1").
_NEAR = 12
#: The answer makes the callee accept the argument: a ``def`` signature, an override.
_ACCEPTS = linear(
    r"\bdef\s+\w+\s*\(|\*\*kwargs\b|\b(?:signature|override|overrides|overridden|accept|accepts)\b",
    ignore_case=True,
)
#: After an old spelling: what it becomes ("`auto_select_gpus=True` becomes `devices="auto"`").
_BECOMES = linear(
    r"[^\s,;.]{0,30}\s*(?:->|→|=>|\b(?:becomes|turns\s+into|is\s+replaced\s+by|is\s+now)\b)",
    ignore_case=True,
)
_REPLACE_BEFORE = linear(r"\b(?:replace|rename|swap|change)\s+[`'\"]?$", ignore_case=True)
_PACKAGE_MOVE = linear(
    r"\b(?:upgrade|downgrade|pin|install|update|roll\s+back|revert|go\s+back)\b", ignore_case=True
)
#: Verbs of taking something into use, and of taking it out, for a release named.
_ADDING = frozenset(
    {"install", "prepend", "add", "use", "point", "pin", "load", "put", "set", "keep", "copy"}
    | {"link", "symlink", "export", "downgrade", "reinstall", "switch", "append", "move", "revert"}
)
_REMOVING = frozenset(
    {"remove", "uninstall", "delete", "drop", "replace", "upgrade", "unset", "purge", "exclude"}
    | {"strip", "update", "clear"}
)


def _blanked(action: str) -> str:
    """The action with the clauses it turns down blanked out (positions kept)."""
    text = action[:_MAX_ACTION]
    for start, end in turned_down(text):
        text = text[:start] + " " * (end - start) + text[end:]
    return text


def _old(text: str, at: int) -> bool:
    return _OLD.search(text[max(0, at - 40) : at].rstrip(" `'\"([")) is not None


def _shapes(text: str, shown: FailingValues) -> list[str]:
    reasons: list[str] = []
    for match in _SHAPE_TARGET.finditer(text):
        start = match.start("dims")
        clause = text[: match.start()].rsplit(";", 1)[-1]
        if _old(text, start) or not _SHAPE_VERB.search(clause + match.group(0)):
            continue
        raw = match.group("dims").strip("()[] ")
        try:
            dims = tuple(None if int(d) < 0 else int(d) for d in raw.split(",") if d.strip())
        except ValueError:
            continue
        for shape in shown.shapes:
            if dims and same_shape(dims, shape.actual) and not same_shape(dims, shape.expected):
                reasons.append(
                    f"the message shows shape {_show(shape.actual)} is the one it rejects (it"
                    f" expects {_show(shape.expected)}): do not make the input that shape"
                )
    return reasons


def _show(dims: tuple[int | None, ...]) -> str:
    return "[" + ", ".join("-1" if d is None else str(d) for d in dims) + "]"


def _same_module(said: str, failing: str) -> bool:
    """The answer's module is the failing one or a dotted package of it below the top one."""
    return said == failing or (failing.startswith(said + ".") and said.count(".") >= 2)


def _objects(text: str, shown: FailingValues) -> list[str]:
    said: list[tuple[str, str, int]] = []
    for match in _IMPORT_PROSE.finditer(text):
        said.append((match.group("module").rstrip("."), match.group("name"), match.start()))
    for match in _IMPORT_CODE.finditer(text):
        module = match.group("module").rstrip(".")
        said += [(module, name.strip(), match.start()) for name in match["names"].split(",")]
    for match in _DOTTED.finditer(text):
        module, _, name = match.group(0).rpartition(".")
        said.append((module, name, match.start()))
    reasons: list[str] = []
    for failing in shown.objects:
        for module, name, at in said:
            if (
                name == failing.name
                and _same_module(module, failing.module)
                and not _old(text, at)
                and _verb_before(text, at) not in _REMOVING
            ):
                reason = (
                    f"the message shows a {failing.path} object is what fails: use {failing.name}"
                    " from the library the rest of the code uses, not from that module"
                )
                if reason not in reasons:
                    reasons.append(reason)
    return reasons


def _verb_before(text: str, at: int) -> str:
    """The last verb of taking into or out of use before ``at`` in its clause ("" if none)."""
    clause = text[:at].replace(";", ".").rsplit(". ", 1)[-1]
    words = [word.lower() for word in _WORD.findall(clause)]
    return next((word for word in reversed(words) if word in _ADDING | _REMOVING), "")


def _norm(word: str) -> str:
    return "".join(_WORD.findall(word)).lower()


def _release(text: str, shown: FailingValues) -> list[str]:
    release = shown.release
    if release is None:
        return []
    running = tuple(int(n) for n in _WORD.findall(release.running) if n.isdigit())
    library = _norm(release.library)
    for clause in text.replace(";", ".").split(". "):
        if library not in _norm(clause):
            continue
        versions = list(_VERSION.finditer(clause))
        named_at = [clause.lower().rfind(release.library.lower(), 0, m.start()) for m in versions]
        near = [
            at >= 0 and m.start() - at <= len(release.library) + _NEAR
            for at, m in zip(named_at, versions, strict=True)
        ]
        if not all(near):
            continue  # another package moves too ("jax==0.3.25 jaxlib==0.3.25"): a matched pair
        for match, named in zip(versions, named_at, strict=True):
            numbers = tuple(int(n) for n in _WORD.findall(match.group(0)))
            # "built for CuDNN 7.3.1": the word before the library's name counts too.
            if numbers != running or _old(clause, match.start()) or _old(clause, named):
                continue
            verb = _verb_before(clause, match.start())
            if verb in _ADDING:
                return [
                    f"the message shows {release.library} {release.running} is the release that"
                    f" fails against {release.built}: do not {verb} {release.running};"
                    f" make one that meets {release.built} the one that loads"
                ]
    return []


def _arguments(text: str, shown: FailingValues) -> list[str]:
    """An argument the call rejects, set to a value again (not with a package move, which
    may bring a release that accepts it, nor in a signature made to accept it)."""
    if not shown.arguments or _PACKAGE_MOVE.search(text) or _ACCEPTS.search(text):
        return []
    return [
        f"the message shows {option.name} is an argument the call rejects: passing it again"
        " fails the same way; remove or rename it, or move to a release that accepts it"
        for option in options_set_by(text)
        if option.key in shown.arguments
        and option.how == "set"
        and option.value is not None
        and not _replaced(text, option.name)
    ]


def _replaced(text: str, name: str) -> bool:
    """Every mention of ``name`` is what the answer replaces: "`x=True` becomes `y`",
    "replace `x=True` with ...", "instead of `x=True`" (the old spelling of a renamed flag)."""
    spots: list[int] = []
    at = text.find(name)
    while at >= 0 and len(spots) < 16:
        spots.append(at)
        at = text.find(name, at + 1)
    return bool(spots) and all(
        _old(text, spot)
        or _REPLACE_BEFORE.search(text[max(0, spot - 40) : spot]) is not None
        or _BECOMES.match(text, spot + len(name)) is not None
        for spot in spots
    )


def _placements(text: str, shown: FailingValues) -> list[str]:
    if not shown.placements:
        return []
    options = options_set_by(text)
    if {option.key for option in options} & shown.placement_options:
        return []  # the message's own way to place modules there anyway
    for option in options:
        value = str(option.value or "").strip("`'\"{}: ").lower()
        if option.how in ("set", "change") and "device" in option.key and value in shown.placements:
            return [
                f"the message shows modules placed on the {value} are the failure: {option.name}"
                f"={option.value} puts them there"
            ]
    return []


def reused_failing(action: str, shown: FailingValues) -> list[str]:
    """Why the answer's target is what the message shows failing (empty: it is not, or the
    message shows nothing failing)."""
    text = _blanked(action or "")
    return [
        *_shapes(text, shown),
        *_objects(text, shown),
        *_release(text, shown),
        *_arguments(text, shown),
        *_placements(text, shown),
    ]


def failing_value_violations(action: str, ctx: AnalysisContext) -> list[str]:
    """:func:`reused_failing` against what the incident's message and logs show failing."""
    return reused_failing(action, read_failing_values(ctx.message or "", log_texts(ctx.logs)))
