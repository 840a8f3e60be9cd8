"""The model's module names an incident shows missing or present, and the names a step or a
suggestion tells the user to use: ``module-named-missing``, a step-relative fact.

PEFT matches ``target_modules`` against the model's own module names: "When passing a list of
strings, either an exact match will be performed or it is checked if the name of the module
ends with any of the passed strings" (``LoraConfig`` docstring, peft/tuners/lora/config.py).
When none matches it raises "Target modules {peft_config.target_modules} not found in the base
model. Please check the target modules and try again." (``BaseTuner.inject_adapter``,
peft/tuners/tuners_utils.py; the same words since peft 0.2, and for a strict
``modules_to_save`` check in peft/utils/other.py). So every name such a list gives ends no
module name of that model, and a step that tells the user to use one of them fails the same
way: it is contradicted. A *string* target is a regex PEFT matches against the whole dotted
name ("When passing a string, a regex match will be performed"), so ``Target modules q_proj
not found`` does not say ``q_proj`` is absent: only quoted names (a list or set, or a quoted
name in another library's "Target module 'x' is not found") are read. PyTorch's own
``get_submodule`` says "LlamaForCausalLM has no attribute `transformer`" and its
``nn.Module.__getattr__`` "'LlamaModel' object has no attribute 'h'" (read only when that
frame raised it); a ``KeyError: 'name'`` counts where the failing code looks modules up
(``named_modules``, ``get_submodule``, ``_modules[...]``). These are read only as dotted
paths: a bare ``q_proj`` missing on the top-level object says nothing of the nested
``model.layers.0.self_attn.q_proj`` that PEFT matches by suffix. An attribute missing on a
module says nothing of its children: those names must equal a step's name, not end it.

The converse: the incident prints the model's modules (PyTorch's repr, ``(q_proj):
Linear(...)``, at least three of them, the last a leaf (its line closes its parentheses:
a print cut at its containers lacks every leaf's name), or a ``named_modules()`` list,
which starts with the root's empty name ``''``). A step is then contradicted when none of
the names it tells the user to use is among them (the list may be cut, so one name present
keeps it).

Which names a step or a suggestion tells the user to use: identifiers in backticks or quotes,
or bare ones with an underscore (``q_proj``, ``W_pack``), except calls (``named_modules()``),
keywords and flags (``fan_in_fan_out=True``, ``--lora_target``), options it sets
(``target_modules``, :mod:`.step_options`), and names in a clause it moves away from
("instead of `q_proj`", "replace X with", "from X to", "not X", "don't use X", "never X",
"avoid X"), and names it says are absent ("`X` is not found", "X doesn't exist"). Whether it
names modules at all counts only names of modules (:func:`module_names_to_use`): those the
incident lists or prints, those of the attention families' data, and a list's entries, not
``LoraConfig`` or ``get_peft_model``. Every pattern is linear (:mod:`ingest.linear_regex`)
over capped texts.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice

from ingest.linear_regex import compile as linear
from rca.suggestion.lora_families import load_families
from rca.suggestion.old_mentions import alternation
from rca.suggestion.step_options import options_set_by

__all__ = [
    "MODULE_FACTS",
    "ShownModules",
    "misnamed",
    "missing_module_harms",
    "module_names_to_use",
    "names_a_module",
    "names_to_use",
    "read_shown_modules",
]

MODULE_FACTS = frozenset({"module-named-missing"})
_MAX_TEXT = 20000
_MAX_ACTION = 2000
_MAX_MATCHES = 64
#: The names an action gives that are read: more than any answer lists, so none is missed.
_MAX_NAMES = 64
_MIN_REPR = 3
_MARKS = frozenset("`'\"")
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_0-9][A-Za-z0-9_]*)*"
_PEFT_MISSING = linear(
    r"Target modules?\s+(?P<names>[\[{(][^\n\]})]{0,800}[\]})]|[`'\"]" + _IDENT + r"[`'\"])"
    r"\s+(?:(?:is|are|was|were)\s+)?not\s+found"
)
_QUOTED = linear(r"['\"`](?P<name>" + _IDENT + r")['\"`]")
_SUBMODULE = linear(r"\b\w{1,120} has no attribute `(?P<name>[A-Za-z_]\w{0,120})`")
_NO_ATTRIBUTE = linear(r"'\w{1,120}' object has no attribute '(?P<name>[A-Za-z_]\w{0,120})'")
_KEY_ERROR = linear(r"KeyError:\s*['\"](?P<name>" + _IDENT + r")['\"]")
_LOOKUP = linear(r"named_modules|get_submodule|_modules\[|\.modules\(\)")
#: ``leaf``: the class's repr closes on its line (``Linear(...)``, ``SiLU()``), a layer with no
#: children; a repr whose last line opens a container was cut before its leaves.
_REPR = linear(
    r"\((?P<name>[A-Za-z_]\w{0,120})\):\s+(?P<cls>[A-Za-z_][\w.]{0,120})\("
    r"(?P<leaf>(?:[^()\n]|\([^()\n]*\))*\))?"
)
_NAMED_LIST = linear(r"[\[(]\s*(?:''|\"\")\s*,(?P<rest>[^\]\n]*)")
_NAME = linear(r"(?P<name>" + _IDENT + r")")
_LIST = linear(r"[\[{][^\[\]{}\n]{0,800}[\]}]")
#: A clause the action moves away from, up to where it says what to use instead: the words
#: of :mod:`.old_mentions` that read over a clause. Not the current-state or stated groups
#: ("the model has `q_proj`" names what to use), nor "over" ("run over the dataset").
_AWAY = linear(
    r"\b"
    + alternation(
        *("preference", "source", "comparison", "exclusion", "contrast", "removal", "dropping"),
        "replacing-verbs",
    )
    + r"\b"
    # a negation, with the verb it negates ("don't use X", "never pass X", "avoid X"); any
    # contracted one ("doesn't", "won't") too
    + r"|(?:\b"
    + alternation("negation")
    + r"|n['’]t)\b(?:\s+(?:use|set|pass|target|add|include|list)\w{0,3}\b)?",
    ignore_case=True,
)
#: What follows a name the action says is absent ("`x` is not found", "x module doesn't
#: exist"): the denial right after it (a noun for what it is between), not "X since it is not".
_DENIED = linear(
    r"^[`'\"\])}]*(?:\s+(?:module|layer|name|attribute|key)s?)?\s+"
    r"(?:(?:is|are|was|were)\s+(?:not|missing)|"
    r"(?:is|are|was|were)n['’]t|(?:does|do|did)\s+not\s+exist|(?:does|do|did)n['’]t"
    r"\s+exist|not\s+found)\b",
    ignore_case=True,
)
_AWAY_END = linear(r"[;:]|\n\s*\n|\.\s|\.$|\s(?:with|to|by|use|set|pass|into|and\s+use)\b")


@dataclass(frozen=True)
class ShownModules:
    """The module names the message says the model lacks, and those the incident prints."""

    missing: tuple[str, ...] = ()
    #: Whether each missing name is a whole module name (PEFT's list), so a longer name
    #: ending with it is missing too; an attribute or key is missing only as written.
    suffix: tuple[bool, ...] = ()
    shown: frozenset[str] = frozenset()

    def as_lines(self) -> list[str]:
        """The names in words, for the prompt: an LLM told them names no other module."""
        lines = []
        if self.missing:
            lines.append(
                "not in the model: " + ", ".join(self.missing[:12]) + " (the message says"
                " these module names are not found): never tell the user to use them"
            )
        if self.shown:
            lines.append(
                "the model's module names shown: "
                + ", ".join(sorted(self.shown)[:24])
                + ": name only modules among them"
            )
        return lines


def _quoted(text: str) -> list[str]:
    return [m.group("name") for m in islice(_QUOTED.finditer(text), _MAX_MATCHES)]


def read_shown_modules(
    texts: Sequence[str], code: Sequence[str] = (), module_getattr: bool = False
) -> ShownModules:
    """The module names ``texts`` (message, logs) say are missing or show present.
    ``code`` is the failing code's lines (a ``KeyError`` counts where they look modules up);
    ``module_getattr``: ``nn.Module.__getattr__`` raised the error."""
    missing: dict[str, bool] = {}
    shown: set[str] = set()
    lookup = any(_LOOKUP.search(line[:_MAX_ACTION]) for line in code)
    reprs: set[str] = set()
    classes: set[str] = set()
    leaf = False  # whether the last printed module line is a leaf (the print is not cut)
    for text in (t[:_MAX_TEXT] for t in texts):
        for match in islice(_PEFT_MISSING.finditer(text), _MAX_MATCHES):
            missing.update(dict.fromkeys(_quoted(match.group("names")), True))
        attribute = [_SUBMODULE] + ([_NO_ATTRIBUTE] if module_getattr else [])
        attribute += [_KEY_ERROR] if lookup else []
        for pattern in attribute:
            for match in islice(pattern.finditer(text), _MAX_MATCHES):
                if "." in match.group("name"):  # a leaf may be nested: PEFT ends names
                    missing.setdefault(match.group("name"), False)
        for match in islice(_REPR.finditer(text), _MAX_MATCHES * 8):
            reprs.add(match.group("name"))
            classes.add(match.group("cls"))
            leaf = match.group("leaf") is not None
        for match in islice(_NAMED_LIST.finditer(text), _MAX_MATCHES):
            for path in islice(_quoted(match.group("rest")), _MAX_MATCHES * 16):
                shown.update(path.split("."))
    if len(reprs) >= _MIN_REPR and leaf:
        shown |= reprs | classes
    names = tuple(missing)
    return ShownModules(names, tuple(missing[n] for n in names), frozenset(shown - set(names)))


def _away_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` moves away from what it names, in order: every such clause however long
    the text (a word inside a span already found extends nothing, so each stretch of text is
    searched once)."""
    spans: list[tuple[int, int]] = []
    for match in _AWAY.finditer(text):
        if spans and match.end() <= spans[-1][1]:
            continue
        end = _AWAY_END.search(text, match.end())
        spans.append((match.end(), end.start() if end else len(text)))
    return spans


