"""The options an action sets, and the scripts it runs, read from its own words.

A runbook step (or any suggestion, offline or from an LLM) that says "set X (to V)", "pass
`--flag`", "start the container with `--gpus all`", "export `KEY=1`" has the premise that X
is not already set that way. This module reads which options an action turns on, from its
text alone, so that the premise holds for users' own runbooks too; nothing here knows a
runbook or an option. :mod:`rca.suggestion.premises` compares them with the options the
incident shows set (:mod:`rca.suggestion.shown_options`).

What counts as an option: a ``--flag`` (with ``=value`` or `` value`` inside the same code
span), a ``key=value`` or ``KEY=value`` (keyword arguments, environment variables; a plain
name such as ``x = x.to(...)`` only with a literal value), a ``"key": value`` pair, a
``key: value`` code span (YAML), and, outside parenthetical asides (which name references),
a code span that is a bare identifier shaped like an option (``gpu_mem_limit``,
``CUDA_VISIBLE_DEVICES``) with the value its clause gives: "set X to 0" a literal, "set X to
the value the checkpoint was trained with" / "well below Y" a described one; "pass X to
`f`" names a target, not a value. What the action does to it comes from the nearest verb
before it: ``remove``/``disable``/... and a ``without``/``instead of`` right before it turn
it off; ``lower``/``raise``/... and "higher `X`" change a value, so only the same literal
value is a repeat; ``check``/``verify`` only look at it; a name after "e.g.", "of",
"matching", "if", "so", or followed by a verb ("with `X=1` use `cuda:0`") is a reference
or a condition, and one followed by "is already ..." ("`X=True` is already passed") a report,
not what the step sets.

A step that adds values to a list option ("add `CUDAExecutionProvider` to `providers`",
"include q_proj and v_proj in `target_modules`", "append `--enable-prefix-caching`... to
`args`") names one option, the list, with the values it adds (:attr:`StepOption.adds`): the
step is already done when the incident shows that list holding them all. The values are code
spans, quoted words or identifiers shaped like values (``q_proj``, ``CUDAExecutionProvider``,
``0``), never plain words ("add a batch dimension to the input" adds nothing to an option).

Linear time: every pattern is RE2 (:mod:`ingest.linear_regex`) over at most
:data:`MAX_ACTION` characters.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, replace

from ingest.linear_regex import compile as linear
from rca.suggestion.code_span_options import (
    FLAG,
    LITERAL,
    PAIR,
    bold_as_code,
    option_like,
    span_options,
    value_of,
)
from rca.suggestion.negated_clauses import turned_down
from rca.suggestion.old_mentions import before_mention
from rca.suggestion.option_aliases import canonical
from rca.suggestion.step_additions import additions

__all__ = [
    "MAX_ACTION",
    "NOT_LITERAL",
    "StepOption",
    "option_key",
    "options_set_by",
    "runs_script",
    "scripts_run_by",
    "without_asides",
]

MAX_ACTION = 4000
#: The value of an option set "to the value the checkpoint was trained with": some value,
#: not one the text gives, so never equal to a value the incident shows.
NOT_LITERAL = "\x00"

_SPAN = linear(r"`(?P<code>[^`\n]{1,400})`")
_IDENT = linear(r"^(?P<name>[A-Za-z_][A-Za-z0-9_.]*)$")
#: What a set-like verb's clause gives a bare option after it: "to 0", "to `False`",
#: "to the number of classes", "well below the timeout" (asides dropped first).
_TO = linear(
    r"^(?:[^;.`]|\.\S){0,60}?\b(?P<how>to|below|above|under|within|at most|at least)\s+"
    r"(?:`(?P<code>[^`]{1,80})`|(?P<word>[\w.:\"'-]+))",
    ignore_case=True,
)
_JOINED = linear(r"^\s*(?:/|,|or|and|, and|, or)\s*`")
#: "to `False`" right after the name; a literal in code.
_TO_CODE = linear(r"^\s*(?:only\s+)?(?:to|=)\s+`(?P<code>[^`]{1,80})`", ignore_case=True)
_VERB = linear(
    r"\b(?P<unset>remove|unset|disable|drop|avoid|strip|delete|stop|omit|exclude|skip|revert"
    r"|uninstall|kill|clear|turn off|do not|don't|never)\b"
    r"|\b(?P<change>lower|reduce|raise|increase|decrease|change|adjust|bump|shrink|cap|limit"
    r"|correct|fix|align|update|edit|rewrite"
    r"|halve|double|tune|scale|trim|shorten)\b"
    r"|\b(?P<set>set|enable|pass|add|use|export|specify|start|launch|run|give|supply|provide"
    r"|configure|turn on|load|call|create|construct|wrap|put|switch|append|prepend"
    r"|serve|install|build|compile|initiali[sz]e|declare|define|ensure|make sure)\b"
    r"|\b(?P<other>check|verify|confirm|inspect|print|compare|list|debug|log|measure|profile"
    r"|test|find|look|read|see|query|watch|monitor|diagnose|reproduce|record|note|expect"
    r"|keep|keeping|leave|leaving|restart|relaunch|rerun|re-run|retry|rebuild|reinstall|recompile|re-export"
    r"|regenerate|re-download|reconvert)\b",
    ignore_case=True,
)
#: Verbs after which "to" names where the option goes ("pass X to `from_pretrained`").
_TARGET_VERBS = frozenset({"pass", "give", "add", "supply", "provide", "append", "prepend"})
#: Right before a name: the action turns it down or puts it aside (:mod:`.old_mentions`). Not
#: the source group ("from", "replacing"): this reader never took them, and every premise
#: reads its options, so widening it is a change of its own, not part of sharing the words.
_NEGATED = before_mention("preference", "comparison", "negation", "exclusion", then=r"\s*[(\[]?$")
#: Right before a name: it is a reference, an example or a condition, not what is set.
_REFERENCE = linear(
    r"(?:\be\.g\.|\bi\.e\.|\b(?:for example|such as|like|matching|match|named|called|of|per"
    r"|in|if|when|whenever|unless|so|so that|because|since))\s*[(\[,:]?$",
    ignore_case=True,
)
#: Right before a name: a comparative, so the step changes its value ("higher `X`").
_COMPARED = linear(
    r"\b(?:higher|lower|larger|smaller|more|less|fewer|bigger|longer|shorter|below|above)\s*$",
    ignore_case=True,
)
#: Right before a name: a value other than the one in use ("a custom `device_map`", "a
#: different `X`"), so the step changes it, and a value shown does not repeat it.
_OTHER_VALUE = linear(
    r"\b(?:custom|customi[sz]ed|different|another|new|own|separate|hand-written|manual)\s*$",
    ignore_case=True,
)
#: Right after a name: a verb, so the name was a condition ("with `X=1` use `cuda:0`").
_THEN_VERB = linear(r"^[\s,]*(?:use|set|pass|call|run|add|keep)\b", ignore_case=True)
#: Right after a name: it is reported as it already is ("`X=True` is already passed", "X is
#: set already"), or left as it is ("`X=True` as is", "unchanged"), not set. "As is" ends
#: its clause or a conjunction follows it: "as is done in the example" compares, it keeps
#: nothing.
_REPORTED = linear(
    r"^[\s`'\"]*(?:(?:is|are|was|were|has|have)(?:\s+been)?\s+)?"
    r"(?:already|(?:set|passed|enabled|on|given|used)\s+already)\b"
    r"|^[\s`'\"]*(?:unchanged|untouched|in\s+place)\b"
    r"|^[\s`'\"]*as\s+(?:it\s+)?is(?:\s*$|\s*[^\w\s]|\s+(?:and|but|or|then|so|while|for\s+now)\b)",
    ignore_case=True,
)
#: "change/replace/switch `X=old` to/with `new`": the old value is what is replaced.
_REPLACING = linear(
    r"\b(?:change|replace|switch|swap|flip|turn|update|edit|rewrite)\b[^;.!?`]{0,60}$",
    ignore_case=True,
)
_REPLACED_BY = linear(r"^\s*(?:to|with|for|by|into)\s+`(?P<code>[^`\n]{1,400})`", ignore_case=True)
_PROSE_NAME = linear(r"(?:^|[\s(\[,;:])(?P<name>[A-Za-z_][A-Za-z0-9_]*)\b")
_SCRIPT = linear(
    r"(?:^|\s)(?:(?:python3?|bash|sh)\s+|\./)?(?P<path>[\w./-]*?(?P<name>[\w-]+\.(?:py|sh)))"
    r"(?:\s|$)"
)
_LAUNCHER = linear(r"\b(?:torchrun|accelerate|deepspeed|mpirun|srun|-m)\b")


@dataclass(frozen=True)
class StepOption:
    """One option an action names: normalised key, the name as written, the value it gives
    (None: none; :data:`NOT_LITERAL`: one it describes), and whether it turns it on
    (``set``), changes its value (``change``), turns it off (``unset``) or only refers to it
    (``other``: "check `CUDA_VISIBLE_DEVICES`", "one of `a`, `b`")."""

    key: str
    name: str
    value: str | None
    how: str
    #: Named in the command that runs a script (``python convert.py --out x``): its argument.
    in_command: bool = False
    #: The values the step adds to this list option ("add `X` to `providers`"), in order.
    adds: tuple[str, ...] = ()


def option_key(name: str) -> str:
    """An option's name as compared: no quotes or leading dashes, ``-`` read as ``_``, lower
    case (``--Enforce-Eager``, ``enforce_eager`` and ``ENFORCE_EAGER`` are one option)."""
    return name.strip("`'\" ").lstrip("-").replace("-", "_").lower().strip("._")


class _Verbs:
    """Where the action's verbs are and what each does, to find the one before a name."""

    def __init__(self, text: str) -> None:
        self.text = text
        #: What the action turns down ("instead of setting X", "do not pass X again",
        #: "setting X again will not help"): a name there is refused, not set.
        self.down = turned_down(text)
        self.starts: list[int] = []
        self.kinds: list[str] = []
        self.words: list[str] = []
        for match in _VERB.finditer(text):
            self.starts.append(match.start())
            self.kinds.append(
                next(k for k in ("unset", "change", "set", "other") if match.group(k))
            )
            self.words.append(match.group(0).lower())

    def _index(self, at: int) -> int:
        return bisect.bisect_right(self.starts, at) - 1

    def how(self, at: int, end: int) -> str:
        """What the action does to the name at ``at``..``end``."""
        before = self.text[max(0, at - 24) : at].rstrip(" `")
        if _NEGATED.search(before):
            return "unset"
        after = self.text[end : end + 40]
        if _REFERENCE.search(before) or _THEN_VERB.match(after) or _REPORTED.match(after):
            return "other"
        if _COMPARED.search(before) or _OTHER_VALUE.search(before):
            return "change"
        index = self._index(at)
        how = self.kinds[index] if index >= 0 else "set"  # "`X=1` in the environment"
        if how in ("set", "change") and any(a <= at < b for a, b in self.down):
            return "other"
        return how

    def verb(self, at: int) -> str:
        index = self._index(at)
        return self.words[index] if index >= 0 else ""


