"""A one-shot `manage.py` command leaves no embedded PostgreSQL behind, and stops no other's.

`manage.py rca eval` on a state dir of its own left its cluster running after it exited
(`webapp/one_shot.py`). Real `manage.py` subprocesses on a fresh `RCA_DATA_DIR`: the
cluster the command started is gone when it exits; a cluster it found running, or one a
`make run` holds the data dir of, is still up, with the same postmaster.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import REPO
from webapp import embedded, leftovers

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A state dir of this module's own, its cluster stopped whatever a test left."""
    path = tmp_path_factory.mktemp("oneshot")
    yield path
    embedded.stop(path / "pg")


def manage(state: Path, *argv: str) -> None:
    """`manage.py argv` on `state` with the embedded cluster (no DATABASE_URL), exit 0."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(RCA_DATA_DIR=str(state), SECRET_KEY="one-shot-test-" + "x" * 40)
    done = subprocess.run(
        [sys.executable, *argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]


def test_the_cluster_a_command_started_is_stopped_when_it_exits(state: Path) -> None:
    embedded.stop(state / "pg")
    manage(state, "manage.py", "check")
    assert (state / "pg" / "PG_VERSION").exists()  # it did start one
    assert embedded.postmaster_pid(state / "pg") is None


def test_a_cluster_found_running_stays_up(state: Path) -> None:
    manage(state, "-c", "from webapp import embedded; embedded.database_url()")
    pid = embedded.postmaster_pid(state / "pg")
    assert pid is not None  # `python -c` is no manage.py command: its cluster outlives it
    manage(state, "manage.py", "check")
    assert embedded.postmaster_pid(state / "pg") == pid
    embedded.stop(state / "pg")


def test_a_cluster_started_while_make_run_holds_the_data_dir_stays_up(state: Path) -> None:
    """The run lock's holder (`make run`) owns the cluster, whoever started it."""
    embedded.stop(state / "pg")
    fd = leftovers.take_lock(state)
    try:
        manage(state, "manage.py", "check")
        assert embedded.postmaster_pid(state / "pg") is not None
    finally:
        os.close(fd)
        embedded.stop(state / "pg")
