"""Idempotency claims for JSON incidents spooled first: is this event id new on this host?

Issue 19: `POST /api/v1/incidents` answers 202 for a new incident and 200 for a retry of
one already accepted (`duplicate: true`). In the inbox table the unique (project,
event_id) index tells them apart. Spooled first (`spool_first.py`) the request writes no
row, so a retry that reaches another worker process while the first copy waits in the
spool would look new. A claim answers it across every process of the host: a file in
`<RCA_SPOOL_DIR>/claims/` named by a hash of the project and the event id, created by
link(2) of a file already locked (link fails when the name exists: one request wins),
kept until the processor has stored the incident (`release`, after its commit). Once it
is stored the database answers: a request that wins a claim asks for the event id with
one indexed SELECT (`spool_first.stored`) and answers 200 when it is there.

A claim's life:
- `take` creates it and holds its exclusive `flock` while the request spools its record
  durably; then `Claim.accepted` writes a byte into it and closes it (the lock goes). A
  failed spool `Claim.abandon`s it (unlinks it): a retry is new again.
- A retry that finds the name opens it and takes the lock: it waits out the first copy's
  request, as an INSERT waits out a conflicting one's transaction. Then: unlinked (the
  processor stored it, or the first copy failed): take it again; holding a byte: the first
  copy is on disk, answer 200; empty: its writer died before saying so, and nobody can
  tell whether its record reached the disk, so the retry takes the claim over, spools its
  own copy and answers 200 (storing is idempotent on event ids: one incident either way).
- The processor unlinks a record's claim after the commit that stored it; a crash between
  the two replays the spool file, which finds the incident stored and unlinks it then.

Claims are not fsync'd (a directory fsync per request would cost what the spool's shared
fdatasync saves): a process crash keeps them (the page cache survives), a power loss may
lose some, and a retry of an incident accepted just before one, not stored yet, is then
answered 202 (stored once all the same).

Several hosts: claims are per RCA_SPOOL_DIR. A retry that reaches another host while the
first copy waits unstored in the first host's spool finds no claim there and no stored
incident: it is answered 202 and spooled again, and the incident is stored once (event
ids). Once the first copy is stored (milliseconds when the processor keeps up) every host
answers 200 from the database. Hosts sharing one spool volume share the claims. Where a
retry must answer 200 on any host at any moment, set RCA_SPOOL_FIRST off: the inbox
table's unique index answers it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

#: The claims' directory inside RCA_SPOOL_DIR.
DIRECTORY = "claims"
_MARK = b"1"
_FLAGS = os.O_RDWR | os.O_CLOEXEC


def name(project_id: int, event_id: str) -> str:
    """The claim's file name: hex of a hash of the project and the event id (any byte of
    the id is safe in a name then, and ids of one length make names of one length)."""
    return hashlib.blake2b(f"{project_id}\0{event_id}".encode(), digest_size=20).hexdigest()


def directory(spool_dir: str | Path) -> str:
    return os.path.join(spool_dir, DIRECTORY)


@dataclass
class Claim:
    """A claim taken by this request. `new`: nobody on this host had claimed the event id
    (the caller asks the database whether it is stored); else a retry whose first copy
    died unconfirmed: spool this copy and answer 200. `fd` holds the lock."""

    path: str
    fd: int
    new: bool

    def accepted(self) -> None:
        """The record is on disk: mark the claim and let waiting retries see it."""
        try:
            os.pwrite(self.fd, _MARK, 0)
        finally:
            self._close()

    def abandon(self) -> None:
        """Nothing was accepted (or the incident is already stored): remove the claim."""
        try:
            with contextlib.suppress(FileNotFoundError):
                if os.fstat(self.fd).st_nlink > 0:
                    os.unlink(self.path)
        finally:
            self._close()

    def _close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # releases the flock
            self.fd = -1


def take(spool_dir: str | Path, project_id: int, event_id: str) -> Claim | None:
    """This request's claim on the event id, or None when another request accepted it
    already (on disk, not yet stored: answer 200). Waits while another request holds it."""
    folder = directory(spool_dir)
    path = os.path.join(folder, name(project_id, event_id))
    while True:
        fd, new = _create_locked(folder, path), True
        if fd < 0:  # claimed already: wait out its request, then see what it became
            try:
                fd, new = os.open(path, _FLAGS), False
            except FileNotFoundError:  # released between the two: try again
                continue
            fcntl.flock(fd, fcntl.LOCK_EX)
        claim = _checked(path, fd, new=new)
        if claim is None or claim.fd >= 0:
            return claim


def _create_locked(folder: str, path: str) -> int:
    """`path` created and locked before it has its name (a file of this thread's, locked,
    then linked, which fails if the name exists): nobody sees it unlocked. -1: it exists."""
    tmp = os.path.join(folder, f".{os.getpid()}-{threading.get_ident()}.new")
    while True:
        try:
            fd = os.open(tmp, _FLAGS | os.O_CREAT | os.O_TRUNC, 0o600)
            break
        except FileNotFoundError:  # the first claim on this host: no directory yet
            os.makedirs(folder, exist_ok=True)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.link(tmp, path)
    except FileExistsError:
        os.close(fd)
        return -1
    except BaseException:
        os.close(fd)
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return fd


def _checked(path: str, fd: int, *, new: bool) -> Claim | None:
    """The claim behind `fd` (locked), as it stands now: None when accepted by another;
    a Claim with fd -1 when it was unlinked meanwhile (take it again)."""
    try:
        stat = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if stat.st_nlink == 0:  # stored and released, or abandoned: the name is free again
        os.close(fd)
        return Claim(path, -1, new)
    if stat.st_size > 0:  # accepted by another request (a retry that won the race to lock
        os.close(fd)  # a claim just created counts too)
        return None
    return Claim(path, fd, new)


def release(spool_dir: str | Path, keys: list[tuple[int, str]]) -> None:
    """Unlink the claims of stored incidents (project id, event id); missing ones are fine."""
    folder = directory(spool_dir)
    for project_id, event_id in keys:
        try:
            os.unlink(os.path.join(folder, name(project_id, event_id)))
        except OSError as exc:
            if exc.errno != errno.ENOENT:
                raise


def count(spool_dir: str | Path) -> int:
    """Claims held on this host (accepted and not yet stored, or being accepted)."""
    try:
        return sum(1 for _ in os.scandir(directory(spool_dir)))
    except FileNotFoundError:
        return 0
