"""Remedies an error message states itself, read as structured advice.

Many errors carry their own fix: "To use CUDA with multiprocessing, you must use the 'spawn'
start method", "Try increasing `gpu_memory_utilization`", "Please install the tf-keras
package with `pip install tf-keras`", "Use .reshape(...) instead". A runbook step names
the advice as ``{message-advice}`` (:mod:`.step_values`); this module finds it in the
message and the error-level log lines, clause by clause:

- a clause opened by an advice marker: "you must/should/can/need to ...", "please ...",
  "try ...", "consider ...", "to fix: ...", "the easiest solution is to ...", or an
  imperative that starts a sentence or a list item ("Set ...", "2. Downgrade ...") or
  follows a comma or colon (", use X instead");
- a package manager command quoted in the text (`pip install accelerate`).

Each becomes an :class:`Advice`: its verb in the imperative, what it names (options,
flags, environment variables, methods, quoted values; packages with a direction), and the
clause reworded as an instruction. Advice is *concrete* when it names an option, a flag, a
variable, a method or a value, or a package with a direction (install, upgrade,
downgrade); it is *generic* when it only sends the reader elsewhere (report a bug, open an
issue, see the documentation, rerun for more information or for debugging). Only concrete,
non-generic advice fills a step.

The text is untrusted: patterns are RE2 (:mod:`ingest.linear_regex`), every input is
bounded (characters, lines, sentences, clauses), URLs are cut out of what is returned (it
never becomes a link), and nothing is run: advice is only quoted back as words.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ingest.linear_regex import LinearMatch
from ingest.linear_regex import compile as linear
from ingest.parsing.log_levels import ERROR_AND_ABOVE
from rca.corpus.sentences import split_sentences
from rca.suggestion.advice_objects import DIRECTIONS, named_options, named_packages
from rca.suggestion.checks.urls import urls_in

__all__ = [
    "ADVICE_VERBS",
    "Advice",
    "VALUE_NAMES",
    "advice_values",
    "error_log_texts",
    "first_remedy",
    "read_advice",
]

VALUE_NAMES = frozenset({"message-advice", "message-advice-quote"})

MAX_TEXT = 4000  # characters read of the message and of each log line
MAX_LOG_LINES = 20  # error-level log lines read
MAX_SENTENCES = 80  # sentences looked at, all texts together
MAX_ADVICE = 8  # advice clauses kept
MAX_CLAUSES = 40  # clause starts looked at per sentence
MAX_CLAUSE = 160  # characters of a clause returned as an instruction
MAX_QUOTE = 160  # characters of the quoted sentence


#: Verbs advice may start with (base form), each one a validator's imperative verb
#: (:data:`rca.suggestion.validation.IMPERATIVE_VERBS`, checked by the tests): a remedy.
def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


ADVICE_VERBS = _words(
    """
    add allow apply call cast change clear convert decrease define disable downcast
    downgrade enable export free import increase initialize initialise install limit load
    lower move pad pass provide raise rebuild reduce regenerate register reinstall
    remove rename replace reshape restart run save set specify switch truncate uninstall
    unset upcast update upgrade use wrap
    """
)
#: Verbs that give advice without a marker word: an imperative opening a sentence or a
#: list item, or following a comma or colon ("..., use X instead").
UNMARKED_VERBS = _words(
    """
    add call disable downgrade enable install pass provide reinstall set specify switch
    uninstall unset upgrade use
    """
)
#: Verbs of advice that only sends the reader elsewhere: never a remedy by itself.
GENERIC_VERBS = _words(
    """
    ask check consult contact file inspect look open post read refer report search see
    submit verify visit let make ensure
    """
)
_MARKER = linear(
    r"(?:^|[\s(\[,:;])(?:"
    r"(?:you|we|one|users?)(?:\s+(?:will|may|might|probably|also|then))?\s+"
    r"(?:must|should|can|could|may|might|need\s+to|needs\s+to|have\s+to|want\s+to|ought\s+to)"
    r"(?:\s+(?:also|first|either|instead|now|then|still|probably|just|only|simply))?"
    r"(?:\s+(?:consider|try(?:\s+to)?))?"
    r"|please(?:\s+(?:either|also|first|just|then|instead))?"
    r"|try(?:\s+to)?|trying|consider"
    r"|(?:it\s+is|it's)\s+(?:recommended|advised|suggested)\s+to"
    r"|to\s+(?:fix|resolve|solve|avoid)\s+(?:this|it|the\s+(?:error|issue|problem))?\s*[:,]"
    r"|(?:solution|workaround|fix|remedy|option)\s+(?:is|would\s+be|will\s+be|might\s+be"
    r"|may\s+be|could\s+be)\s+to"
    r")\s+",
    ignore_case=True,
)
#: An imperative opening a sentence, a list item, or a clause after a comma or colon.
_OPENING = linear(r"^\s*(?:\(?\d{1,2}[.)]\s+|[-*]\s+)?")
_AFTER_PUNCT = linear(r"[,:;]\s+")
_WORD = linear(r"[A-Za-z]+")
_CODE_GLUE = frozenset("_.=(-0123456789")
#: Words after a sentence-initial "Use"/"Set" that make it a noun ("Use of a module").
_NOUN_FOLLOWERS = _words("of is was were has had failed error errors")
#: What a clause without a marker says when it reports a failure instead of advising.
_REPORT = linear(
    r"\b(?:failed|fails|error|errors|exception|not\s+found|cannot|can't|unable|invalid"
    r"|is\s+not|was\s+not|are\s+not|were\s+not)\b",
    ignore_case=True,
)
#: Where a clause ends inside its sentence: a reason, a contrast, a following sentence
#: opened by a pipe or a line break.
_CLAUSE_END = linear(
    r"\s*(?:;|\s\|\s|\n|,\s*(?:since|because|as|which|but|otherwise|so\s+that)\b"
    r"|\s(?:because|since|otherwise)\s|[.!?]\s|[.!?;:\s]\d{1,2}\)\s)",
    ignore_case=True,
)
#: Advice that only points elsewhere or only helps to debug: not a remedy.
_GENERIC_TEXT = linear(
    r"\b(?:bugs?|issues?\s+(?:tracker|at|on|here)|open\s+an\s+issue|file\s+an?\s+issue"
    r"|report|documentation|docs|more\s+info(?:rmation)?|for\s+details|further\s+details"
    r"|debug\w*|traceback|stack\s*trace|backtrace|forums?|github|stack\s*overflow"
    r"|diagnos\w*|verbose|logging\s+level|log\s+level)\b",
    ignore_case=True,
)
#: A sentence whose advice only helps to learn more ("For debugging consider passing ...",
#: "Set X=0 and rerun for more info"), wherever in it the purpose is said.
_TO_LEARN_MORE = linear(
    r"\b(?:debug\w*|more\s+info(?:rmation)?|more\s+details|for\s+details|diagnos\w*"
    r"|verbose|traceback|stack\s*trace|backtrace)\b",
    ignore_case=True,
)
_PIP = linear(r"`((?:python3?\s+-m\s+)?(?:pip3?|conda|mamba|uv\s+pip)\s+install\s+[^`\n]{1,120})`")
_PIP_WORDS = linear(r"\S+")
_TRAILER = linear(
    r"[\s,:;(-]*(?:(?:from|at|on|via|here|see)\s+)?(?:(?:the|this)\s+)?"
    r"(?:url|link|page|website|site|address)?[\s,:;(-]*$",
    ignore_case=True,
)
_SPACES = linear(r"\s+")
_GERUND_PAIR = linear(r"\b(and|or|and/or)\s+([A-Za-z]+ing)\b")


@dataclass(frozen=True)
class Advice:
    """One remedy the incident's text states.

    ``verb`` is the imperative (``increase``), ``text`` the clause as an instruction
    starting with it ("Increase `gpu_memory_utilization` when initializing the engine"),
    ``options`` what it names (option, flag, variable, method, quoted value), ``value`` the
    value it gives the first one, ``packages`` and ``direction`` what a package verb says,
    ``sentence`` the sentence it came from (URLs removed), quoted back in the reason.
    """

    verb: str
    text: str
    options: tuple[str, ...] = ()
    value: str | None = None
    packages: tuple[str, ...] = ()
    direction: str | None = None
    sentence: str = ""
    generic: bool = False

    @property
    def concrete(self) -> bool:
        """Whether it names what to change: an option, flag, variable, method or value, or
        a package and a direction; and does not only send the reader elsewhere."""
        named = bool(self.options) or bool(self.packages and self.direction)
        return named and not self.generic


def _imperative(word: str) -> str | None:
    """The base form of an advice verb as written ("increasing" -> "increase")."""
    word = word.lower()
    if word in ADVICE_VERBS or word in GENERIC_VERBS:
        return word
    if word.endswith("ing") and len(word) > 5:
        stem = word[:-3]
        for base in (stem, stem + "e", stem[:-1]):
            if base in ADVICE_VERBS or base in GENERIC_VERBS:
                return base
    return None


def _base_form(match: LinearMatch) -> str:
    base = _imperative(match.group(2))
    return f"{match.group(1)} {base}" if base else match.group(0)


def _lines(text: str) -> list[str]:
    """The lines of ``text``, a hard-wrapped sentence joined again: a line that does not
    end a sentence continues on a next one that starts in lower case."""
    lines: list[str] = []
    for line in text.replace(" | ", "\n").splitlines():
        line = line.strip()
        if not line:
            continue
        if lines and lines[-1][-1] not in ".!?:" and line[0].islower():
            lines[-1] = f"{lines[-1]} {line}"
        else:
            lines.append(line)
    return lines


def _without_urls(text: str) -> str:
    """``text`` cut before its first URL, without a dangling "from the URL:"."""
    found = urls_in(text)
    if not found:
        return text
    cut = min(text.find(url) for url in found if url in text) if found else len(text)
    head = text[: max(cut, 0)]
    return _TRAILER.sub("", head)


def _bounded(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut at a word, no code span left open."""
    text = _SPACES.sub(" ", text).strip()
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    if text.count("`") % 2:
        text = text[: text.rfind("`")].rstrip(" ,;:(") + ("…" if not text.endswith("…") else "")
    return text


