"""The ingest spool keeps what was accepted while the database is away, and gives it back once.

Writers and replayers here are real processes where it matters (a dead writer, writers
appending while a replay runs, a replayer killed mid-replay), sharing one real directory.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from ingest.spool.directory import SUFFIX, Spool, SpoolFull
from ingest.spool.framing import encode

REPO = Path(__file__).resolve().parents[2]


def record(i: int, writer: str = "w", size: int = 40) -> dict:
    return {
        "project_id": 1,
        "source": "api",
        "event_id": f"{writer}-{i}",
        "payload": {"message": "x" * size, "n": i},
        "received_at": "2026-12-04T15:00:00Z",
    }


class Store:
    """An idempotent `write`, as the inbox's is: one row per event id, order of first arrival."""

    def __init__(self) -> None:
        self.rows: dict[str, dict] = {}
        self.calls = 0

    def __call__(self, records: list[dict]) -> None:
        self.calls += 1
        for r in records:
            self.rows.setdefault(r["event_id"], r)


def run_python(code: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=check,
    )


def test_replay_gives_records_back_in_the_order_they_were_appended(tmp_path):
    spool = Spool(tmp_path, 10**7)
    for i in range(0, 25, 5):
        spool.append([record(j) for j in range(i, i + 5)])
    chunks: list[list[dict]] = []
    assert spool.replay(chunks.append, chunk=7) == 25
    assert [len(c) for c in chunks] == [7, 7, 7, 4]
    assert [r["event_id"] for c in chunks for r in c] == [f"w-{i}" for i in range(25)]
    assert spool.replay(chunks.append) == 0  # removed once written
    assert list(tmp_path.iterdir()) == []


def test_size_and_count_say_what_waits_and_drop_to_zero_after_replay(tmp_path):
    spool = Spool(tmp_path, 10**7)
    assert (spool.size_bytes(), spool.count()) == (0, 0)
    records = [record(i) for i in range(12)]
    spool.append(records[:5])
    spool.append(records[5:])
    assert spool.size_bytes() == sum(len(encode(r)) for r in records)
    assert spool.count() == 12
    spool.append([record(99)])
    assert spool.count() == 13  # counted incrementally: only the new line is read
    spool.replay(Store())
    assert (spool.size_bytes(), spool.count()) == (0, 0)


def test_append_fsyncs_the_file_and_its_new_name_before_returning(tmp_path, monkeypatch):
    synced: list[str] = []
    real_fsync, real_fdatasync = os.fsync, os.fdatasync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    def fdatasync(fd: int) -> None:  # the data's (a file's size is in what it flushes)
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fdatasync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "fdatasync", fdatasync)
    spool = Spool(tmp_path / "spool", 10**7)
    spool.append([record(1)])
    (file,) = (tmp_path / "spool").iterdir()
    assert str(file) in synced  # the data
    assert str(tmp_path / "spool") in synced  # the directory entry of the new file
    synced.clear()
    spool.append([record(2)])
    assert synced == [str(file)]  # same file: one fsync, of the data


