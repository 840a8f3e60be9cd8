"""`make run` from the user's side: a quiet start that ends with the credentials, a worker
killed with SIGKILL comes back and does the work, and nothing is orphaned at the end.

One start serves every check: a fresh start embeds the corpus (25-110 s), so a second
`make run` would cost the suite another minute or two.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
import urllib.request

import psutil
import pytest

from tests.support.corpus import session_embedding_cache
from tests.support.processes import REPO, wait_for
from tests.support.stack import free_port, get_json, ours, supervised


def _worker_main(make: subprocess.Popen) -> psutil.Process | None:
    """The Celery main process: the supervisor's child running `celery`."""
    return supervised(make.pid, "celery")


@pytest.mark.inbox  # the real accept-then-process path, as users run it
@pytest.mark.timeout(480)
def test_make_run_starts_quietly_restarts_a_killed_worker_and_leaves_no_orphans(tmp_path):
    data_dir = str(tmp_path / "data")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # Zero configuration, as on a fresh clone: no database, broker or secret key given.
    unset = ("DATABASE_URL", "CELERY_BROKER_URL", "SECRET_KEY")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(RCA_DATA_DIR=data_dir, PORT=str(port), RCA_DEMO="0")  # demo: test_demo_programs
    # The corpus vectors this run already computed: the start reads them instead of embedding.
    env["RCA_EMBEDDING_CACHE"] = str(session_embedding_cache())
    log = (tmp_path / "run.log").open("w+")
    make = subprocess.Popen(
        ["make", "run"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:

        def output() -> str:
            log.flush()
            return (tmp_path / "run.log").read_text(errors="replace")

        # No deadline of its own: under load the first start takes minutes, not seconds.
        wait_for(
            lambda: "Rootcause is ready" in output() or make.poll() is not None,
            timeout=360,
            interval=0.5,
        )
        text = output()
        assert "Rootcause is ready" in text, text[-4000:]
        start = text[: text.index("Rootcause is ready")]
        # Quiet: waiting for readiness and heartbeats log nothing; the corpus shows progress.
        assert "/readyz" not in start and "heartbeat" not in start, start[-3000:]
        assert re.search(r"embedded \d+ runbook chunks in \d+ s", start), start[-3000:]
        # The banner comes last, with everything a user needs.
        banner = text[text.index("Rootcause is ready") :]
        assert re.search(r"log in as admin / \S+", banner)
        key = re.search(r"API key: (rc_\S+)", banner)
        assert key and "Sentry SDK DSN: http" in banner, banner
        # The instance made its own secret key, readable by its owner only.
        secret = os.stat(os.path.join(data_dir, "secret_key"))
        assert secret.st_size > 50 and secret.st_mode & 0o077 == 0

        body = get_json(f"{base}/readyz")
        assert all(check["ok"] for check in body["checks"].values()), body

        # kill -9 of the Celery main process: the supervisor restarts it, the web stays up.
        old = _worker_main(make)
        assert old is not None
        old_family = [old, *old.children(recursive=True)]  # beat and the pool child
        old.send_signal(signal.SIGKILL)
        wait_for(lambda: "worker was killed by SIGKILL; restarting it" in output(), timeout=30)
        assert get_json(f"{base}/healthz") == {"status": "ok"}
        new = wait_for(
            lambda: (w := _worker_main(make)) is not None and w.pid != old.pid and w, timeout=60
        )
        assert new.is_running()
        gone = [p for p in old_family if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        assert gone == [], [p.cmdline() for p in gone]

        # Work sent after the crash is done by the new worker (the printed key works too).
        auth = {"Authorization": f"Bearer {key.group(1)}"}
        request = urllib.request.Request(
            f"{base}/api/v1/incidents",
            data=json.dumps(
                {
                    "service": "ranker",
                    "error_type": "RuntimeError",
                    "message": "CUDA error: device-side assert triggered",
                }
            ).encode(),
            headers={**auth, "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as resp:  # noqa: S310
            assert resp.status == 202
            created = json.loads(resp.read())
        # Accepted into the inbox: make run's processor stores it, then the worker analyses it.
        assert created["incident_id"] is None
        assert f"127.0.0.1:{port}/" in created["url"]  # links point at this run's port
        lookup = f"{base}/api/v1/incidents?event_id={created['event_id']}"

        def analysed() -> str | None:
            found = get_json(lookup, auth)["results"]
            status = found[0]["analysis_status"] if found else None
            return status if status in ("done", "failed") else None

        assert wait_for(analysed, timeout=180, interval=1) == "done"
        assert get_json(f"{base}/healthz") == {"status": "ok"}
    finally:
        make.send_signal(signal.SIGTERM)  # kill make itself, as a user or CI would
        make.wait(60)
    deadline = time.monotonic() + 90
    while ours(data_dir, port) and time.monotonic() < deadline:
        time.sleep(0.5)
    leftovers = [" ".join(p.cmdline()) for p in ours(data_dir, port) if p.is_running()]
    assert leftovers == [], (leftovers, (tmp_path / "run.log").read_text()[-3000:])
    assert "; stopping" in (tmp_path / "run.log").read_text()