def _inside(spans: list[tuple[int, int]], starts: list[int], at: int) -> bool:
    """Whether ``at`` is inside one of ``spans`` (in order, not overlapping; ``starts`` are
    their starts)."""
    index = bisect_right(starts, at) - 1
    return index >= 0 and at < spans[index][1]


def names_to_use(action: str) -> list[str]:
    """The module-like names ``action`` tells the user to use, in order (module docstring):
    read over the whole action, however long, up to :data:`_MAX_NAMES` names."""
    text = action.partition("Reason:")[0]
    options = {
        o.key for o in options_set_by(text) if o.value is not None or o.adds or o.how != "set"
    }
    away = _away_spans(text)
    starts = [start for start, _ in away]
    names: list[str] = []
    for match in _NAME.finditer(text):
        name, start, end = match.group("name"), match.start(), match.end()
        before, after = text[max(0, start - 2) : start], text[end : end + 2].lstrip(" ")
        marked = bool(before) and before[-1] in _MARKS and text[end : end + 1] in _MARKS
        if not (marked or "_" in name.strip("_")) or name in names:
            continue
        if len(names) >= _MAX_NAMES:
            break
        if after[:1] in ("=", "(", ":") or before.endswith(("--", ".")):
            continue  # a keyword, a call, a flag or an attribute
        if name.lower() in options or _inside(away, starts, start):
            continue
        if _DENIED.search(text[end : end + 120]):
            continue  # the action says the model lacks it
        names.append(name)
    return names