def test_what_append_returned_for_survives_the_writer_being_killed(tmp_path):
    """SIGKILL right after append returns: nothing of the process is flushed at exit."""
    proc = run_python(
        """
        import os, signal, sys
        from ingest.spool import Spool
        spool = Spool(sys.argv[1], 10**7)
        for i in range(50):
            spool.append([{"event_id": f"k-{i}", "payload": {"i": i}}])
        print("appended", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """,
        str(tmp_path),
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    store = Store()
    assert Spool(tmp_path, 10**7).replay(store) == 50
    assert list(store.rows) == [f"k-{i}" for i in range(50)]


def test_spool_full_is_refused_whole_with_retry_after_and_takes_records_again_once_drained(
    tmp_path,
):
    one = len(encode(record(0)))
    spool = Spool(tmp_path, 3 * one)
    spool.append([record(0), record(1)])
    with pytest.raises(SpoolFull) as refused:
        spool.append([record(2), record(3)])  # would be 4 records' worth
    assert refused.value.retry_after > 0
    assert "RCA_SPOOL_MAX_BYTES" in str(refused.value)
    assert spool.count() == 2  # nothing of the refused request was written
    spool.append([record(2)])  # exactly at the limit
    with pytest.raises(SpoolFull):
        spool.append([record(3)])
    store = Store()
    assert spool.replay(store) == 3
    spool.append([record(3)])
    assert spool.replay(store) == 1
    assert list(store.rows) == [f"w-{i}" for i in range(4)]


def test_a_torn_last_record_is_skipped_and_the_rest_replayed(tmp_path, caplog):
    spool = Spool(tmp_path, 10**7)
    spool.append([record(i) for i in range(3)])
    (file,) = tmp_path.iterdir()
    with file.open("ab") as f:  # a crash half-way through the fourth record
        f.write(encode(record(3))[:25])
    store = Store()
    assert spool.replay(store) == 3
    assert list(store.rows) == ["w-0", "w-1", "w-2"]
    assert "torn" in caplog.text
    assert not file.exists()


def test_a_corrupt_record_in_the_middle_loses_only_itself(tmp_path):
    spool = Spool(tmp_path, 10**7)
    spool.append([record(i) for i in range(3)])
    (file,) = tmp_path.iterdir()
    lines = file.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b"w-1", b"w-X")  # a flipped byte: the checksum disagrees
    file.write_bytes(b"".join(lines))
    store = Store()
    assert spool.replay(store) == 2
    assert list(store.rows) == ["w-0", "w-2"]


def test_a_dead_writers_file_is_replayed(tmp_path):
    run_python(
        """
        import os, sys
        from ingest.spool import Spool
        Spool(sys.argv[1], 10**7).append([{"event_id": f"dead-{i}"} for i in range(7)])
        os._exit(0)  # no cleanup of any kind
        """,
        str(tmp_path),
    )
    store = Store()
    assert Spool(tmp_path, 10**7).replay(store) == 7
    assert list(store.rows) == [f"dead-{i}" for i in range(7)]


def test_an_append_during_a_replay_neither_waits_nor_gets_lost(tmp_path):
    """The replay holds the writer's file while `write` runs: the writer starts another."""
    writer = Spool(tmp_path, 10**7)
    writer.append([record(0)])
    seen: list[str] = []

    def write(records: list[dict]) -> None:
        seen.extend(r["event_id"] for r in records)
        if len(seen) == 1:
            writer.append([record(1)])  # the file being replayed is locked by the replay

    replayer = Spool(tmp_path, 10**7)
    assert replayer.replay(write) == 1
    assert len(list(tmp_path.glob(f"*{SUFFIX}"))) == 1  # the writer's second file
    assert replayer.replay(write) == 1
    assert seen == ["w-0", "w-1"]
    writer.append([record(2)])  # that file was unlinked after its replay: a third one
    assert replayer.replay(write) == 1
    assert seen == ["w-0", "w-1", "w-2"]


WRITER = """
import sys
from ingest.spool import Spool
name, n = sys.argv[2], int(sys.argv[3])
spool = Spool(sys.argv[1], 10**9)
for i in range(n):
    # sizes vary so that appends straddle page boundaries; some requests carry 3 records
    size = (i * 7919) % 9000
    batch = [{"event_id": f"{name}-{i}-{k}", "payload": "p" * size} for k in range(1 + i % 3)]
    spool.append(batch)
"""


def test_concurrent_writer_processes_and_a_replay_lose_nothing_and_keep_each_writers_order(
    tmp_path,
):
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), f"p{w}", "150"], cwd=REPO)
        for w in range(4)
    ]
    spool = Spool(tmp_path, 10**9)
    order: list[str] = []

    def write(records: list[dict]) -> None:
        for r in records:
            assert r["payload"] == "p" * len(r["payload"])  # never a half-written record
            order.append(r["event_id"])

    while any(w.poll() is None for w in writers):
        spool.replay(write, chunk=13)
    assert all(w.returncode == 0 for w in writers)
    spool.replay(write)
    expected = {f"p{w}-{i}-{k}" for w in range(4) for i in range(150) for k in range(1 + i % 3)}
    assert len(order) == len(expected)  # no crash here, so each exactly once
    assert set(order) == expected
    for w in range(4):
        mine = [e for e in order if e.startswith(f"p{w}-")]
        keys = [tuple(int(x) for x in e.split("-")[1:]) for e in mine]
        assert keys == sorted(keys)
    assert spool.count() == 0
    assert not list(tmp_path.glob(f"*{SUFFIX}"))


