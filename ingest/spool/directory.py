"""The spool directory: each process appends to files of its own; replay drains them all.

Files are named ``<ns since epoch>-<host>-<pid>.spool`` and written by one process only.
A writer holds an exclusive `flock` only while it appends and fsyncs; replay takes the
same lock, without waiting, before it reads a file, and unlinks the file (still locked)
once `write` has taken every record. A writer that finds its file locked by a replay, or
unlinked, starts a new file instead of waiting: a request never waits on a replay, nobody
reads a half-written record, and nothing lands in a file that is gone. `.done` next to a
file says how far a replay interrupted by a failing `write` got.

Group fsync (issue 19: the Sentry path spools first, `ingest.inbox.accept`): a writer
holds the lock only while it writes; its fdatasync comes after, outside the process's
lock, and one fdatasync answers every thread whose records were written before it began
(`_File.sync`), as the inbox's group commit shares one WAL flush. `append` still returns
only once its records are on disk. A replay may read a record whose fdatasync has not
ended: it stores it durably in the database before it unlinks the file, so what the
writer then acknowledges is durable either way.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ingest.spool.framing import Record, encode, read_records

SUFFIX = ".spool"
DONE = ".done"  # sidecar: byte offset up to which the file has been replayed
NEW = ".new"  # a file being created (hidden, locked, then renamed to its name)
RETRY_AFTER = 30  # seconds a client is told to wait when the spool is full
CHUNK = 500  # records handed to `write` at a time
SIZE_CHECK_SECONDS = 0.5  # while far from RCA_SPOOL_MAX_BYTES, how stale its size may be
_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


class SpoolFull(Exception):
    """The spool would exceed RCA_SPOOL_MAX_BYTES (or the disk is full): answer 503."""

    def __init__(self, message: str, retry_after: int = RETRY_AFTER) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _File:
    """One open spool file of this process, and how much of what was written to it is
    known durable: `sync` is the group fsync. The descriptor is closed once the file is
    given up (`retire`) and no writer still waits for its fdatasync."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.written = 0  # appends written (under the spool's lock)
        self.synced = 0  # appends known durable (under `lock`)
        self.pending = 0  # appends written and not yet synced or failed (under the spool's lock)
        self.failed: OSError | None = None  # a failed fdatasync: nothing here can be trusted
        self.retired = False
        self.lock = threading.Lock()

    def sync(self, mine: int) -> None:
        """Return once append number `mine` is on disk: one fdatasync for every append
        written before it began. Raises the OSError of a failed fdatasync."""
        with self.lock:
            if self.failed is not None:
                raise self.failed
            if self.synced >= mine:
                return
            upto = self.written  # appends before this point are complete in the page cache
            try:
                os.fdatasync(self.fd)
            except OSError as exc:
                self.failed = exc
                raise
            self.synced = upto