def _is_missing(name: str, shown: ShownModules) -> str:
    for missing, suffix in zip(shown.missing, shown.suffix, strict=True):
        if name == missing or (suffix and name.endswith("." + missing)):
            return missing
    return ""


def _is_shown(name: str, shown: ShownModules) -> bool:
    return name.rsplit(".", 1)[-1] in shown.shown


def names_a_module(name: str, shown: ShownModules) -> bool:
    """Whether ``name`` is a module's name, not a config class's or an API's (``LoraConfig``,
    ``get_peft_model``): the incident lists it missing or prints it, or it spells an attention
    role or is a model type's default LoRA target (:mod:`.lora_families`)."""

    return bool(_is_missing(name, shown) or _is_shown(name, shown) or load_families().kind(name))


def module_names_to_use(action: str, shown: ShownModules) -> list[str]:
    """The names ``action`` tells the user to use that name modules (:func:`names_a_module`),
    or that it lists (``target_modules=['dense', 'fc_in']``: a list's entries are targets)."""
    text = action.partition("Reason:")[0]
    listed = {n for m in islice(_LIST.finditer(text), _MAX_MATCHES) for n in _quoted(m.group(0))}
    return [n for n in names_to_use(action) if n in listed or names_a_module(n, shown)]


def misnamed(texts: Iterable[str], shown: ShownModules) -> str:
    """Why the first of ``texts`` that names modules to use names one the incident says the
    model lacks, or none it shows ("" when it does not, or none names any)."""
    if not shown.missing and not shown.shown:
        return ""
    for text in texts:
        names = module_names_to_use(text, shown) if text else []
        if not names:
            continue
        missing = [found for name in names if (found := _is_missing(name, shown))]
        if missing:
            return f"it names {', '.join(missing)}, which the message says is not in the model"
        if shown.shown and not any(_is_shown(name, shown) for name in names):
            listed = ", ".join(names[:6])
            return f"none of the names it gives ({listed}) is among the model's modules shown"
        return ""
    return ""


def missing_module_harms(action: str, shown: ShownModules) -> list[str]:
    """Why ``action``, whatever step it restates, names a module PEFT's own message lists
    as matching nothing in the model (its whole list, so never a wrapper's attribute), or,
    when the incident prints the model, names modules to use none of which it shows."""
    whole = tuple(m for m, suffix in zip(shown.missing, shown.suffix, strict=True) if suffix)
    listed = ShownModules(whole, (True,) * len(whole))
    names = names_to_use(action) if whole else []
    missing = [found for name in names if (found := _is_missing(name, listed))]
    if not missing and shown.shown:  # a printed model: names it gives must be among its own
        given = module_names_to_use(action, shown)
        if given and not any(_is_shown(name, shown) for name in given):
            listed_names = ", ".join(given[:6])
            return [
                f"none of the names it gives ({listed_names}) is among the model's modules shown"
            ]
    return [f"the message says {name} is not a module of the model" for name in missing]
