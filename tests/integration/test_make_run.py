"""`make run` from the user's side: credentials printed, /readyz all green, nothing orphaned."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request

import psutil
import pytest

from tests.support.processes import REPO, wait_for


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ours(data_dir: str, port: int) -> list[psutil.Process]:
    """Every process `make run` started: postgres on our data dir, worker, web on our port."""
    found = []
    for proc in psutil.process_iter(["cmdline", "environ"]):
        try:
            cmd = " ".join(proc.info["cmdline"] or [])
            env = proc.info["environ"] or {}
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if data_dir in cmd or f"127.0.0.1:{port}" in cmd or env.get("RCA_DATA_DIR") == data_dir:
            found.append(proc)
    return found


@pytest.mark.timeout(240)
def test_make_run_prints_credentials_gets_ready_and_leaves_no_orphans(tmp_path):
    data_dir = str(tmp_path / "data")
    port = _free_port()
    # Zero configuration, as on a fresh clone: no database, broker or secret key given.
    unset = ("DATABASE_URL", "CELERY_BROKER_URL", "SECRET_KEY")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(RCA_DATA_DIR=data_dir, PORT=str(port))
    log = (tmp_path / "run.log").open("w+")
    make = subprocess.Popen(
        ["make", "run"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    try:

        def output() -> str:
            log.flush()
            return (tmp_path / "run.log").read_text(errors="replace")

        wait_for(
            lambda: "Rootcause is ready" in output() or make.poll() is not None,
            timeout=180,
            interval=0.5,
        )
        text = output()
        assert "Rootcause is ready" in text, text[-4000:]
        assert re.search(r"log in as admin / \S+", text)
        key = re.search(r"API key: (rc_\S+)", text)
        assert key, text[-2000:]
        assert "[worker]" in text and "[web   ]" in text
        # The instance made its own secret key, readable by its owner only.
        secret = os.stat(os.path.join(data_dir, "secret_key"))
        assert secret.st_size > 50 and secret.st_mode & 0o077 == 0

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as resp:
            body = json.loads(resp.read())
        assert resp.status == 200
        assert all(check["ok"] for check in body["checks"].values()), body
        assert _ours(data_dir, port), "expected worker/web/postgres processes"

        # The printed key works, as the printed curl line would use it.
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/v1/incidents",
            data=json.dumps(
                {
                    "service": "ranker",
                    "error_type": "RuntimeError",
                    "message": "CUDA error: device-side assert triggered",
                }
            ).encode(),
            headers={"Authorization": f"Bearer {key.group(1)}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as resp:
            assert resp.status == 202
            # links point at this run's port
            assert f"127.0.0.1:{port}/issues/" in json.loads(resp.read())["url"]
    finally:
        make.send_signal(signal.SIGTERM)  # kill make itself, as a user or CI would
        make.wait(30)
    deadline = time.monotonic() + 90
    while _ours(data_dir, port) and time.monotonic() < deadline:
        time.sleep(0.5)
    leftovers = [" ".join(p.cmdline()) for p in _ours(data_dir, port) if p.is_running()]
    assert leftovers == [], (leftovers, (tmp_path / "run.log").read_text()[-3000:])
