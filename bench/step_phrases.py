"""Right runbook, wrong step: does the step restate the error's own phrase? Out of fold on dev.

    SECRET_KEY=x .venv/bin/python bench/step_choice.py --dump /tmp/steps.json
    .venv/bin/python bench/step_phrases.py --rows /tmp/steps.json [--signals restates,advice_code]

Two structural support signals (no word lists but the tokenizer's stopwords), computed from
the texts ``step_choice.py --dump`` keeps (the message, each candidate step as written) and
the corpus's runbooks (titles, every step):

- ``restates``: pairs of adjacent content words of the message's own sentences (not its
  sentences of advice, :data:`~rca.suggestion.providers.incident_view._ADVICE`) that the
  step's action (its bold text, every framework wording) also puts side by side, in either
  order ("Invalid rank for input" / "an input whose rank is invalid"), less the pairs its
  runbook's title or any other of its steps has: the error's phrase that this step alone
  restates, not the failure's name that every step of the runbook shares. Content words are
  the parts of identifiers and words (``CUDAHalfTensor`` -> cuda, half, tensor), lower-cased,
  ``-s`` plurals folded, tokenizer stopwords and bare numbers out.
- ``advice_code``: identifier-like names (snake_case, dotted, camelCase, with a digit, or a
  pin such as ``numpy<2``) that a message sentence of advice names and the step's backticked
  code names too: the message's own advice, followed by the step that spells it.

Each is added, times a weight chosen on the other folds from ``--values``, to the unchanged
score (``step_choice._cross_validate``: most fix terms in the action, then fewest
right-runbook-wrong-step, then the smallest weight); ``--seeds`` 5-fold splits, then one
fold per dev file (leave-one-file-out). ``--in-sample`` lists, per weight, the cases each
signal wins and loses on all dev rows.

Measured 2026-12-05, rows dumped at d0adf2a (265 dev cases: 178 fix terms in the best-guess
action, 32 right runbook with the wrong step) and at d5963d2 (295, with the fresh cases-ac:
189 and 40); out of fold, three 5-fold seeds / leave-one-file-out, no file worse in any:

- ``restates``: 265: 178 -> 178 / 178 / 178 / 178; 295: 189 -> 191 / 189 / 191 / 190. Not a
  signal: the folds choose +0.25 or -0.25, and on all 295 either sign wins 2 cases and
  loses none (one +0.25 win repeats another dev case's message, whose fix is the other step).
- ``advice_code``: 265: 178 -> 179 / 178 / 179 / 179; 295: 189 -> 191 in all four (weight
  0.75-1.0, cases-a and cases-ac +1 each). In sample 1.0 wins 3 and loses none on 295, but
  one win only spells the same pin as the step it displaces ("numpy<2" for "numpy to < 2").
  Two real cases, not more than two: not landed.
- Both jointly: 265: 178 -> 179 / 178 / 179 / 179; 295: 189 -> 193 / 192 / 193 / 192, which is
  ``advice_code``'s two plus ``restates``' sign-unstable ones.

Variants tried on the same rows, all within +1 in sample: pairs over the whole step (reason
too), three-word windows, only pairs no other candidate has, only words in at most a third of
the candidates, log lines' pairs too, message identifiers in the step's code, a step's
"when/if" clause met or unmet by the incident's words. A later step that restates the message
is as often a wrong one (a stopgap the message lists, the failure's name in a reason) as the
fix; position stays the best general prior.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from itertools import product
from pathlib import Path
from typing import Any

from _env import REPO
from step_choice import _choose, _cross_validate, _tally

_WORD = r"[A-Za-z][A-Za-z0-9]*"
_NAME = r"[A-Za-z_][A-Za-z0-9_.]*(?:[=<>]+[A-Za-z0-9_.]+)?"


@functools.cache
def _patterns() -> dict[str, Any]:
    from ingest.linear_regex import compile as linear

    return {
        "word": linear(_WORD),
        "name": linear(_NAME),
        "code": linear(r"`([^`]+)`"),
        "bold": linear(r"\*\*([^*]+)\*\*"),
    }


def _camel_parts(word: str) -> list[str]:
    """``CUDAHalfTensor`` -> CUDA, Half, Tensor; ``fp16`` stays whole."""
    parts, start = [], 0
    for i in range(1, len(word)):
        prev, cur, nxt = word[i - 1], word[i], word[i + 1 : i + 2]
        if cur.isupper() and (
            prev.islower() or prev.isdigit() or (prev.isupper() and nxt.islower())
        ):
            parts.append(word[start:i])
            start = i
    return [*parts, word[start:]]


def _fold(word: str) -> str:
    word = word.lower()
    if len(word) > 4 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def content_words(text: str) -> list[str]:
    """The content words of ``text`` in order (see the module docstring)."""
    from rca.retrieval.tokens import STOPWORDS

    out = []
    for word in _patterns()["word"].findall(text):
        for part in _camel_parts(word):
            folded = _fold(part)
            if len(folded) >= 2 and folded not in STOPWORDS and not folded.isdigit():
                out.append(folded)
    return out


def word_pairs(text: str) -> set[frozenset[str]]:
    """Adjacent content-word pairs of ``text``, unordered."""
    words = content_words(text)
    return {frozenset(p) for p in zip(words, words[1:], strict=False) if p[0] != p[1]}


def names(text: str) -> set[str]:
    """Identifier-like names of ``text``, lower-cased (with and without a pin or a dotted
    prefix: ``numpy<2`` gives ``numpy<2`` and ``numpy``)."""
    out: set[str] = set()
    for match in _patterns()["name"].findall(text):
        name = match.strip("._").lower()
        core = name.split("=")[0].split("<")[0].split(">")[0]
        pinned = core != name
        if len(core) >= 4 and ("_" in core or "." in core or pinned or _digit(core)):
            out |= {name, core, core.rsplit(".", 1)[-1]}
    for word in _patterns()["word"].findall(text):
        if len(word) >= 4 and any(c.isupper() for c in word[1:]) and any(c.islower() for c in word):
            out.add(word.lower())
    return {n for n in out if len(n) >= 4}


def _digit(text: str) -> bool:
    return any(c.isdigit() for c in text)


@functools.cache
def _runbooks(corpus: str) -> dict[str, tuple[str, list[str]]]:
    from rca.corpus.files import load_directory, remediation_steps

    return {rb.slug: (rb.title, remediation_steps(rb)) for rb in load_directory(corpus)}


def _signals(row: dict[str, Any], corpus: str) -> None:
    """Add ``restates`` and ``advice_code`` to each candidate's signals."""
    from rca.suggestion.providers.incident_view import _ADVICE, _sentences

    sentences = _sentences(row["message"])
    said: set[frozenset[str]] = set()
    advised: set[str] = set()
    for sentence in sentences:
        if _ADVICE.search(sentence):
            advised |= names(sentence)
        else:
            said |= word_pairs(sentence)
    for candidate in row["candidates"]:
        title, steps = _runbooks(corpus).get(candidate["runbook"], ("", []))
        common = word_pairs(title)
        for position, step in enumerate(steps):
            if position != candidate["position"]:
                common |= word_pairs(step)
        action = " ".join(_patterns()["bold"].findall(candidate["text"]))
        code = set().union(*(names(s) for s in _patterns()["code"].findall(candidate["text"])))
        candidate["signals"]["restates"] = float(len((said & word_pairs(action)) - common))
        candidate["signals"]["advice_code"] = float(len(advised & code))


