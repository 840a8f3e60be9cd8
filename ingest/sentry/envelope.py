"""Decoding a Sentry envelope body into the events it carries.

The envelope endpoint is reachable by anything holding a public key, so every malformed,
truncated or oversized body must turn into one ``EnvelopeError`` (a 400 the SDK logs),
never a 500 and never an unbounded allocation.
See https://develop.sentry.dev/sdk/data-model/envelopes/ for the format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypedDict

from ingest import content_encoding
from ingest.json_depth import TooDeep, check_depth

DEFAULT_MAX_BYTES = 20 * 1024 * 1024
MAX_HEADER_BYTES = 64 * 1024  # an envelope or item header line; real ones are < 1 KiB
MAX_ITEMS = 1000
"""Items one envelope may hold. SDKs send a handful (an event with its attachments, one
sessions aggregate, a client report); each item costs a header parse (~9 us), so 20 MiB of
empty session items cost ~0.9 s for one rate-limit token before this bound (hardening
campaign, 2026-12-07). An envelope past it is refused whole, naming the first item over."""


class EnvelopeError(ValueError):
    """The body is not an envelope we can read; the message says why, for the 400 answer."""

    def __init__(self, msg: str, loc: list[str | int] | None = None) -> None:
        super().__init__(msg)
        self.loc: list[str | int] = loc if loc is not None else ["body"]


class EnvelopeTooLarge(EnvelopeError):
    """The body passes ``max_bytes`` (before or after decompression): a 413, not a 400."""


def decode_body(
    body: bytes, content_encoding_header: str | None, max_bytes: int = DEFAULT_MAX_BYTES
) -> bytes:
    """Undo ``Content-Encoding`` within ``content_encoding``'s bounds, as envelope errors."""
    try:
        return content_encoding.decode(body, content_encoding_header, max_bytes)
    except content_encoding.BodyTooLarge as exc:
        raise EnvelopeTooLarge(str(exc), exc.loc) from None
    except content_encoding.BodyError as exc:
        raise EnvelopeError(str(exc), exc.loc) from None


def decode_head(body: bytes, content_encoding_header: str | None) -> bytes:
    """Enough of the decoded body for ``read_header``, at the cost of that much output."""
    try:
        return content_encoding.decode_prefix(body, content_encoding_header, MAX_HEADER_BYTES + 1)
    except content_encoding.BodyError as exc:
        raise EnvelopeError(str(exc), exc.loc) from None


def load_json(raw: bytes, what: str, loc: list[str | int]) -> Any:
    """``json.loads`` that refuses deep nesting first (naming its path) and never raises
    anything but ``EnvelopeError``."""
    try:
        check_depth(raw, loc)
    except TooDeep as exc:
        raise EnvelopeError(f"{what}: {exc}", exc.loc) from None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        raise EnvelopeError(f"{what} is not valid JSON: {exc}", loc) from None


def _json(raw: bytes, what: str, loc: list[str | int] | None = None) -> Any:
    return load_json(raw, what, loc if loc is not None else ["body"])


def _item_length(header: dict[str, Any], index: int) -> int | None:
    length = header.get("length")
    if length is None:
        return None
    if isinstance(length, bool) or not isinstance(length, int) or length < 0:
        raise EnvelopeError(
            f"item {index} has an invalid length {length!r}",
            ["body", "items", index, "header", "length"],
        )
    return length


class Item(NamedTuple):
    header: dict[str, Any]  # a JSON object: ``type`` and ``length`` are the keys we read
    payload: bytes
    position: int  # index in the envelope, dropped items counted


def _header_line(data: bytes) -> tuple[dict[str, Any], int]:
    """The envelope header and where its line ends; a header line is small (Relay's are)."""
    end = data.find(b"\n", 0, MAX_HEADER_BYTES + 1)
    if end < 0:
        if len(data) > MAX_HEADER_BYTES:
            raise EnvelopeError(
                f"envelope header line is longer than {MAX_HEADER_BYTES} bytes",
                ["body", "header"],
            )
        end = len(data)
    if not data[:end].strip():
        raise EnvelopeError("envelope is empty or has no header line")
    header = _json(data[:end], "envelope header", ["body", "header"])
    if not isinstance(header, dict):
        raise EnvelopeError("envelope header must be a JSON object", ["body", "header"])
    return header, end


