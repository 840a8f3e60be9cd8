"""An answer written in another framework's API than the one the incident's code runs.

"Use ``tf.keras.losses.BinaryCrossentropy(from_logits=True)``" cannot be applied to a
PyTorch training loop: the fix is right in TensorFlow and unusable here. The incident's
frameworks are the premises' (:func:`rca.suggestion.incident_setting.read_setting`); the
answer's are the packages its dotted code names (``tf.``, ``torch.nn.``, ``jnp.``), read with
the same package table (:data:`~rca.suggestion.incident_setting.PACKAGES` and its aliases).
Only frameworks that models are written in count, and names that run on several of them
(Keras 3) name none: ``rca/knowledge/model-frameworks.toml``. An answer that also names one
of the incident's frameworks (a conversion from one to the other) is left alone. Linear time:
RE2 (:mod:`ingest.linear_regex`) over at most :data:`MAX_SCAN_CHARS` characters.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterable
from pathlib import Path

from ingest.linear_regex import compile as linear
from rca.suggestion.checks import MAX_SCAN_CHARS
from rca.suggestion.incident_setting import ALIASES, PACKAGES
from rca.suggestion.negated_clauses import turned_down

__all__ = ["DATA", "answer_frameworks", "foreign_api_violations"]

DATA = Path(__file__).resolve().parents[2] / "knowledge" / "model-frameworks.toml"
#: A dotted reference in code: the name before the first dot (``tf`` of ``tf.keras.x``).
_MODULE_REF = linear(r"(?:^|[^\w.])([A-Za-z_][A-Za-z0-9_]*)\.[A-Za-z_]")


@functools.cache
def _table() -> tuple[frozenset[str], frozenset[str]]:
    with DATA.open("rb") as handle:
        table = tomllib.load(handle)
    return frozenset(table["frameworks"]), frozenset(table.get("shared_modules", []))


def answer_frameworks(action: str) -> set[str]:
    """The model frameworks whose packages ``action`` names in dotted code, in the parts it
    says (not those it turns down: "instead of ``tf.nn.sigmoid``")."""
    frameworks, shared = _table()
    text = action[:MAX_SCAN_CHARS]
    for start, end in turned_down(text):
        text = text[:start] + " " * (end - start) + text[end:]
    found = set()
    for match in _MODULE_REF.finditer(text):
        name = match.group(1)
        framework = PACKAGES.get(name) or ALIASES.get(name)
        if framework in frameworks and name not in shared:
            found.add(framework)
    return found


def foreign_api_violations(action: str, incident: Iterable[str]) -> list[str]:
    """Why ``action`` is written in a framework the incident's code (``incident``) does not
    run, naming none that it does (empty: it is not)."""
    frameworks, _ = _table()
    shown = set(incident) & frameworks
    named = answer_frameworks(action or "")
    if not shown or not named or named & shown:
        return []
    return [
        f"the answer is written in {', '.join(sorted(named))}'s API but the incident's code is"
        f" {', '.join(sorted(shown))}: say the fix in {', '.join(sorted(shown))}'s API"
    ]
