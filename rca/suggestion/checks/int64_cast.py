"""A suggestion that casts inputs to int64 when the message says int64 is refused.

When :mod:`rca.suggestion.int64_refused` reads ``int64-refused`` (TensorRT "does not
natively support INT64", MPS "does not support ... int64 input", JAX "requested dtype int64
... not available", ONNX Runtime fed int64 where the graph takes int32, "int64 is not
supported"), "convert the ids to int64" (``.long()``, ``astype(np.int64)``,
``tf.cast(x, tf.int64)``, ``dtype=torch.int64``) goes the wrong way. Runbook steps that cast
to int64 carry the fact in ``unless``; this check catches the same action in any wording,
from any runbook or an LLM, so validation fails it whoever wrote it.

An action that names int32 too, or the option that makes the runtime take int64
(``jax_enable_x64``), is not failed: it names the way out. Linear time: RE2
(:mod:`ingest.linear_regex`) over at most :data:`MAX_SCAN_CHARS` characters.
"""

from __future__ import annotations

from collections.abc import Iterable

from ingest.linear_regex import compile as linear
from rca.suggestion.checks import MAX_SCAN_CHARS
from rca.suggestion.int64_refused import INT64_REFUSED

__all__ = ["casts_to_int64", "int64_violations"]

_CASTS = linear(
    r"\.long\(\)|astype\(\s*(?:np\.|numpy\.|jnp\.)?['\"]?int64['\"]?\s*\)"
    r"|\bdtype\s*=\s*(?:np\.|numpy\.|torch\.|tf\.|jnp\.)?['\"]?(?:int64|long)['\"]?"
    r"|\.to\(\s*(?:dtype\s*=\s*)?torch\.(?:int64|long)\s*\)"
    r"|\btf\.cast\([^()\n]{1,80},\s*(?:dtype\s*=\s*)?tf\.int64\s*\)"
    r"|\b(?:cast|casting|convert|converting|change|changing|turn|make|feed|pass|send)\b"
    r"[^.;\n]{0,60}?\b(?:to|as|into)\s+(?:an?\s+)?(?:`)?(?:np\.|torch\.|tf\.)?(?:int64|long"
    r"|Long|LongTensor|INT64|64-bit integers?)\b"
    r"|\b(?:ids|indices|labels|inputs?|tokens?)\s+as\s+(?:`)?(?:int64|long|INT64)\b",
    ignore_case=True,
)
#: The way out: 32-bit integers, or the option that makes the runtime take int64.
_WAY_OUT = linear(
    r"\bint32\b|\bINT32\b|\.int\(\)|\b32-bit\b|\benable_x64\b|\bjax_enable_x64\b",
    ignore_case=True,
)


def casts_to_int64(action: str) -> bool:
    """Whether ``action`` casts or converts something to int64 (Long)."""
    return bool(_CASTS.search((action or "")[:MAX_SCAN_CHARS]))


def int64_violations(action: str, facts: Iterable[str]) -> list[str]:
    """Why casting to int64 cannot fix this incident (empty: it may, or the action does
    not, or it names int32 or the runtime's int64 option too)."""
    if INT64_REFUSED not in set(facts) or not casts_to_int64(action):
        return []
    if _WAY_OUT.search((action or "")[:MAX_SCAN_CHARS]):
        return []
    return [
        "do not cast to int64: the message says 64-bit integer inputs are refused; cast to"
        " int32 (or the type the operation takes), or turn on the runtime's or exporter's"
        " option that accepts int64"
    ]