def _advice(verb_word: str, clause: str, sentence: str) -> Advice | None:
    """The advice a clause starting with ``verb_word`` gives, or None."""
    verb = _imperative(verb_word)
    if verb is None:
        return None
    rest = clause[len(verb_word) :]
    if verb_word.lower() != verb:  # "try increasing X or decreasing Y": every gerund
        rest = _GERUND_PAIR.sub(_base_form, rest)
    clause_text = _bounded(_without_urls(verb.capitalize() + rest), MAX_CLAUSE).rstrip(".")
    if len(clause_text) <= len(verb) + 1:
        return None
    options, value = named_options(rest)
    packages = named_packages(rest) if verb in DIRECTIONS else ()
    generic = (
        verb in GENERIC_VERBS
        or bool(_GENERIC_TEXT.search(clause))
        or bool(_TO_LEARN_MORE.search(sentence))
    )
    return Advice(
        verb=verb,
        text=clause_text,
        options=tuple(options),
        value=value,
        packages=packages,
        direction=DIRECTIONS.get(verb),
        sentence=_bounded(_without_urls(sentence), MAX_QUOTE),
        generic=generic,
    )


def _clause(sentence: str, start: int) -> str:
    """The clause of ``sentence`` from ``start`` to its end (a reason or contrast cut off)."""
    rest = sentence[start:]
    end = _CLAUSE_END.search(rest)
    return (rest[: end.start()] if end else rest).strip().rstrip(".!")


