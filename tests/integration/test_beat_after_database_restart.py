"""Beat sends again after its broker restarts, so the sweep outlives a PostgreSQL restart.

The sweep (`rca/queue/sweeper.py`) is the safety net for every analysis a kill interrupts
or whose message was lost: beat sends it every RCA_SWEEP_INTERVAL. With the embedded
broker (kombu's SQLAlchemy transport in the same PostgreSQL), Celery's own scheduler,
once a send had failed during a restart of the database, failed every send after it
("channel disconnected") until its process restarted (`webapp/beat.py`). Under `make run`
beat lives in the main worker, which the same restart sometimes crashes (and the
supervisor restarts: beat works again) and sometimes not (the sweep is gone for good):
tests/integration/test_faults.py then left accepted incidents unanalysed when its kills
came close together.

Here beat runs on its own, as docker-compose runs it, with no worker taking its
messages: each send is a row in the broker's table. The kill comes after beat's first
send and the restart after a send failed, every time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.support.processes import REPO, python, wait_for
from webapp import embedded

#: Start the killed cluster again, as `make run`'s supervisor does.
RESTART = (
    "from webapp import embedded; "
    "embedded._wait_for_reaping(embedded.data_dir()); embedded.ensure_running()"
)
FAILED_SEND = "Couldn't apply scheduled task sweep-stuck-analyses"
SWEEPS = (
    "SELECT count(*) FROM kombu_message m JOIN kombu_queue q ON q.id = m.queue_id"
    " WHERE q.name = 'housekeeping' AND m.payload LIKE '%sweep_stuck_analyses%'"
)


def sweeps_sent(uri: str) -> int:
    """Sweep messages beat has put in the broker (0 while the database is away)."""
    try:
        with psycopg.connect(uri, connect_timeout=2) as conn:
            row = conn.execute(SWEEPS).fetchone()
    except psycopg.Error:
        return 0
    return int(row[0]) if row else 0


def refused(uri: str) -> bool:
    try:
        psycopg.connect(uri, connect_timeout=2).close()
    except psycopg.OperationalError:
        return True
    return False


@pytest.mark.timeout(300)
def test_beat_sends_the_sweep_again_after_the_database_restarts(tmp_path: Path) -> None:
    data = tmp_path / "data"
    base = {"RCA_DATA_DIR": str(data), "SECRET_KEY": "beat-test-" + "x" * 40}
    uri = python(base, "-c", "from webapp import embedded; print(embedded.database_url())")
    uri = uri.strip().splitlines()[-1]
    # Only our cluster, and the embedded broker on it (as a fresh clone configures it).
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(base, RCA_SWEEP_INTERVAL="1", PYTHONUNBUFFERED="1")
    log_path = tmp_path / "beat.log"
    argv = [sys.executable, "-m", "celery", "-A", "webapp", "beat", "--loglevel", "INFO"]
    argv += ["--schedule", str(tmp_path / "celerybeat-schedule")]
    with log_path.open("wb") as log:
        beat = subprocess.Popen(argv, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: sweeps_sent(uri) >= 1, 90, 0.2)
        failed_sends = log_path.read_text().count(FAILED_SEND)
        pid = embedded.postmaster_pid(data / "pg")
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: refused(uri), 30, 0.2)
        # A send fails against the dead broker before it comes back.
        wait_for(lambda: log_path.read_text().count(FAILED_SEND) > failed_sends, 30, 0.2)
        python(base, "-c", RESTART)
        before = sweeps_sent(uri)
        try:
            wait_for(lambda: sweeps_sent(uri) >= before + 2, 30, 0.5)
        except TimeoutError:
            pytest.fail(
                f"beat sent {sweeps_sent(uri) - before} sweeps in 30 s after the restart "
                f"(interval 1 s); its log:\n{log_path.read_text()[-3000:]}",
                pytrace=False,
            )
        assert beat.poll() is None, log_path.read_text()[-3000:]
    finally:
        beat.send_signal(signal.SIGTERM)
        try:
            beat.wait(30)
        except subprocess.TimeoutExpired:
            beat.kill()
            beat.wait()
        python(base, "-c", "from webapp import embedded; embedded.stop()")
