"""The parts of an action it says, without the parts it turns down.

"Install cuDNN 8.9.2 or newer so it matches the build; no need to update the driver" says to
install cuDNN, not to update the driver: a step whose ``says`` phrase is "update driver" is not
what it suggests (:func:`rca.suggestion.restated_steps.said_steps`). The action is cut into
clauses at ``;``, ``,``, ``:``, a full stop before a space or the end, a line break and
parentheses (brackets too), and a negation is read inside its clause only:

- a negating word turns down the verb phrase it governs: "do not update the driver", "never
  install 470", "avoid", "no need to", "install torch instead of (rather than, without)
  downgrading the driver"; the words before it are still said ("install torch"), and so are
  the words from a new verb on: one a coordinating or contrasting word introduces ("don't
  upgrade but downgrade the driver", "avoid upgrading and roll back the driver", "do not
  upgrade torch and instead downgrade") or one that follows the governed verb directly
  ("rather than upgrade downgrade the driver") (:func:`governed_end`). After "rather than",
  "instead of", "without" or "avoid", a verb a bare "and" joins in the governed verb's own
  form continues the negated construction: "keep 535 rather than purge 535 and install 470",
  "instead of purging 535 and installing 470". After "don't", "do not" or "never" it is the
  next step ("don't upgrade the driver and downgrade it to 470"), and so is one a trailing
  "instead" follows ("... and install 470 instead"); a removal governs its object, not a
  verb, so "remove torch and downgrade the driver" says the downgrade;
- a verb negated after what it names ("updating the NVIDIA driver does not help", "a new
  driver is not needed", "won't fix it", "is unnecessary") turns down its own subject, from
  the word that opens its subordinate clause ("downgrade the driver to 460 if upgrading does
  not help", "because the new one doesn't work", "- a newer one is not needed"), or from the
  clause's start when nothing opens one, through the negated verb: "a newer driver won't fix
  it so install driver 470" says "so install driver 470";
- a negated verb of omission says what it governs: "don't forget to set X", "never fail to
  pass X", "do not skip updating the driver" turn nothing down.

A comma ends a clause except inside a list of bare verbs under one negation, closed by "or":
"never reboot, reload or rmmod nvidia", "without rebooting, reloading, or removing it" turn
down every verb (:func:`_listed`). Without the closing "or", or with an object before the
comma, the comma opens a new clause: "do not upgrade, downgrade the driver", "don't
upgrade, and downgrade the driver".

Every pattern is RE2 (:mod:`ingest.linear_regex`) over a capped action, each searched a
bounded number of times per clause, so the time is linear in the action.
"""

from __future__ import annotations

from itertools import islice

from ingest.linear_regex import compile as linear

__all__ = ["governed_end", "negates_omission", "said_parts", "turned_down"]

