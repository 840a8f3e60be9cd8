"""Decoding a Sentry envelope body into the events it carries.

The envelope endpoint is reachable by anything holding a public key, so every malformed,
truncated or oversized body must turn into one ``EnvelopeError`` (a 400 the SDK logs),
never a 500 and never an unbounded allocation.
See https://develop.sentry.dev/sdk/data-model/envelopes/ for the format.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
_CHUNK = 64 * 1024


class EnvelopeError(ValueError):
    """The body is not an envelope we can read; the message says why, for the 400 answer."""


class EnvelopeTooLarge(EnvelopeError):
    """The body passes ``max_bytes`` (before or after decompression): a 413, not a 400."""


def _too_large(max_bytes: int) -> EnvelopeError:
    return EnvelopeTooLarge(f"envelope is larger than {max_bytes} bytes once decompressed")


def _inflate(body: bytes, wbits: int, max_bytes: int, name: str) -> bytes:
    """Decompress zlib-family data without ever holding more than ``max_bytes`` of output.

    ``max_length`` bounds each step, so a zip bomb costs us ``max_bytes`` at most.
    Concatenated gzip members are accepted, as ``gzip.decompress`` does.
    """
    out = bytearray()
    data = body
    while True:
        inflater = zlib.decompressobj(wbits)
        try:
            while data:
                out += inflater.decompress(data, max_bytes + 1 - len(out))
                if len(out) > max_bytes:
                    raise _too_large(max_bytes)
                data = inflater.unconsumed_tail
        except zlib.error as exc:
            raise EnvelopeError(f"body is not valid {name} data: {exc}") from None
        if not inflater.eof:
            raise EnvelopeError(f"{name} body is truncated")
        data = inflater.unused_data
        if not (name == "gzip" and data.lstrip(b"\0")):
            return bytes(out)


def _deflate(body: bytes, max_bytes: int) -> bytes:
    """HTTP ``deflate`` is meant to be zlib-wrapped, but some clients send raw deflate."""
    try:
        return _inflate(body, zlib.MAX_WBITS, max_bytes, "deflate")
    except EnvelopeTooLarge:
        raise
    except EnvelopeError:
        return _inflate(body, -zlib.MAX_WBITS, max_bytes, "deflate")


def _unbrotli(body: bytes, max_bytes: int) -> bytes:
    try:
        import brotli  # only the envelope endpoint needs it, and only for br bodies
    except ImportError:
        raise EnvelopeError(
            "Content-Encoding br is not supported by this server (the brotli package is "
            "not installed); send gzip or an uncompressed body"
        ) from None
    decompressor = brotli.Decompressor()
    out = bytearray()
    try:
        for start in range(0, len(body), _CHUNK):
            piece = body[start : start + _CHUNK]
            # output_buffer_limit (brotli >= 1.2) bounds each step, like zlib's max_length.
            out += decompressor.process(piece, output_buffer_limit=_CHUNK)
            while len(out) <= max_bytes and not decompressor.can_accept_more_data():
                out += decompressor.process(b"", output_buffer_limit=_CHUNK)
            if len(out) > max_bytes:
                raise _too_large(max_bytes)
    except brotli.error as exc:
        raise EnvelopeError(f"body is not valid br data: {exc}") from None
    except TypeError:  # brotli < 1.2 has no output_buffer_limit, so no bomb defence
        raise EnvelopeError(
            "Content-Encoding br needs brotli>=1.2 on this server; send gzip instead"
        ) from None
    if not decompressor.is_finished():
        raise EnvelopeError("br body is truncated")
    return bytes(out)


def decode_body(
    body: bytes, content_encoding: str | None, max_bytes: int = DEFAULT_MAX_BYTES
) -> bytes:
    """Undo ``Content-Encoding`` (gzip, deflate, br, identity; a list is undone in reverse)."""
    if len(body) > max_bytes:
        raise EnvelopeTooLarge(f"envelope is larger than {max_bytes} bytes")
    codings = [c.strip().lower() for c in (content_encoding or "").split(",") if c.strip()]
    data = bytes(body)
    for coding in reversed(codings):
        if coding in ("gzip", "x-gzip"):
            data = _inflate(data, 16 + zlib.MAX_WBITS, max_bytes, "gzip")
        elif coding == "deflate":
            data = _deflate(data, max_bytes)
        elif coding == "br":
            data = _unbrotli(data, max_bytes)
        elif coding != "identity":
            raise EnvelopeError(
                f"unsupported Content-Encoding {coding!r}; use gzip, deflate, br or identity"
            )
    return data


def _json(raw: bytes, what: str) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise EnvelopeError(f"{what} is not valid JSON: {exc}") from None


def _item_length(header: dict, index: int) -> int | None:
    length = header.get("length")
    if length is None:
        return None
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        raise EnvelopeError(f"item {index} has an invalid length {length!r}")
    return length


def parse_envelope(data: bytes) -> tuple[dict, list[tuple[dict, bytes]]]:
    """Split an envelope into its header and ``(item_header, payload)`` pairs.

    A payload is exactly ``length`` bytes when the item header gives one (so it may contain
    newlines), otherwise it runs to the next newline. Blank lines between items and a
    trailing newline are tolerated, as Relay does.
    """
    data = bytes(data)
    end = data.find(b"\n")
    end = len(data) if end < 0 else end
    if not data[:end].strip():
        raise EnvelopeError("envelope is empty or has no header line")
    header = _json(data[:end], "envelope header")
    if not isinstance(header, dict):
        raise EnvelopeError("envelope header must be a JSON object")
    items: list[tuple[dict, bytes]] = []
    pos = end + 1
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        line = data[pos:end]
        pos = end + 1
        if not line.strip():
            continue
        index = len(items)
        item_header = _json(line, f"item {index} header")
        if not isinstance(item_header, dict):
            raise EnvelopeError(f"item {index} header must be a JSON object")
        length = _item_length(item_header, index)
        if length is None:
            end = data.find(b"\n", pos)
            end = len(data) if end < 0 else end
            payload = data[pos:end]
            pos = end + 1
        else:
            payload = data[pos : pos + length]
            if len(payload) < length:
                raise EnvelopeError(
                    f"item {index} is truncated: header says {length} bytes, {len(payload)} present"
                )
            pos += length
            if pos < len(data) and data[pos : pos + 1] != b"\n":
                raise EnvelopeError(f"item {index} is longer than its declared length {length}")
            pos += 1
        items.append((item_header, payload))
    return header, items


def events_from_envelope(data: bytes) -> list[dict]:
    """Return the error events in an envelope; sessions, transactions, attachments,
    client reports and any type we do not know are skipped, as a newer SDK may send them.
    """
    _, items = parse_envelope(data)
    events = []
    for index, (item_header, payload) in enumerate(items):
        if item_header.get("type") != "event":
            continue
        event = _json(payload, f"item {index} (event) payload")
        if not isinstance(event, dict):
            raise EnvelopeError(f"item {index} (event) payload must be a JSON object")
        events.append(event)
    return events
