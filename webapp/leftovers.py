"""Nothing of `make run` outlives it, even when the supervisor itself is SIGKILLed.

The supervisor's Popen children get SIGTERM from the kernel when it dies
(PR_SET_PDEATHSIG, webapp/supervisor.py). The embedded PostgreSQL cannot: pg_ctl detaches
it, so its parent is init, not the supervisor. Two guards cover it:

* a **watchdog** process (`python -m webapp.leftovers DIR`) that the supervisor starts
  with a pipe on its stdin. The kernel closes the pipe when the supervisor dies, however
  it dies; the watchdog reads end-of-file and stops the cluster (fast shutdown). After a
  normal stop the cluster is already down and the watchdog just exits.
* a **lock** (`run.lock` in the data dir, held by the supervisor for its lifetime): the
  next `make run` takes it; a cluster of its data dir still running then belongs to no
  live run (its supervisor and watchdog both died), so it is stopped cleanly and started
  afresh. A second `make run` on a data dir in use is refused instead of sharing it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

LOCK_NAME = "run.lock"


class DataDirInUse(Exception):
    """Another live `make run` holds this data dir."""


def take_lock(state_dir: Path) -> int:
    """Hold `state_dir`'s run lock for the life of this process (the kernel drops it when
    the process dies, by any signal); the descriptor is not inherited by children."""
    state_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(state_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise DataDirInUse(
            f"another `make run` (pid {holder}) uses {state_dir}; stop it first, "
            "or give this one its own RCA_DATA_DIR"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def stop_stale_postgres(pgdata: Path) -> int | None:
    """With the run lock held: stop a cluster of `pgdata` that was running before this
    process started, so no live run owns it (fast shutdown: committed work is kept,
    clients are disconnected); its pid, or None. One this process's settings have just
    started is left alone."""
    import psutil

    from webapp import embedded

    pid = embedded.postmaster_pid(pgdata)
    if pid is None:
        return None
    try:
        if psutil.Process(pid).create_time() >= psutil.Process().create_time():
            return None
    except psutil.NoSuchProcess:
        return None
    embedded.stop(pgdata)
    return pid


def start_watchdog(pgdata: Path) -> subprocess.Popen[bytes]:
    """The watchdog for `pgdata`; keep the returned object (its stdin) for as long as the
    cluster must live. Its own session: a Ctrl-C meant for `make run` does not reach it."""
    return subprocess.Popen(
        [sys.executable, "-m", "webapp.leftovers", str(pgdata)],
        stdin=subprocess.PIPE,
        start_new_session=True,
    )


def watch(pgdata: Path) -> None:
    """Wait for the supervisor to go (end of file on stdin), then stop the cluster."""
    from webapp import embedded

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)  # only the pipe ends the watch
    with contextlib.suppress(OSError):
        while sys.stdin.buffer.read(4096):
            pass
    if embedded.is_running(pgdata):
        print(f"[run   ] supervisor gone; stopping PostgreSQL ({pgdata})", flush=True)
        embedded.stop(pgdata)


if __name__ == "__main__":
    watch(Path(sys.argv[1]))
