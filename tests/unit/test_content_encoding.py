"""Bodies are decoded within one budget: bombs of every kind get a clear 400 or 413."""

from __future__ import annotations

import contextlib
import gzip
import random
import zlib

import brotli
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.content_encoding import (
    MAX_MEMBERS,
    BodyError,
    BodyTooLarge,
    decode,
    decode_prefix,
)

MiB = 1024 * 1024


def zstd(data: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(data)


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


ENCODERS = {
    "gzip": gzip.compress,
    "deflate": zlib.compress,
    "br": brotli.compress,
    "zstd": zstd,
}


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_each_encoding_round_trips(name):
    body = b'{"message": "boom"}\n' * 100
    assert decode(ENCODERS[name](body), name, MiB) == body


def test_raw_deflate_and_identity_and_case_are_understood():
    assert decode(raw_deflate(b"abc"), "deflate", MiB) == b"abc"
    assert decode(b"abc", "identity", MiB) == b"abc"
    assert decode(gzip.compress(b"abc"), " GZIP ", MiB) == b"abc"


def test_two_stacked_encodings_are_undone_last_applied_first():
    assert decode(brotli.compress(gzip.compress(b"abc")), "gzip, br", MiB) == b"abc"
    assert decode(gzip.compress(zstd(b"abc")), "zstd, gzip", MiB) == b"abc"


def test_concatenated_members_and_frames_are_joined():
    assert decode(gzip.compress(b"ab") + gzip.compress(b"cd") + b"\0\0", "gzip", MiB) == b"abcd"
    assert decode(zstd(b"ab") + zstd(b"cd"), "zstd", MiB) == b"abcd"


def test_many_member_bomb_is_a_400_naming_the_cap():
    # The probe: thousands of empty gzip members cost seconds of CPU before.
    bomb = gzip.compress(b"") * 5000
    with pytest.raises(BodyError, match=f"more than {MAX_MEMBERS} gzip members") as caught:
        decode(bomb, "gzip, gzip", MiB)
    assert caught.value.status == 400
    assert decode(gzip.compress(b"x") * MAX_MEMBERS, "gzip", MiB) == b"x" * MAX_MEMBERS


def test_many_zstd_frames_are_capped_too():
    with pytest.raises(BodyError, match="zstd members"):
        decode(zstd(b"") * (MAX_MEMBERS + 1), "zstd", MiB)


def test_members_count_over_both_layers():
    inner = gzip.compress(b"a") * (MAX_MEMBERS - 1)  # fits alone...
    assert decode(inner, "gzip", MiB) == b"a" * (MAX_MEMBERS - 1)
    with pytest.raises(BodyError, match="members"):  # ...not with its outer member counted
        decode(gzip.compress(inner) + gzip.compress(b""), "gzip, gzip", MiB)


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_ratio_bombs_are_a_413_without_inflating_them(name):
    bomb = ENCODERS[name](b"\0" * (64 * MiB))
    with pytest.raises(BodyTooLarge, match=f"larger than {MiB} bytes") as caught:
        decode(bomb, name, MiB)
    assert caught.value.status == 413


def test_nested_bomb_gzip_of_gzip_of_zeros_is_a_413():
    bomb = gzip.compress(gzip.compress(b"\0" * (256 * MiB)))
    assert len(bomb) < 64 * 1024
    with pytest.raises(BodyTooLarge):
        decode(bomb, "gzip, gzip", MiB)


def test_the_budget_is_shared_by_both_layers():
    # Each layer alone fits in 1000 bytes; together they produce more than 1000.
    inner = gzip.compress(b"y" * 600, compresslevel=0)  # stored: the middle layer is ~620 B
    assert 500 < len(inner) < 1000
    with pytest.raises(BodyTooLarge):
        decode(gzip.compress(inner), "gzip, gzip", 1000)
    assert decode(gzip.compress(inner), "gzip, gzip", 1300) == b"y" * 600


def test_a_body_exactly_at_the_cap_is_accepted_one_more_byte_is_not():
    assert decode(gzip.compress(b"x" * 1000), "gzip", 1000) == b"x" * 1000
    with pytest.raises(BodyTooLarge):
        decode(gzip.compress(b"x" * 1001), "gzip", 1000)
    with pytest.raises(BodyTooLarge):
        decode(b"x" * 1001, None, 1000)


def test_three_stacked_encodings_are_refused_by_header():
    body = gzip.compress(gzip.compress(gzip.compress(b"x")))
    with pytest.raises(BodyError, match="at most 2") as caught:
        decode(body, "gzip, gzip, gzip", MiB)
    assert caught.value.loc == ["header", "Content-Encoding"]
    assert decode(body[:0] + gzip.compress(b"x"), "identity, gzip, identity", MiB) == b"x"


@pytest.mark.parametrize("name", ["compress", "x-custom", "gzip;q=1"])
def test_unknown_encodings_are_a_400_on_the_header(name):
    with pytest.raises(BodyError, match="unsupported Content-Encoding") as caught:
        decode(b"{}", name, MiB)
    assert (caught.value.status, caught.value.loc) == (400, ["header", "Content-Encoding"])


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_truncated_streams_are_a_400(name):
    whole = ENCODERS[name](bytes(range(256)) * 64)
    with pytest.raises(BodyError) as caught:
        decode(whole[: len(whole) // 2], name, MiB)
    assert caught.value.status == 400
    assert name in str(caught.value)


def test_zstd_frames_needing_a_window_over_8_mib_are_refused():
    # 10 MiB repeating a 1 MiB random block: matches 1 MiB back need a big window.
    params = zstandard.ZstdCompressionParameters.from_level(1, window_log=27)
    packer = zstandard.ZstdCompressor(compression_params=params)
    with pytest.raises(BodyError, match="too much memory"):
        decode(packer.compress(random.randbytes(MiB) * 10), "zstd", 20 * MiB)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.binary(max_size=512),
    st.lists(st.sampled_from(["gzip", "deflate", "br", "zstd", "identity", "x"]), max_size=3),
)
def test_any_body_and_encodings_give_bytes_or_a_body_error(body, names):
    with contextlib.suppress(BodyError):
        assert len(decode(body, ", ".join(names), 4096)) <= 4096


# --- the prefix read before a key is checked ---------------------------------------------


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_a_prefix_of_a_ratio_bomb_is_just_the_prefix(name):
    bomb = ENCODERS[name](b"\0" * (64 * MiB))
    assert decode_prefix(bomb, name, 1000) == b"\0" * 1000


def test_a_prefix_of_a_nested_bomb_is_just_the_prefix():
    bomb = gzip.compress(gzip.compress(b"\0" * (256 * MiB)))
    assert decode_prefix(bomb, "gzip, gzip", 1000) == b"\0" * 1000


def test_a_prefix_of_a_short_or_truncated_body_is_what_there_is():
    whole = b'{"dsn": "x"}\n' + bytes(range(256)) * 64
    assert decode_prefix(gzip.compress(b"ab"), "gzip", 1000) == b"ab"
    assert decode_prefix(gzip.compress(whole)[:-100], "gzip", 13) == whole[:13]
    assert decode_prefix(whole, None, 13) == whole[:13]


@pytest.mark.parametrize(
    ("body", "coding", "why"),
    [
        (gzip.compress(b"") * 5000, "gzip", "members"),
        (b"{}", "compress", "unsupported"),
        (b"{}", "gzip, gzip, gzip", "at most 2"),
        (b"not gzip", "gzip", "not valid gzip"),
    ],
)
def test_a_prefix_still_refuses_what_decoding_would(body, coding, why):
    with pytest.raises(BodyError, match=why):
        decode_prefix(body, coding, 1000)
