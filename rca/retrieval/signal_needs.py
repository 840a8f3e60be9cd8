"""The setting a runbook's signal needs before it counts: names the incident must show (pure).

A signal regex matches the incident's ``error_type: message``. Some messages are raised in
many settings while a runbook fixes only one of them: "Cannot copy out of meta tensor; no
data!" comes from any model left on the meta device, and an FSDP page's fix (turn off
RAM-efficient loading) is the answer only when FSDP runs. Such a signal carries ``needs``
in the runbook's front matter (docs/RUNBOOKS.md)::

    signals:
      - regex: 'Cannot copy out of meta tensor; no data!'
        needs: [fsdp, FullyShardedDataParallel]
      - 'fsdp_cpu_ram_efficient_loading'

and counts only when the incident names one of them somewhere: its error type and
message, earlier exceptions of the chain, any frame (file name without the user's
directories, module, function, source line), any log line, the inference context
(``framework``, ``model_id``, ...), the tags and the model id. Without that evidence the
signal does not fire, so the runbook gets no signal prior from it (retrieval still ranks
it on its words); with it, the signal adds its prior as before.

Names are read like a step's ``Applies: frameworks`` (names as code and logs print them)
and matched on both sides by :func:`rca.retrieval.tokens.tokenize`, the tokeniser BM25
uses: case folded, and an identifier counts as itself and as its parts, so ``fsdp`` is
named by ``torch.distributed.fsdp``, ``FSDP_CPU_RAM_EFFICIENT_LOADING`` and ``[FSDP]``;
``FullyShardedDataParallel`` by that class name. A name of several words
(``text-generation-inference``) needs each of its words. Nothing here runs a regex of a
runbook's over incident text, and the tokeniser is RE2 (linear time).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rca.retrieval.frame_paths import evidence_path, evidence_text
from rca.retrieval.tokens import tokenize

__all__ = [
    "MAX_EVIDENCE_CHARS",
    "Needs",
    "incident_terms",
    "incident_text",
    "need_words",
    "needs_met",
    "signal_entry",
    "terms_of",
]

#: One signal's needs: each name as its words (tokens); any one name met is enough.
Needs = tuple[tuple[str, ...], ...]
#: The incident text read for names, at most (logs can be long; the head says the setting).
MAX_EVIDENCE_CHARS = 200_000
_NAME_SPLIT = re.compile(r"[\s/-]+")  # a runbook's own names, never incident text


def need_words(name: str) -> tuple[str, ...]:
    """The words a need name must all be among the incident's terms for (``()`` when it
    has none the tokeniser keeps: a stop word or a bare number, refused at load)."""
    words: list[str] = []
    for piece in _NAME_SPLIT.split(name.strip()):
        tokens = tokenize(piece)
        if tokens and tokens[0] not in words:
            words.append(tokens[0])
    return tuple(words)


def needs_met(needs: Needs, terms: frozenset[str] | set[str]) -> bool:
    """True when ``needs`` is empty or the incident's ``terms`` hold one of its names."""
    return not needs or any(all(word in terms for word in words) for words in needs)


def signal_entry(entry: str | Mapping[str, Any]) -> tuple[str, Needs]:
    """(regex, needs) of one stored signal: a regex, or ``{regex, needs}`` as written in
    front matter (the database keeps that form, :mod:`rca.corpus.store`)."""
    if isinstance(entry, str):
        return entry, ()
    names = [str(name) for name in entry.get("needs") or []]
    return str(entry["regex"]), tuple(w for w in (need_words(n) for n in names) if w)


def _get(obj: Any, name: str) -> Any:
    value = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return value


def _values(mapping: Any) -> list[str]:
    """Keys and scalar values of a dict (tags, inference context), as text."""
    if not isinstance(mapping, dict):
        return []
    texts = []
    for key, value in mapping.items():
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            texts.append(f"{key} {value}")
        elif isinstance(value, bool) and value:
            texts.append(str(key))
    return texts


def _incident_texts(incident: Any) -> Iterable[str]:
    yield str(_get(incident, "error_type") or "")
    yield evidence_text(str(_get(incident, "message") or ""))
    for exc in _get(incident, "exceptions") or []:
        if not isinstance(exc, dict):
            continue
        yield f"{exc.get('type') or ''} {evidence_text(str(exc.get('message') or ''))}"
        for frame in exc.get("frames") or []:
            if isinstance(frame, dict):
                yield " ".join(
                    [
                        evidence_path(str(frame.get("filename") or "")),
                        *(str(frame.get(k) or "") for k in ("module", "function", "context_line")),
                    ]
                )
    for entry in _get(incident, "logs") or []:
        text = entry.get("message") if isinstance(entry, dict) else entry
        yield evidence_text(str(text or ""))
    yield from _values(_get(incident, "inference_context"))
    yield from _values(_get(incident, "tags"))
    yield str(_get(incident, "model_id") or "")


def incident_text(incident: Any, texts: Sequence[str] = ()) -> str:
    """Every text the incident says its setting in (see the module docstring), one per line,
    read from an Incident or anything with its attributes or dict keys; ``texts`` first
    (the message as retrieval split it from its type). At most :data:`MAX_EVIDENCE_CHARS`
    characters: cheap to build; :func:`terms_of` reads it only when a gated regex matched."""
    kept: list[str] = []
    budget = MAX_EVIDENCE_CHARS
    for text in [*texts, *_incident_texts(incident)]:
        if budget <= 0:
            break
        if text:
            kept.append(text[:budget])
            budget -= len(kept[-1]) + 1
    return "\n".join(kept)


def terms_of(text: str) -> frozenset[str]:
    """The terms a setting text names (:func:`rca.retrieval.tokens.tokenize`)."""
    return frozenset(tokenize(text))


def incident_terms(incident: Any, texts: Sequence[str] = ()) -> frozenset[str]:
    """Every term the incident names: :func:`terms_of` its :func:`incident_text`."""
    return terms_of(incident_text(incident, texts))