class Spool:
    """One spool directory; one instance per process (it owns this process's file)."""

    def __init__(self, directory: Path | str, max_bytes: int) -> None:
        self.directory = Path(directory)
        self.max_bytes = max_bytes
        self._fd: int | None = None
        self._file: _File | None = None  # `_fd`'s group fsync
        self._pid = 0
        self._lock = threading.Lock()  # threads of one process share its file
        self._count_lock = threading.Lock()
        self._counted: dict[str, tuple[int, int, int, int]] = {}  # name: ino, from, to, n
        self._used = 0  # bytes in the directory at the last look, plus this process's since
        self._used_at = float("-inf")  # when it looked (monotonic)

    # --- writing --------------------------------------------------------------------------

    def append(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Write `records` durably (fdatasync'd) before returning; SpoolFull if over the
        limit.

        The limit is checked against every file in the directory, looked at again at most
        every SIZE_CHECK_SECONDS while far from it (half the limit) and at every append
        near it; processes appending at the same instant may overshoot it by one request
        each.
        """
        if not records:
            return
        data = b"".join(encode(record) for record in records)
        with self._lock:
            used = self._size_now(len(data))
            if used + len(data) > self.max_bytes:
                raise SpoolFull(
                    f"the spool holds {used} bytes of its {self.max_bytes} (RCA_SPOOL_MAX_BYTES)"
                )
            fd = self._locked_file()
            file = self._file
            assert file is not None and file.fd == fd
            try:
                self._write(fd, data)
            finally:
                if self._fd == fd:
                    fcntl.flock(fd, fcntl.LOCK_UN)
            self._used += len(data)
            file.written += 1
            file.pending += 1
            mine = file.written
        try:
            file.sync(mine)
        except OSError as exc:
            with self._lock:
                self._abandon(file)  # after a failed fdatasync nothing in it can be trusted
            if exc.errno in _FULL_ERRNOS:
                raise SpoolFull(f"the spool's disk is full ({exc})") from exc
            raise
        finally:
            with self._lock:
                file.pending -= 1
                self._close_if_done(file)

    def _size_now(self, adding: int) -> int:
        """Bytes in the directory: looked at again when the last look is older than
        SIZE_CHECK_SECONDS or the append would come near the limit (under the lock)."""
        now = time.monotonic()
        near = self._used + adding > self.max_bytes // 2
        if near or now - self._used_at > SIZE_CHECK_SECONDS:
            self._used, self._used_at = self.size_bytes(), now
        return self._used

    def _locked_file(self) -> int:
        """This process's file, exclusively locked; a new one if a replay holds or took it."""
        if self._fd is not None and self._pid == os.getpid():  # forked: the file is the parent's
            fd = self._fd
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # a replay is reading it: do not wait, start another
                self._abandon(self._file)
            else:
                if os.fstat(fd).st_nlink > 0:
                    return fd
                self._abandon(self._file)  # replayed and unlinked since our last append
        self._fd, self._file = None, None
        return self._open_new()

    def _open_new(self) -> int:
        """A new file, locked before its name is one replay looks for: a replay never takes
        a file from under its writer before the first record is in it."""
        self.directory.mkdir(parents=True, exist_ok=True)
        name = f"{time.time_ns():020d}-{socket.gethostname()}-{os.getpid()}{SUFFIX}"
        hidden = self.directory / f".{name}{NEW}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC
        fd = os.open(hidden, flags, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # nobody else knows the name yet: at once
        hidden.rename(self.directory / name)
        _fsync_dir(self.directory)  # the new name survives a crash too
        self._fd, self._file, self._pid = fd, _File(fd), os.getpid()
        return fd

    def _write(self, fd: int, data: bytes) -> None:
        """Write `data` whole (its fdatasync is `_File.sync`'s, after the lock)."""
        start = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except OSError as exc:
            with contextlib.suppress(OSError):  # no half record where the next would follow
                os.ftruncate(fd, start)
            self._abandon(self._file)  # after a failed write nothing about it can be trusted
            if exc.errno in _FULL_ERRNOS:
                raise SpoolFull(f"the spool's disk is full ({exc})") from exc
            raise

    def _abandon(self, file: _File | None) -> None:
        """Stop appending to `file` (under the lock); its descriptor is closed once no
        writer waits for its fdatasync (closing releases our flock, if held)."""
        if file is None:
            return
        if self._file is file:
            if self._pid == os.getpid():
                with contextlib.suppress(OSError):
                    fcntl.flock(file.fd, fcntl.LOCK_UN)
            self._fd, self._file = None, None
        file.retired = True
        self._close_if_done(file)

    def _close_if_done(self, file: _File) -> None:
        if file.retired and file.pending <= 0 and file.fd >= 0:
            if self._pid == os.getpid():
                with contextlib.suppress(OSError):
                    os.close(file.fd)
            file.fd = -1

    # --- replaying ------------------------------------------------------------------------

    def replay(self, write: Callable[[list[Record]], None], *, chunk: int = CHUNK) -> int:
        """Hand every spooled record to `write`, in order, `chunk` at a time; return how many.

        A file is removed only after `write` returned for all of it; if `write` raises, the
        exception propagates and the next call resumes after the last chunk it took. A file
        being appended to at this instant is left for the next call.
        """
        replayed = 0
        for path in self._files():
            replayed += self._replay_file(path, write, chunk)
        self._remove_stale_sidecars()
        return replayed

    def _replay_file(self, path: Path, write: Callable[[list[Record]], None], chunk: int) -> int:
        try:
            stream = path.open("rb")
        except FileNotFoundError:  # another replayer finished it
            return 0
        with stream:
            try:
                fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # its writer is mid-append, or another replayer has it
                return 0
            if os.fstat(stream.fileno()).st_nlink == 0:
                return 0
            stream.seek(_done_offset(path))
            replayed, batch = 0, []
            for record, end in read_records(stream, path.name):
                batch.append(record)
                if len(batch) >= chunk:
                    write(batch)
                    replayed += len(batch)
                    batch = []
                    _set_done_offset(path, end)
            if batch:
                write(batch)
                replayed += len(batch)
            path.unlink()  # still locked: no writer can have appended since we read
            path.with_name(path.name + DONE).unlink(missing_ok=True)
        return replayed

    def _remove_stale_sidecars(self) -> None:
        for done in self.directory.glob(f"*{SUFFIX}{DONE}"):
            if not done.with_name(done.name.removesuffix(DONE)).exists():
                done.unlink(missing_ok=True)
        for new in self.directory.glob(f".*{SUFFIX}{NEW}"):  # a writer died before renaming
            with contextlib.suppress(OSError):
                if time.time() - new.stat().st_mtime > 60:
                    new.unlink()

    # --- measuring ------------------------------------------------------------------------

    def _files(self) -> list[Path]:
        try:
            return sorted(self.directory.glob(f"*{SUFFIX}"))
        except FileNotFoundError:
            return []

    def size_bytes(self) -> int:
        """Bytes waiting for replay in the whole directory (every process's files)."""
        total = 0
        for path in self._files():
            try:
                total += max(0, path.stat().st_size - _done_offset(path))
            except FileNotFoundError:
                continue
        return total

    def count(self) -> int:
        """Records waiting for replay (complete lines past each file's replayed offset).

        Counting reads each file once: what was counted before is remembered by inode and
        offset, so a scrape during a long outage reads only what was appended since.
        """
        total = 0
        with self._count_lock:
            seen: dict[str, tuple[int, int, int, int]] = {}
            for path in self._files():
                try:
                    total += self._count_file(path, seen)
                except FileNotFoundError:
                    continue
            self._counted = seen
        return total

    def _count_file(self, path: Path, seen: dict[str, tuple[int, int, int, int]]) -> int:
        start = _done_offset(path)
        with path.open("rb") as stream:
            stat = os.fstat(stream.fileno())
            ino, size = stat.st_ino, stat.st_size
            known = self._counted.get(path.name)
            if known and known[0] == ino and known[1] == start and known[2] <= size:
                _, _, offset, n = known
            else:
                offset, n = start, 0
            stream.seek(offset)
            while block := stream.read(1 << 20):
                n += block.count(b"\n")
                offset += len(block)
        seen[path.name] = (ino, start, offset, n)
        return n


def _done_offset(path: Path) -> int:
    try:
        return int(path.with_name(path.name + DONE).read_text() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def _set_done_offset(path: Path, offset: int) -> None:
    """Not fsync'd: losing it only means replaying some records again, which is harmless."""
    part = path.with_name(path.name + DONE + ".tmp")
    part.write_text(str(offset))
    part.replace(path.with_name(path.name + DONE))


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --- the process's spool, from settings ---------------------------------------------------

_default: Spool | None = None
_default_lock = threading.Lock()


def default() -> Spool:
    """This process's spool in RCA_SPOOL_DIR, limited to RCA_SPOOL_MAX_BYTES."""
    global _default
    from django.conf import settings

    directory = Path(settings.RCA_SPOOL_DIR)
    limit = int(settings.RCA_SPOOL_MAX_BYTES)
    with _default_lock:
        if _default is None or _default.directory != directory or _default.max_bytes != limit:
            _default = Spool(directory, limit)
        return _default