_MAX_ACTION = 4000
_MAX_CLAUSES = 400
#: Negations read in one clause at most (each search is linear in the clause).
_MAX_NEGATIONS = 8
_BREAK = linear(r"[;,:()\[\]\n]|\.(?:\s|$)")
#: A word that turns down the verb phrase it governs; not the "no" of a flag ("--no-deps").
_NEGATION = linear(
    r"\b(?:not|never|cannot|avoid\w{0,3}|without|instead\s+of|rather\s+than|other\s+than)\b"
    r"|\bno(?:[^\w-]|$)"
    r"|n['’]t\b",
    ignore_case=True,
)
#: A verb negated after what it names: it turns down its subject.
_NEGATED_VERB = linear(
    r"(?:\b(?:not|cannot)|n['’]t)\s+(?:\w+\s+){0,2}?"
    r"(?:help|need|necessary|required|matter|work|fix|solve|change)\w{0,3}\b"
    r"|\b(?:unnecessary|unneeded|pointless|useless)\b",
    ignore_case=True,
)
#: An imperative negation ("do not", "don't", "never" opening its verb phrase): it governs
#: the verb after it, whatever that verb is.
_IMPERATIVE = linear(
    r"(?:^\s*|\b(?:and|but|then|so|just|please|also)\s+)((?:do\s*)?)$", ignore_case=True
)
#: The word that opens the subordinate clause a postposed negation sits in: the last one
#: before it is where its subject starts.
_SUBORDINATE = linear(
    r"\b(?:if|because|since|as|when|while|though|although|unless|until|once|so|otherwise)\b"
    r"|\s[-–—]+\s",
    ignore_case=True,
)
#: The verbs an answer gives as steps, in their base (imperative) form, and the tools a step
#: runs ("and pip install ...").
_VERBS = (
    r"(?:downgrade|upgrade|update|install|reinstall|uninstall|remove|purge|delete|drop|roll"
    r"|revert|use|keep|switch|pin|set|build|rebuild|go|move|replace|swap|load|reload|reboot"
    r"|restart|run|try|add|pick|choose|get|stay|stick|fall|leave|disable|enable|export|mount"
    r"|rely|unload|rmmod|modprobe|insmod|reset|restore|clear)"
)
_TOOLS = r"(?:apt|apt-get|pip|pip3|conda|sudo)"
#: Where a negation stops governing: a coordinating or contrasting word that introduces a new
#: verb ("but downgrade", "and instead downgrade", "then install", "so downgrade"), or a new
#: verb straight after the governed one ("rather than upgrade downgrade").
_NEW_VERB = linear(
    r"\b(?P<word>but|and|then|so|instead|or\s+else)\s+"
    r"(?P<adverbs>(?:(?:instead|then|just|rather|simply|also|so)\s+){0,2})"
    r"(?:(?P<verb>" + _VERBS + ")|" + _TOOLS + r")\b",
    ignore_case=True,
)
#: The words after which a bare "and" + a verb of the governed verb's form continues the
#: construction ("rather than purge 535 and install 470", "without rebooting and reloading"):
#: they govern a non-finite verb phrase, so a second verb of that form is part of it. After an
#: imperative ("don't upgrade the driver and downgrade it") "and" starts the next step.
_CONTINUING = linear(r"\b(?:rather\s+than|instead\s+of|without|avoid\w{0,3})\s*$", ignore_case=True)
#: A trailing "instead" (not "instead of") after a verb: what the answer says to do.
_INSTEAD = linear(r"\binstead(?:\s*$|[^\s\w]|\s+(?:[^o\s]|o[^f]|of\w))", ignore_case=True)
#: The verb a negation governs, past "need to", "to" or "do" ("no need to update").
_GOVERNED = linear(r"^\s*(?:(?:need\s+to|to|do)\s+)?(?P<verb>[A-Za-z]+)\b", ignore_case=True)
_BASE = linear(r"^" + _VERBS + r"$", ignore_case=True)
#: A clause that is one bare verb: an item of a list of verbs ("never reboot, reload or ...").
_BARE = linear(r"^\s*(?P<verb>[A-Za-z]+)\s*$")
#: The last item of such a list: a bare verb, "or" ("nor") and the last verb, or "or" and
#: the last verb after a serial comma.
_LIST_END = linear(
    r"^\s*(?:(?P<verb>[A-Za-z]+)\s+)?(?:or|nor)\s+(?P<last>[A-Za-z]+)\b", ignore_case=True
)
_MAX_CONTINUED = 8
#: A verb of omission: negating it says what it governs ("don't forget to set X", "never
#: fail to pass X", "do not skip setting X"), so it turns nothing down.
_OMISSION = linear(
    r"^\s*(?:(?:need\s+to|to|do)\s+)?(?:forget|fail|neglect|omit|skip|miss|hesitate)\w{0,3}\b",
    ignore_case=True,
)
#: An infinitive after a negated verb ("does not need to update the driver") is its
#: complement: turned down with it.
_INFINITIVE = linear(r"\s+to\s", ignore_case=True)
_NEXT_VERB = linear(r"^\s*(?:" + _VERBS + r"|\w+ing)\s+(" + _VERBS + r")\b", ignore_case=True)


def _form(word: str) -> str:
    """``base`` for a verb of :data:`_VERBS`, ``ing`` for an -ing form, else ""."""
    if _BASE.match(word):
        return "base"
    return "ing" if len(word) > 4 and word.lower().endswith("ing") else ""


def governed_form(rest: str) -> str:
    """The form of the verb a negation just before ``rest`` governs (:func:`_form`): "" when
    it governs no verb (a removal's object: "remove torch")."""
    governed = _GOVERNED.search(rest)
    return _form(governed.group("verb")) if governed else ""


def governed_end(clause: str, start: int) -> int:
    """Where the negation (or any word that governs one verb phrase, as a removal does) that
    ends at ``start`` in ``clause`` stops governing: at a new verb a coordinating or
    contrasting word introduces, or one that follows the governed verb directly; else at
    the clause's end. After "rather than", "instead of", "without" or "avoid"
    (:data:`_CONTINUING`), a bare "and" before a verb of the governed verb's own form
    continues the negated construction ("rather than purge 535 and install 470"; "instead
    of purging and reinstalling" has no base verb to stop at): both verbs are turned down,
    unless a trailing "instead" marks the second as the alternative."""
    rest = clause[start:]
    ends = [len(rest)]
    base = governed_form(rest) == "base" and bool(_CONTINUING.search(clause[:start]))
    for count, introduced in enumerate(_NEW_VERB.finditer(rest)):
        continued = introduced.group("word").lower() == "and" and not introduced.group("adverbs")
        if (
            count < _MAX_CONTINUED
            and base
            and continued
            and introduced.group("verb")
            and not _INSTEAD.search(rest[introduced.end() :])
        ):
            continue
        ends.append(introduced.start())
        break
    if (following := _NEXT_VERB.search(rest)) is not None:
        ends.append(following.start(1))
    return start + min(ends)


def negates_omission(rest: str) -> bool:
    """Whether a negation just before ``rest`` negates a verb of omission, and so turns
    nothing down: "don't forget to downgrade", "do not hesitate to roll back", "make sure not
    to forget" say what they govern."""
    return _OMISSION.match(rest) is not None