def without_asides(text: str) -> str:
    """``text`` without its parenthetical asides (examples), whatever they nest."""
    out, depth = [], 0
    for char in text:
        depth += char == "("
        if not depth:
            out.append(char)
        depth -= char == ")" and depth > 0
    return "".join(out)


def _bare_value(after: str, verb: str) -> str | None:
    """The value a bare option's clause gives it: a literal ("to 0", "to `False`"),
    :data:`NOT_LITERAL` for a described one ("to the value the checkpoint was trained
    with", "well below the timeout"), None for none ("pass X to `f`": a target)."""
    code = _TO_CODE.match(after)
    if code is not None and verb not in _TARGET_VERBS:
        raw = code.group("code")
        return value_of(raw) if LITERAL.match(raw) else NOT_LITERAL
    # Code spans read as one word: "in `config.pbtxt` to the model file's type".
    match = _TO.match(_SPAN.sub("code", without_asides(after[:200])))
    if match is None or (match.group("how").lower() == "to" and verb in _TARGET_VERBS):
        return None
    raw = (match.group("code") or match.group("word") or "").strip("`")
    if match.group("how").lower() == "to" and LITERAL.match(raw):
        return value_of(raw)
    return NOT_LITERAL


def _replaced(
    named: list[tuple[str, str | None]], before: str, after: str
) -> list[tuple[str, str | None]]:
    """The options a span names, as a replacement leaves them: in "change `X=old` to
    `new`" X gets ``new``; in "replace `X=old` with `X=new`" the old pair is dropped (the new
    span is read on its own). Otherwise ``named`` unchanged."""
    new = _REPLACED_BY.match(after)
    if new is None or not named or _REPLACING.search(before) is None:
        return named
    raw = new.group("code").strip()
    if span_options(raw):
        return []
    if LITERAL.match(raw):
        return [(name, value_of(raw)) for name, _ in named]
    return named


