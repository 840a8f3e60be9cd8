"""The spool's record framing: any record reads back as written; a crash loses only what it cut.

Records are untrusted request content, so Hypothesis chooses them: any JSON object, any
text (control characters, lone surrogates, the framing's own separators), any nesting.
"""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from ingest.spool.framing import decode, encode, read_records

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
records = st.dictionaries(st.text(), json_values, max_size=6)


def read_all(data: bytes) -> list[dict]:
    return [record for record, _ in read_records(io.BytesIO(data))]


@given(records)
def test_any_record_reads_back_as_written_on_one_line(record):
    line = encode(record)
    assert line.count(b"\n") == 1 and line.endswith(b"\n")
    assert decode(line) == record


@given(st.lists(records, max_size=8), st.data())
def test_a_crash_at_any_byte_loses_only_the_record_it_cut(written, data):
    lines = [encode(r) for r in written]
    stream = b"".join(lines)
    cut = data.draw(st.integers(0, len(stream)), label="bytes on disk")
    complete, end = 0, 0
    for line in lines:
        if end + len(line) > cut:
            break
        end += len(line)
        complete += 1
    assert read_all(stream[:cut]) == written[:complete]


@given(st.lists(records, min_size=1, max_size=6), st.binary(max_size=200), st.data())
def test_garbage_between_records_loses_only_itself(written, garbage, data):
    lines = [encode(r) for r in written]
    at = data.draw(st.integers(0, len(lines)), label="position")
    damaged = b"".join(lines[:at]) + garbage + b"\n" + b"".join(lines[at:])
    # the garbage is never taken for a record (its checksum), and what follows it reads
    assert read_all(damaged) == written


@given(st.binary(max_size=300))
def test_any_bytes_decode_to_a_record_or_none_never_an_exception(line):
    assert decode(line) is None or isinstance(decode(line), dict)
    assert decode(line + b"\n") is None or isinstance(decode(line + b"\n"), dict)