def _clauses(text: str) -> list[tuple[int, int, str]]:
    """Where each clause of ``text`` starts and ends, and the mark that ends it."""
    clauses: list[tuple[int, int, str]] = []
    start = 0
    for match in islice(_BREAK.finditer(text), _MAX_CLAUSES):
        clauses.append((start, match.start(), match.group(0)))
        start = match.end()
    clauses.append((start, len(text), ""))
    return clauses


def _bare_form(clause: str) -> str:
    """The form of the verb ``clause`` is, when it is one bare verb ("reload")."""
    bare = _BARE.match(clause)
    return _form(bare.group("verb")) if bare else ""


def _listed(text: str, clauses: list[tuple[int, int, str]], at: int, form: str) -> int:
    """How many clauses after ``at`` continue a list of bare verbs of ``form`` that a
    negation over one bare verb opens there, 0 when they do not: joined by commas, each a
    bare verb, the last "B or C" or (after a serial comma) "or C" ("never reboot, reload or
    rmmod nvidia", "without rebooting, reloading, or removing it"). Without the closing "or"
    a comma starts a new clause: "do not upgrade, downgrade the driver"."""
    count = 0
    while clauses[at + count][2] == "," and at + count + 1 < len(clauses):
        start, end, _ = clauses[at + count + 1]
        count += 1
        if (last := _LIST_END.match(text[start:end])) is not None:
            verb = last.group("verb")
            if _form(last.group("last")) == form and (_form(verb) == form if verb else count > 1):
                return count
        if _bare_form(text[start:end]) != form:
            return 0
    return 0


def _turned_down_in(clause: str) -> tuple[list[tuple[int, int]], str]:
    """The spans of ``clause`` it turns down, in order, and the form of the verb a negation
    governs through the clause's end when that verb is all it governs ("never reboot")."""
    spans: list[tuple[int, int]] = []
    form = ""
    position = 0
    for _ in range(_MAX_NEGATIONS):
        rest = clause[position:]
        negation, verb = _NEGATION.search(rest), _NEGATED_VERB.search(rest)
        if negation is None and verb is None:
            break
        imperative = _IMPERATIVE.search(rest[: negation.start()]) if negation else None
        if (
            verb is not None
            and not imperative
            and (negation is None or verb.start() <= negation.start())
        ):
            opens = [m.start() for m in _SUBORDINATE.finditer(rest[: verb.start()])]
            # its subject, through the negated verb: what follows ("so install driver
            # 470", "- install 470") is said
            down, end = (opens[-1] if opens else 0), verb.end()
            if _INFINITIVE.match(rest[end:]):  # "don't need to update": what it needs too
                end = governed_end(rest, end)
        elif negation is not None and negates_omission(rest[negation.end() :]):
            position += negation.end()  # "don't forget to set X": a double negation says it
            continue
        else:
            assert negation is not None
            # "do not": the "do" is turned down with what it negates
            down = imperative.start(1) if imperative else negation.start()
            end = governed_end(rest, negation.end())
            form = _bare_form(rest[negation.end() : end])
        spans.append((position + down, position + end))
        position += end
        if position >= len(clause):
            return spans, form
    return spans, ""


def _said_spans(text: str) -> list[tuple[int, int, bool]]:
    """Each part of ``text``'s clauses in order, with whether the action says it."""
    parts: list[tuple[int, int, bool]] = []
    clauses = _clauses(text)
    at = 0
    while at < len(clauses):
        start, end, _ = clauses[at]
        found, form = _turned_down_in(text[start:end])
        spans = [(start + a, start + b) for a, b in found]
        listed = _listed(text, clauses, at, form) if form else 0
        if listed:  # its items, and its last verb's phrase, are turned down with the negation
            start, end, _ = clauses[at + listed]
            last = _LIST_END.match(text[start:end])
            assert last is not None
            down_end = start + governed_end(text[start:end], last.start("last"))
            spans[-1] = (spans[-1][0], down_end)
            rest = _turned_down_in(text[down_end:end])[0]
            spans += [(down_end + a, down_end + b) for a, b in rest]
        said = clauses[at][0]
        for down, down_end in spans:
            parts.append((said, down, True))
            parts.append((down, down_end, False))
            said = down_end
        parts.append((said, end, True))
        at += listed + 1
    return parts


def said_parts(action: str) -> list[str]:
    """The parts of ``action``'s clauses that it says, not turns down (in order)."""
    text = (action or "")[:_MAX_ACTION]
    parts = [text[start:end].strip() for start, end, said in _said_spans(text) if said]
    return [part for part in parts if part]


def turned_down(action: str) -> list[tuple[int, int]]:
    """Where ``action`` turns down what it names (start, end), in order: "do not strip the
    `module.` prefix" names a prefix move it does not make."""
    text = (action or "")[:_MAX_ACTION]
    return [(start, end) for start, end, said in _said_spans(text) if not said and start < end]