def _starts(sentence: str) -> list[tuple[int, bool]]:
    """Where advice clauses may start in ``sentence``: after a marker (True), or an
    imperative opening it or following a comma or colon (False)."""
    marked = {match.end() for match in _MARKER.finditer(sentence)}
    unmarked = {match.end() for match in _AFTER_PUNCT.finditer(sentence)}
    opening = _OPENING.match(sentence)
    unmarked.add(opening.end() if opening else 0)
    return [(at, at in marked) for at in sorted(marked | unmarked)[:MAX_CLAUSES]]


def _sentence_advice(sentence: str) -> list[Advice]:
    """Every advice clause of one sentence, in order."""
    found: list[Advice] = []
    for start, marked in _starts(sentence):
        verb = _WORD.match(sentence, start)
        if (
            verb is None
            or verb.start() != start
            or sentence[verb.end() : verb.end() + 1] in _CODE_GLUE
        ):
            continue  # not a word, or the start of a name ("use_cache=False", "set()")
        clause = _clause(sentence, start)
        if not marked:
            # No marker: only a plain imperative that does not report a failure ("Use X
            # instead", "2. Downgrade P"; not "Load model from X failed", "Use of ...").
            after = sentence[verb.end() :].split(maxsplit=1)
            if (
                verb.group(0).lower() not in UNMARKED_VERBS
                or (after and after[0].lower() in _NOUN_FOLLOWERS)
                or _REPORT.search(clause)
            ):
                continue
        advice = _advice(verb.group(0), clause, sentence)
        if advice is not None and all(advice.text != seen.text for seen in found):
            found.append(advice)
    return found


