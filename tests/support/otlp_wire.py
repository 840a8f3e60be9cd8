"""OTLP protobuf by hand, for tests and bench/otlp_protobuf.py: the conversion the request
path used before its bounded walk (the reference the walk must agree with), and the wire
pieces (varints, length-delimited fields) to build bodies too large for message objects."""

from __future__ import annotations

import base64
from typing import Any

from google.protobuf.json_format import MessageToDict

_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(value: Any) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in _ID_FIELDS and isinstance(item, str):
                value[key] = base64.b64decode(item).hex()
            else:
                _hex_ids(item)
    elif isinstance(value, list):
        for item in value:
            _hex_ids(item)


def whole_conversion(message: Any) -> dict[str, Any]:
    """The whole export in OTLP JSON form, as `ingest/otlp/decode.py` made it before
    8ca7a2f: `MessageToDict` of everything, ids as hex."""
    out: dict[str, Any] = MessageToDict(message, use_integers_for_enums=True)
    _hex_ids(out)
    return out


def varint(value: int) -> bytes:
    """A protobuf base-128 varint."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(tag: int, data: bytes) -> bytes:
    """A length-delimited field: its tag byte, the length, the bytes."""
    return bytes([tag]) + varint(len(data)) + data