def read_header(data: bytes) -> dict[str, Any]:
    """Only the envelope header (where the DSN may be), read before the key is checked:
    the items are parsed once the key is known to be good."""
    return _header_line(bytes(data))[0]


class DroppedItem(TypedDict):
    """An item left out for its size, as the 200 answer and the log list it."""

    item: int
    type: str
    msg: str


@dataclass
class Envelope:
    """An envelope split into items; ``dropped`` lists the items over their size limit."""

    header: dict[str, Any]
    items: list[Item] = field(default_factory=list)
    dropped: list[DroppedItem] = field(default_factory=list)


def read_envelope(data: bytes, max_item_bytes: int | None = None) -> Envelope:
    """Split an envelope into its header and ``(item_header, payload)`` pairs.

    A payload is exactly ``length`` bytes when the item header gives one (so it may contain
    newlines), otherwise it runs to the next newline. Blank lines between items and a
    trailing newline are tolerated, as Relay does. An item longer than ``max_item_bytes``
    is left out and listed in ``dropped`` (Relay limits items one by one, so one large
    attachment never costs the event beside it).
    """
    data = bytes(data)
    header, end = _header_line(data)
    envelope = Envelope(header)
    pos = end + 1
    index = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        line = data[pos:end]
        pos = end + 1
        if not line.strip():
            continue
        if index >= MAX_ITEMS:
            raise EnvelopeError(
                f"an envelope may carry at most {MAX_ITEMS} items", ["body", "items", index]
            )
        if len(line) > MAX_HEADER_BYTES:
            raise EnvelopeError(
                f"item {index} header line is longer than {MAX_HEADER_BYTES} bytes",
                ["body", "items", index, "header"],
            )
        item_header = _json(line, f"item {index} header", ["body", "items", index, "header"])
        if not isinstance(item_header, dict):
            raise EnvelopeError(
                f"item {index} header must be a JSON object", ["body", "items", index, "header"]
            )
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
                    f"item {index} is truncated: header says {length} bytes, "
                    f"{len(payload)} present",
                    ["body", "items", index],
                )
            pos += length
            if pos < len(data) and data[pos : pos + 1] != b"\n":
                raise EnvelopeError(
                    f"item {index} is longer than its declared length {length}",
                    ["body", "items", index],
                )
            pos += 1
        if max_item_bytes is not None and len(payload) > max_item_bytes:
            envelope.dropped.append(
                {
                    "item": index,
                    "type": str(item_header.get("type"))[:64],
                    "msg": f"item is {len(payload)} bytes; the limit is {max_item_bytes}",
                }
            )
        else:
            envelope.items.append(Item(item_header, payload, index))
        index += 1
    return envelope


def parse_envelope(data: bytes) -> tuple[dict[str, Any], list[tuple[dict[str, Any], bytes]]]:
    """``read_envelope`` without item limits, as ``(header, items)``."""
    envelope = read_envelope(data)
    return envelope.header, [(item.header, item.payload) for item in envelope.items]


def events_from_envelope(data: bytes) -> list[dict[str, Any]]:
    """Return the error events in an envelope; sessions, transactions, attachments,
    client reports and any type we do not know are skipped, as a newer SDK may send them.
    """
    _, items = parse_envelope(data)
    events = []
    for index, (item_header, payload) in enumerate(items):
        if item_header.get("type") != "event":
            continue
        event = _json(payload, f"item {index} (event) payload", ["body", "items", index])
        if not isinstance(event, dict):
            raise EnvelopeError(
                f"item {index} (event) payload must be a JSON object", ["body", "items", index]
            )
        events.append(event)
    return events