def test_a_failing_write_keeps_its_chunk_and_the_next_replay_resumes_there(tmp_path):
    spool = Spool(tmp_path, 10**7)
    spool.append([record(i) for i in range(10)])
    store = Store()

    def database_goes_away_again(records: list[dict]) -> None:
        if store.calls == 1:  # the second chunk
            raise ConnectionError("database is away again")
        store(records)

    with pytest.raises(ConnectionError):
        spool.replay(database_goes_away_again, chunk=4)
    assert list(store.rows) == [f"w-{i}" for i in range(4)]
    assert spool.count() == 6  # the first chunk is done, the failed one is still here
    again = Store()
    assert spool.replay(again, chunk=4) == 6
    assert list(again.rows) == [f"w-{i}" for i in range(4, 10)]


def test_a_replayer_killed_after_write_replays_again_and_idempotent_writes_store_once(tmp_path):
    Spool(tmp_path, 10**7).append([record(i) for i in range(6)])
    written = tmp_path / "written.txt"
    proc = run_python(
        """
        import os, signal, sys
        from ingest.spool import Spool
        def write(records):
            with open(sys.argv[2], "a") as f:
                f.writelines(r["event_id"] + "\\n" for r in records)
            os.kill(os.getpid(), signal.SIGKILL)  # stored, but the spool never hears of it
        Spool(sys.argv[1], 10**7).replay(write)
        """,
        str(tmp_path),
        str(written),
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    store = Store()
    store([{"event_id": e} for e in written.read_text().split()])  # what the crash stored
    assert Spool(tmp_path, 10**7).replay(store) == 6  # all of it again: at least once
    assert sorted(store.rows) == sorted(f"w-{i}" for i in range(6))  # once each by event id


def test_one_fdatasync_answers_every_append_written_before_it_began(tmp_path, monkeypatch):
    """Group fsync: appends written while an fdatasync runs share the next one, and none
    returns before an fdatasync that began after its write ended."""
    spool = Spool(tmp_path, 10**7)
    spool.append([record(0)])  # the file exists; its fdatasync is done
    first_started, release = threading.Event(), threading.Event()
    calls: list[int] = []  # appends written when each fdatasync began
    real = os.fdatasync

    def fdatasync(fd: int) -> None:
        calls.append(spool._file.written if spool._file else -1)
        if len(calls) == 1:
            first_started.set()
            release.wait(30)
        real(fd)

    monkeypatch.setattr(os, "fdatasync", fdatasync)
    returned: list[int] = []
    threads = [
        threading.Thread(target=lambda i=i: (spool.append([record(i)]), returned.append(i)))
        for i in range(1, 9)
    ]
    threads[0].start()
    assert first_started.wait(30)
    for t in threads[1:]:
        t.start()
    while spool._file is None or spool._file.written < 9:  # all 8 written, 7 waiting
        time.sleep(0.001)
    assert returned == []  # nobody answered before its data was synced
    release.set()
    for t in threads:
        t.join(30)
    assert sorted(returned) == list(range(1, 9))
    assert calls == [2, 9]  # the first append's, then one for the seven written meanwhile
    store = Store()
    assert spool.replay(store) == 9


def test_a_failed_fdatasync_fails_its_appends_and_the_next_append_starts_a_new_file(
    tmp_path, monkeypatch
):
    spool = Spool(tmp_path, 10**7)
    spool.append([record(0)])

    def broken(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", broken)
    with pytest.raises(OSError):
        spool.append([record(1)])
    monkeypatch.undo()
    spool.append([record(2)])
    assert len(list(tmp_path.glob("*.spool"))) == 2  # the failed file is not written again