def _depths(text: str) -> list[int]:
    """The parenthesis depth at each character (asides are depth > 0)."""
    depths, depth = [], 0
    for char in text:
        depth += char == "("
        depths.append(depth)
        depth -= char == ")" and depth > 0
    return depths


def _additions(text: str) -> list[tuple[int, int, StepOption]]:
    """Each "add <values> to <option>" clause (:mod:`.step_additions`): where its values
    start and the clause ends, and the option it adds them to."""
    return [
        (start, end, StepOption(option_key(name), name, None, "set", adds=items))
        for start, end, name, items in additions(text)
    ]


def _aliased(option: StepOption) -> StepOption:
    """The option under the name and value it amounts to (:mod:`.option_aliases`)."""
    key, value = canonical(option.key, option.value)
    return option if key == option.key else replace(option, key=key, value=value)


def options_set_by(action: str) -> list[StepOption]:
    """Every option the action names, in the order it names them, with what it does to it;
    an alias of an option (:mod:`.option_aliases`) is read as the option."""
    return [_aliased(option) for option in _options_named(action)]


def _options_named(action: str) -> list[StepOption]:
    text = bold_as_code(action[:MAX_ACTION])
    verbs = _Verbs(text)
    depth = _depths(text)
    found: list[StepOption] = []
    additions = _additions(text)
    pending = list(additions)  # each goes in where its clause starts

    def added(at: int) -> bool:
        return any(start <= at < end for start, end, _ in additions)

    shared_from: int | None = None  # "`a` / `b` to V": bare options that share one value
    for span in _SPAN.finditer(text):
        code, at = span.group("code"), span.start()
        while pending and pending[0][0] <= at:
            found.append(pending.pop(0)[2])
        if added(at):
            continue
        how = verbs.how(at, span.end())
        named = span_options(code)
        bare = not named and _IDENT.match(code.strip()) and option_like(code.strip())
        if bare and not depth[at]:
            after = text[span.end() : span.end() + 200]
            value = _bare_value(after, verbs.verb(at))
            if value is not None and shared_from is not None:
                found[shared_from:] = [replace(o, value=value) for o in found[shared_from:]]
            joined = value is None and _JOINED.match(after)
            shared_from = (len(found) if shared_from is None else shared_from) if joined else None
            named = [(code.strip(), value)]
        else:
            shared_from = None
        script = bool(_SCRIPT.search(code))
        named = _replaced(named, text[max(0, at - 80) : at], text[span.end() : span.end() + 420])
        for name, value in named:
            found.append(StepOption(option_key(name), name, value, how, script))
    found += [option for _, _, option in pending]
    # Unquoted ``key=value``, ``--flag`` and ``snake_case`` names in the prose (an LLM may
    # leave out the backticks).
    prose = _SPAN.sub(lambda m: " " * len(m.group(0)), text)
    for match in _PROSE_NAME.finditer(prose):
        name, end = match.group("name"), match.end()
        if (
            option_like(name)
            and not added(match.start(1))
            and not depth[match.start(1)]
            and prose[end : end + 1]
            not in (
                "=",
                "(",
            )
        ):
            value = _bare_value(prose[end : end + 200], verbs.verb(match.start()))
            how = verbs.how(match.start(1), end)
            found.append(StepOption(option_key(name), name, value, how))
    for pattern in (FLAG, PAIR):
        for match in pattern.finditer(prose):
            name = match.group("name")
            if (pattern is PAIR and not option_like(name)) or added(match.start(1)):
                continue
            value = value_of(match.group("value")) or ("" if pattern is FLAG else None)
            how = verbs.how(match.start(1), match.end())
            found.append(StepOption(option_key(name), name, value, how))
    return found


def runs_script(action: str) -> bool:
    """Whether the action runs a script (``python train.py``, ``./run.sh``, in any launcher):
    its options outside that command qualify how the script runs (``device_map="auto"``
    for a single process), they are not the change the step makes."""
    return any(_SCRIPT.search(span.group("code")) for span in _SPAN.finditer(action[:MAX_ACTION]))


def scripts_run_by(action: str) -> list[tuple[str, list[str]]]:
    """The scripts an action runs directly (``python convert.py``, ``./run.sh``; not through
    a launcher such as ``torchrun``, which changes how it runs), each with the flags that
    code span passes it."""
    text = action[:MAX_ACTION]
    if _LAUNCHER.search(text):  # "run `python train.py`, not `torchrun`": how it runs changes
        return []
    verbs = _Verbs(text)
    found: list[tuple[str, list[str]]] = []
    for span in _SPAN.finditer(text):
        code = span.group("code")
        if verbs.how(span.start(), span.end()) != "set":
            continue
        if match := _SCRIPT.search(code):
            flags = [option_key(m.group("name")) for m in FLAG.finditer(code)]
            found.append((match.group("name").lower(), flags))
    return found
