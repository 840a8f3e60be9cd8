"""How a spooled record is framed on disk: one checksummed JSON line, readable after a crash.

``<crc32 of the json as 8 hex digits> <json>\\n``. `json.dumps` escapes every control
character, so a record never holds a newline: a line that a crash cut short has no
newline (or fails its checksum) and is skipped, and every line after it still reads.
"""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import Iterator, Mapping
from typing import IO, Any

log = logging.getLogger(__name__)

Record = dict[str, Any]
_HEX = b"0123456789abcdef"


def encode(record: Mapping[str, Any]) -> bytes:
    """One record as one checksummed line."""
    body = json.dumps(record, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return b"%08x %s\n" % (zlib.crc32(body), body)


def decode(line: bytes) -> Record | None:
    """The record on a complete line (newline included), or None if it is torn or corrupt."""
    if len(line) < 11 or line[8:9] != b" " or not line.endswith(b"\n"):
        return None
    head, body = line[:8], line[9:-1]
    if head.strip(_HEX) or int(head, 16) != zlib.crc32(body):
        return None
    try:
        record = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def read_records(stream: IO[bytes], name: str = "spool") -> Iterator[tuple[Record, int]]:
    """Each good record from the stream's position on, with the offset just after it."""
    while line := stream.readline():
        record = decode(line)
        if record is not None:
            yield record, stream.tell()
        elif not line.endswith(b"\n"):
            log.warning("%s: skipped a torn last record (%d bytes)", name, len(line))
        else:
            log.error("%s: skipped a corrupt record (%d bytes)", name, len(line))