def _commands(text: str) -> list[Advice]:
    """Package manager commands quoted in ``text`` (`pip install accelerate`)."""
    found = []
    for match in _PIP.finditer(text):
        command = match.group(1).strip()
        words = [w.group(0) for w in _PIP_WORDS.finditer(command)]
        at = words.index("install") + 1 if "install" in words else len(words)
        packages = tuple(w for w in words[at:] if not w.startswith("-"))[:3]
        if not packages or urls_in(command):
            continue
        found.append(
            Advice(
                verb="run",
                text=f"Run `{command}`",
                options=(command,),
                packages=packages,
                direction="install",
                sentence=_bounded(_without_urls(text), MAX_QUOTE),
            )
        )
    return found


def error_log_texts(logs: Iterable[Any]) -> list[str]:
    """The text of the error-level (and above) log entries; an entry without a level counts."""
    texts = []
    for entry in logs:
        if isinstance(entry, dict):
            level = entry.get("level")
            if level is None or str(level).upper() in ERROR_AND_ABOVE:
                texts.append(str(entry.get("message") or ""))
        elif isinstance(entry, str):
            texts.append(entry)
        if len(texts) == MAX_LOG_LINES:
            break
    return texts


def read_advice(message: str, log_lines: Iterable[str] = ()) -> list[Advice]:
    """The advice the message and then the log lines state, in order (at most
    :data:`MAX_ADVICE`), generic advice included (see :attr:`Advice.concrete`)."""
    found: list[Advice] = []
    texts = [message or "", *list(log_lines)[:MAX_LOG_LINES]]
    budget = MAX_SENTENCES
    for text in texts:
        text = str(text)[:MAX_TEXT]
        for line in _lines(text):
            for sentence in split_sentences(line):
                if budget == 0:
                    return found[:MAX_ADVICE]
                budget -= 1
                for advice in _sentence_advice(sentence):
                    if advice not in found:
                        found.append(advice)
        for advice in _commands(text):
            if advice not in found:
                found.append(advice)
        if len(found) >= MAX_ADVICE:
            break
    return found[:MAX_ADVICE]


def _quote(text: str) -> str:
    return text.replace('"', "'").replace("{", "(").replace("}", ")")


def first_remedy(message: str, log_lines: Iterable[str] = ()) -> Advice | None:
    """The first concrete advice the text states: the one ``{message-advice}`` names."""
    return next((a for a in read_advice(message, log_lines) if a.concrete), None)


def advice_values(message: str, log_lines: Iterable[str] = ()) -> dict[str, str]:
    """``message-advice`` (:func:`first_remedy` as an instruction, its verb in lower case:
    the step's own words come first) and ``message-advice-quote`` (the sentence it came
    from), or nothing when the text states no concrete remedy."""
    advice = first_remedy(message, log_lines)
    if advice is None:
        return {}
    return {
        "message-advice": _quote(advice.text[:1].lower() + advice.text[1:]),
        "message-advice-quote": _quote(advice.sentence),
    }
