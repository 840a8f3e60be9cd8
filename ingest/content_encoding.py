"""Undo a request's ``Content-Encoding`` (gzip, deflate, br, zstd) within one work budget.

This runs before any key is checked, so its cost must be bounded by what we are willing to
spend on a stranger: every decoder shares one ``Budget`` (bytes produced by all layers
together, and gzip members / zstd frames), at most two encodings may be stacked, input is
fed in small pieces (a member boundary never re-copies the rest of the body, so many tiny
members cost linear time), and output stops one byte past the budget (a ratio bomb costs
the budget, not its expansion).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_LAYERS = 2  # "gzip, gzip" is odd but legal; a third layer is only ever an attack
MAX_MEMBERS = 16  # gzip members (and zstd frames) per request, over all layers
ZSTD_MAX_WINDOW = 8 * 1024 * 1024  # RFC 8878 s.3.1.1.1.2: HTTP decoders need at most 8 MB
PREFIX_LAYER_BYTES = 1024 * 1024  # an inner layer's output for decode_prefix
_PIECE = 16 * 1024  # input fed per step; bounds the copy zlib makes at a member's end
_OUT_STEP = 256 * 1024  # output produced per step
_ZSTD_MAX_RATIO = 32 * 1024  # 128 KiB block / 4 bytes
_NONZERO = re.compile(rb"[^\x00]")


class BodyError(ValueError):
    """The body cannot be decoded; ``loc`` and the message make the 400 answer."""

    status = 400

    def __init__(self, msg: str, loc: list[str | int] | None = None) -> None:
        super().__init__(msg)
        self.loc: list[str | int] = loc if loc is not None else ["body"]


class BodyTooLarge(BodyError):
    """The body, once decoded, is larger than allowed: a 413."""

    status = 413


class _Enough(Exception):
    """A prefix decode has all the output it asked for (see ``decode_prefix``)."""


@dataclass
class Budget:
    """What decoding one request may still cost: bytes produced and members started.

    With ``prefix`` set, running out of bytes (or input) ends the layer quietly: its output
    so far is ``self.out``.
    """

    limit: int
    out_bytes: int = 0
    members: int = MAX_MEMBERS
    prefix: bool = False
    out: bytearray = field(default_factory=bytearray)

    def __post_init__(self) -> None:
        self.out_bytes = self.limit

    def begin_layer(self) -> bytearray:
        self.out = bytearray()
        return self.out

    def room(self) -> int:
        """Most output to ask for in one step: one byte past the budget detects overflow."""
        return max(1, min(_OUT_STEP, self.out_bytes + 1))

    def spend(self, produced: bytes) -> None:
        self.out += produced
        self.out_bytes -= len(produced)
        if self.out_bytes < 0:
            if self.prefix:
                raise _Enough
            raise BodyTooLarge(f"body is larger than {self.limit} bytes once decompressed")

    def truncated(self, name: str) -> BodyError | _Enough:
        return _Enough() if self.prefix else BodyError(f"{name} body is truncated")

    def start_member(self, name: str) -> None:
        if self.members <= 0:
            raise BodyError(f"body has more than {MAX_MEMBERS} {name} members")
        self.members -= 1


def _inflate(data: bytes, wbits: int, budget: Budget, name: str, multi: bool) -> bytes:
    """zlib-family data, fed ``_PIECE`` bytes at a time; ``multi`` joins gzip members."""
    out = budget.begin_layer()
    pos = 0
    while True:
        budget.start_member(name)
        inflater = zlib.decompressobj(wbits)
        try:
            while not inflater.eof:
                if inflater.unconsumed_tail:
                    chunk = inflater.unconsumed_tail
                else:
                    chunk = data[pos : pos + _PIECE]
                    pos += len(chunk)
                produced = inflater.decompress(chunk, budget.room())
                budget.spend(produced)
                if not chunk and not produced and not inflater.eof:
                    raise budget.truncated(name)
        except zlib.error as exc:
            raise BodyError(f"body is not valid {name} data: {exc}") from None
        pos -= len(inflater.unused_data)  # a suffix of what was fed: where the next begins
        nonzero = _NONZERO.search(data, pos) if multi else None
        if nonzero is None:  # NUL padding after the last gzip member is tolerated
            return bytes(out)
        pos = nonzero.start()


def _gunzip(data: bytes, budget: Budget) -> bytes:
    return _inflate(data, 16 + zlib.MAX_WBITS, budget, "gzip", multi=True)


def _deflate(data: bytes, budget: Budget) -> bytes:
    """HTTP ``deflate`` is meant to be zlib-wrapped; some clients send raw deflate.

    The two-byte zlib header decides, so the body is decoded once, never twice.
    """
    zlib_header = len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
    wbits = zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS
    return _inflate(data, wbits, budget, "deflate", multi=False)


def _unbrotli(data: bytes, budget: Budget) -> bytes:
    try:
        import brotli  # only br bodies need it
    except ImportError:
        raise BodyError(
            "Content-Encoding br is not supported by this server (the brotli package is "
            "not installed); send gzip or an uncompressed body",
            ["header", "Content-Encoding"],
        ) from None
    budget.start_member("br")
    decompressor = brotli.Decompressor()
    out = budget.begin_layer()
    try:
        for start in range(0, len(data), _PIECE):
            # output_buffer_limit (brotli >= 1.2) bounds each step, like zlib's max_length.
            produced = decompressor.process(
                data[start : start + _PIECE], output_buffer_limit=budget.room()
            )
            budget.spend(produced)
            while not decompressor.can_accept_more_data():
                produced = decompressor.process(b"", output_buffer_limit=budget.room())
                budget.spend(produced)
    except brotli.error as exc:
        raise BodyError(f"body is not valid br data: {exc}") from None
    except TypeError:  # brotli < 1.2 has no output_buffer_limit, so no bomb defence
        raise BodyError(
            "Content-Encoding br needs brotli>=1.2 on this server; send gzip instead",
            ["header", "Content-Encoding"],
        ) from None
    if not decompressor.is_finished():
        raise budget.truncated("br")
    return bytes(out)


def _unzstd(data: bytes, budget: Budget) -> bytes:
    """Concatenated frames are joined, as the zstd CLI does; each frame is one member.

    ``decompressobj`` has no output bound per call, but a zstd block (at most 128 KiB of
    output) takes at least 4 bytes, so feeding ``budget / 32 Ki`` bytes per call bounds
    each step's output by the budget itself.
    """
    import zstandard

    decompressor = zstandard.ZstdDecompressor(max_window_size=ZSTD_MAX_WINDOW)
    piece = max(16, min(_PIECE, budget.out_bytes // _ZSTD_MAX_RATIO))
    out = budget.begin_layer()
    pos = 0
    while True:
        budget.start_member("zstd")
        frame = decompressor.decompressobj()
        try:
            while not frame.eof:
                chunk = data[pos : pos + piece]
                pos += len(chunk)
                if not chunk:
                    raise budget.truncated("zstd")
                produced = frame.decompress(chunk)
                budget.spend(produced)
        except zstandard.ZstdError as exc:
            raise BodyError(f"body is not valid zstd data: {exc}") from None
        pos -= len(frame.unused_data)
        if pos >= len(data):
            return bytes(out)


_DECODERS: dict[str, Callable[[bytes, Budget], bytes]] = {
    "gzip": _gunzip,
    "x-gzip": _gunzip,
    "deflate": _deflate,
    "br": _unbrotli,
    "zstd": _unzstd,
}


def codings(content_encoding: str | None) -> list[str]:
    """The header's codings in the order they were applied, ``identity`` left out."""
    names = [c.strip().lower() for c in (content_encoding or "").split(",")]
    return [name for name in names if name and name != "identity"]


