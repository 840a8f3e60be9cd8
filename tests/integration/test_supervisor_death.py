"""When `make run`'s supervisor itself is SIGKILLed (OOM killer, a crashed terminal), what
it started goes with it; a database it could not take along is stopped by the next run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import REPO, wait_for
from tests.support.stack import Stack, alive, ours
from webapp import embedded, leftovers


@pytest.mark.timeout(900)  # session setup counts too: minutes on a loaded box
def test_children_and_the_database_die_with_a_killed_supervisor(tmp_path):
    stack = Stack(tmp_path)
    try:
        stack.wait_ready()
        stack.remember()
        assert embedded.is_running(stack.data_dir / "pg")
        assert len(stack.seen) >= 5  # supervisor, postgres, workers, web: a real family
        stack.proc.send_signal(signal.SIGKILL)
        stack.proc.wait(10)

        def left() -> list:
            procs = {*stack.seen.values(), *ours(str(stack.data_dir), stack.port)}
            return [p for p in procs if alive(p)]

        with contextlib.suppress(TimeoutError):  # warm shutdowns take a few seconds
            wait_for(lambda: not left(), timeout=60, interval=0.5)
        assert left() == [], ([p.cmdline() for p in left()], stack.log()[-3000:])
        assert not embedded.is_running(stack.data_dir / "pg")
        assert "supervisor gone; stopping PostgreSQL" in stack.log()
    finally:
        if stack.proc.poll() is None:
            stack.proc.kill()
        for proc in ours(str(stack.data_dir), stack.port):
            with contextlib.suppress(Exception):
                proc.kill()


def _start_detached_postgres(state: Path) -> int:
    """A cluster left running by a process that has gone, as a run whose supervisor and
    watchdog were both killed leaves it."""
    code = "import sys, pgserver; pgserver.get_server(sys.argv[1], cleanup_mode=None)"
    state.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-c", code, str(state / "pg")], check=True, timeout=120)
    pid = embedded.postmaster_pid(state / "pg")
    assert pid is not None
    return pid


def _next_run_cleans_up(state: Path) -> subprocess.CompletedProcess[str]:
    """What `manage.py run` does first, in a process of its own (newer than the cluster)."""
    code = (
        "import sys; from pathlib import Path; from webapp import leftovers\n"
        "state = Path(sys.argv[1]); leftovers.take_lock(state)\n"
        "print(leftovers.stop_stale_postgres(state / 'pg'))"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(state)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.timeout(300)
def test_the_next_run_stops_a_database_left_by_a_dead_run_cleanly(tmp_path):
    state = tmp_path / "data"
    pid = _start_detached_postgres(state)
    try:
        done = _next_run_cleans_up(state)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.split()[-1] == str(pid)
        assert not embedded.is_running(state / "pg")
        log = "".join(p.read_text(errors="replace") for p in (state / "pg").glob("log*"))
        assert "database system is shut down" in log, log[-2000:]  # a clean stop
    finally:
        embedded.stop(state / "pg")


def test_a_second_run_on_a_data_dir_in_use_is_refused(tmp_path):
    fd = leftovers.take_lock(tmp_path)
    try:
        with pytest.raises(leftovers.DataDirInUse, match="another `make run`"):
            leftovers.take_lock(tmp_path)
    finally:
        os.close(fd)
    os.close(leftovers.take_lock(tmp_path))  # free again once the holder is gone
