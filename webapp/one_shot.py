"""A one-shot `manage.py` command stops the embedded cluster it started itself.

Settings start the embedded PostgreSQL on import (`webapp.embedded.database_url`) and it
outlives the process on purpose: the web server and the workers of `make run` share it.
A command that runs and exits (`rca eval`, `runbooks import`, `check`) on a data dir
nobody else used left a postmaster behind for good. `manage.py` calls
:func:`stop_own_cluster` when its command ends, however it ends; the cluster is stopped
only when all of these hold, so a cluster that `make run` or a worker uses stays up:

- the data dir is the embedded one (no `DATABASE_URL`);
- this process started the postmaster running now (`embedded.started_here`);
- no `make run` holds the data dir's run lock (`webapp.leftovers`): a run started since
  owns the cluster now, and its inbox processor is a `manage.py` command of its own;
- no other client is connected (a worker started by hand, another command).

Not called from `call_command` (tests, `make run`'s own code): only `manage.py`'s
``__main__`` calls it.
"""

from __future__ import annotations

import fcntl
import logging
import os
from pathlib import Path

from webapp import embedded
from webapp.leftovers import LOCK_NAME

log = logging.getLogger(__name__)

_OTHER_CLIENTS = (
    "SELECT count(*) FROM pg_stat_activity"
    " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
)


def run_lock_held(state_dir: Path) -> bool:
    """Whether a live `make run` holds `state_dir`'s run lock (a lock held by this very
    process counts too: flock locks are per open file, so a second open one conflicts)."""
    try:
        fd = os.open(state_dir / LOCK_NAME, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the shared lock taken just to look
    return False


def _other_clients() -> int | None:
    """Clients of the cluster other than this process's own connection; None when the
    cluster cannot be asked (then nothing is stopped)."""
    from django.db import connections

    try:
        connections.close_all()  # this process's own sessions are not others'
        with connections["default"].cursor() as cursor:
            cursor.execute(_OTHER_CLIENTS)
            row = cursor.fetchone()
        connections.close_all()
    except Exception:  # noqa: BLE001  # any failure: leave the cluster alone
        log.debug("could not count the cluster's clients", exc_info=True)
        return None
    return int(row[0]) if row else None


def stop_own_cluster() -> bool:
    """Stop the embedded cluster if this process started it and nobody else uses it;
    whether it was stopped."""
    if os.environ.get("DATABASE_URL"):
        return False
    pgdata = embedded.data_dir()
    if not embedded.started_here(pgdata) or run_lock_held(embedded.state_dir()):
        return False
    if _other_clients() != 0:
        return False
    embedded.stop(pgdata)
    return True