def _checked(content_encoding: str | None) -> list[str]:
    applied = codings(content_encoding)
    for name in applied:
        if name not in _DECODERS:
            raise BodyError(
                f"unsupported Content-Encoding {name!r}; use gzip, deflate, br, zstd or identity",
                ["header", "Content-Encoding"],
            )
    if len(applied) > MAX_LAYERS:
        raise BodyError(
            f"{len(applied)} stacked Content-Encodings; at most {MAX_LAYERS} are accepted",
            ["header", "Content-Encoding"],
        )
    return applied


def decode(body: bytes, content_encoding: str | None, max_bytes: int) -> bytes:
    """The body with its encodings undone (last applied first), at most ``max_bytes`` long.

    Raises ``BodyError`` (400) for an unknown, stacked or broken encoding and
    ``BodyTooLarge`` (413) when the output, or the output of all layers together, would
    pass ``max_bytes``.
    """
    applied = _checked(content_encoding)
    if len(body) > max_bytes:
        raise BodyTooLarge(f"body is larger than {max_bytes} bytes")
    budget = Budget(max_bytes)
    data = bytes(body)
    for name in reversed(applied):
        data = _DECODERS[name](data, budget)
    return data


def decode_prefix(body: bytes, content_encoding: str | None, size: int) -> bytes:
    """The first ``size`` bytes of the decoded body (all of it if shorter), for what must be
    read before a key is checked: a stranger's body then costs ``size`` bytes of output
    (``PREFIX_LAYER_BYTES`` for an inner layer), never the full budget.

    A stream that ends early is not an error here (``decode`` says so once the key is
    good); an unknown encoding or data that is not the named format is.
    """
    applied = _checked(content_encoding)
    data = bytes(body)
    members = MAX_MEMBERS
    for step, name in enumerate(reversed(applied)):
        cap = size if step == len(applied) - 1 else PREFIX_LAYER_BYTES
        budget = Budget(cap, members=members, prefix=True)
        try:
            data = _DECODERS[name](data, budget)
        except _Enough:
            data = bytes(budget.out)
        members = budget.members
    return data[:size]