def _by_file(plain: list[dict[str, Any]], names_: list[str], values: list[float]) -> None:
    """Leave-one-file-out: each dev file scored with the weights chosen on the others."""
    grid = [dict(zip(names_, c, strict=True)) for c in product(values, repeat=len(names_))]
    oof = {}
    for file in sorted({r["file"] for r in plain}):
        train = [r for r in plain if r["file"] != file]

        def objective(w: dict[str, float], rows: list[dict[str, Any]] = train) -> tuple[Any, ...]:
            hits, wrong = _tally(rows, [_choose(r["candidates"], w) for r in rows])
            return (hits, -wrong, -sum(abs(v) for v in w.values()))

        best = max(grid, key=objective)
        sub = [r for r in plain if r["file"] == file]
        oof.update({r["id"]: _choose(r["candidates"], best) for r in sub})
        b = _tally(sub, [_choose(r["candidates"], {}) for r in sub])
        a = _tally(sub, [oof[r["id"]] for r in sub])
        print(
            f"  {file:<18} {len(sub):>4} cases: {best}, action hits {b[0]} -> "
            f"{a[0]}, wrong step {b[1]} -> {a[1]}"
        )
    b = _tally(plain, [_choose(r["candidates"], {}) for r in plain])
    a = _tally(plain, [oof[r["id"]] for r in plain])
    print(
        f"  {'all':<18} {len(plain):>4} cases: action hits {b[0]} -> {a[0]}, "
        f"wrong step {b[1]} -> {a[1]}"
    )


def _in_sample(plain: list[dict[str, Any]], name: str, values: list[float]) -> None:
    base = [_choose(r["candidates"], {}) for r in plain]
    for value in values:
        chosen = [_choose(r["candidates"], {name: value}) for r in plain]
        pairs = list(zip(plain, base, chosen, strict=True))
        won = [r["id"] for r, b, c in pairs if c and c["hit"] and not (b and b["hit"])]
        lost = [r["id"] for r, b, c in pairs if b and b["hit"] and not (c and c["hit"])]
        print(f"  {name} {value}: {_tally(plain, chosen)} won {won} lost {lost}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", required=True, help="a step_choice.py --dump")
    parser.add_argument("--corpus", default=str(REPO / "rca" / "runbooks"))
    parser.add_argument("--signals", default="restates,advice_code")
    parser.add_argument("--values", default="-0.5,-0.25,0,0.25,0.5,0.75,1,1.5,2")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--in-sample", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    rows = [r for r in json.loads(Path(args.rows).read_text()) if not r["augmented"]]
    for row in rows:
        _signals(row, args.corpus)
    values = [float(v) for v in args.values.split(",")]
    names_ = args.signals.split(",")
    for name in names_:
        if args.in_sample:
            _in_sample(rows, name, values)
        for seed in range(args.seeds):
            print(f"{name}, 5-fold, seed {seed}:")
            _cross_validate(rows, [name], values, 5, seed)
        print(f"{name}, by file:")
        _by_file(rows, [name], values)
    if len(names_) > 1:
        for seed in range(args.seeds):
            print(f"{' + '.join(names_)} jointly, 5-fold, seed {seed}:")
            _cross_validate(rows, names_, values, 5, seed)
        print(f"{' + '.join(names_)} jointly, by file:")
        _by_file(rows, names_, values)


if __name__ == "__main__":
    main()
