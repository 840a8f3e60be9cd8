"""Embedded PostgreSQL 16 + pgvector (pgserver) so a fresh clone runs with no services installed.

Every process (web, worker, manage.py, pytest) calls `database_url()`; the first one
initialises `.data/pg` and starts the server, the others find it running and reuse it.
The server outlives the process that started it (`cleanup_mode=None`) because the web
server and the worker share it; whoever owns the lifetime (`manage.py run`, the test
session) calls `stop()` explicitly, and a one-shot `manage.py` command stops the one it
started itself (`webapp.one_shot`).
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
import warnings
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

log = logging.getLogger(__name__)
# pgserver asks platformdirs for a runtime dir; its fallback warning is noise here.
warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")


def state_dir() -> Path:
    """Local state of this instance (`RCA_DATA_DIR`, default `.data/`): pg, credentials, beat."""
    return Path(os.environ.get("RCA_DATA_DIR") or BASE_DIR / ".data").resolve()


def data_dir() -> Path:
    """Where the embedded cluster lives."""
    return state_dir() / "pg"


def postmaster_pid(pgdata: Path | None = None) -> int | None:
    """The pid of a live postmaster for `pgdata`, else None (cheap: reads postmaster.pid).

    A postmaster killed with SIGKILL leaves its pid file behind, and may linger as a
    zombie until its (adopting) parent reaps it: neither counts as running.
    """
    import psutil

    try:
        pid = int((pgdata or data_dir()).joinpath("postmaster.pid").read_text().split()[0])
        return None if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE else pid
    except (OSError, ValueError, IndexError, psutil.Error):
        return None


def is_running(pgdata: Path | None = None) -> bool:
    """True when a postmaster for `pgdata` is up."""
    return postmaster_pid(pgdata) is not None


#: data dir -> pid of the postmaster this process started there (see `started_here`).
_STARTED: dict[Path, int] = {}


def database_url() -> str:
    """Start (or reuse) the embedded server and return a libpq URI over its unix socket."""
    import pgserver

    pgdata = data_dir()
    pgdata.mkdir(parents=True, exist_ok=True)
    was_running = is_running(pgdata)
    server = pgserver.get_server(pgdata, cleanup_mode=None)
    if not was_running and (pid := postmaster_pid(pgdata)) is not None:
        _STARTED[pgdata] = pid
    return server.get_uri()


def started_here(pgdata: Path | None = None) -> bool:
    """True when this process started the postmaster of `pgdata` that runs now: not one it
    found running, nor one another process restarted since (a new pid)."""
    pgdata = pgdata or data_dir()
    pid = _STARTED.get(pgdata)
    return pid is not None and postmaster_pid(pgdata) == pid


def _wait_for_reaping(pgdata: Path, timeout: float = 5.0) -> None:
    """A killed postmaster is a zombie until the process that adopted it (init) reaps it,
    and pgserver takes a zombie for a running server: give init a moment."""
    import psutil

    try:
        pid = int(pgdata.joinpath("postmaster.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    deadline = time.monotonic() + timeout
    while psutil.pid_exists(pid) and time.monotonic() < deadline:
        time.sleep(0.1)


def ensure_running() -> None:
    """Start the server again if it died (the same socket, so clients' URLs stay valid).

    pgserver caches one handle per data dir and checks the server only when it makes the
    handle: ask that handle again, or a second start after a crash would be a no-op.
    """
    import pgserver

    pgdata = data_dir()
    if is_running(pgdata):
        return
    _wait_for_reaping(pgdata)
    pgserver.get_server(pgdata, cleanup_mode=None).ensure_postgres_running()
    if not is_running(pgdata):  # it died again at once, or pgserver took a stale pid for it
        raise RuntimeError(f"no live postmaster after the start; see {pgdata / 'log'}")


def stop(pgdata: Path | None = None) -> None:
    """Stop the embedded server (fast shutdown), if it runs."""
    from pgserver._commands import pg_ctl  # type: ignore[attr-defined]  # made at import

    pgdata = pgdata or data_dir()
    if not is_running(pgdata):
        return
    user = "pgserver" if os.geteuid() == 0 else None
    try:
        pg_ctl(["-w", "-t", "30", "-m", "fast", "stop"], pgdata=pgdata, user=user)
    except subprocess.CalledProcessError as exc:
        # A shutdown checkpoint can stall on a busy disk; immediate mode skips it and the
        # next start replays the WAL (crash-safe by design), so nothing committed is lost.
        log.warning("fast shutdown failed (%s); stopping immediately", exc.stderr or exc)
        if is_running(pgdata):
            pg_ctl(["-w", "-t", "30", "-m", "immediate", "stop"], pgdata=pgdata, user=user)
    log.info("embedded PostgreSQL stopped (%s)", pgdata)
