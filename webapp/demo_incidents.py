"""The first-run demo: real incidents on the timeline before a user has sent any.

`make run` starts the failing programs of `demo/` in a subprocess as soon as it starts
(they need nothing of ours, so they run while the worker embeds the corpus), and once
everything is ready posts what they raised to the demo project over the real API, so
the real worker analyses them. It happens once per data directory (a marker file), and
`RCA_DEMO=0` skips it. Nothing here may stop `make run`: a failure is one banner line.
Only the subprocess imports torch; this module never does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any

from django.db import connection

from ingest.keys import create_key, revoke
from ingest.models import Project
from webapp.supervisor import _own_group_and_die_with_parent

REPO = Path(__file__).resolve().parents[1]
MARKER = "demo-incidents"  # in the data directory: written once the demo was delivered
PROGRAMS_TIMEOUT = 300.0  # seconds; the programs take ~10 s on 2 cores, torch imported once
OFF = {"0", "false", "no", "off"}
# Offline, quiet: the tokenizer program loads the bundled model; no progress bars.
PROGRAM_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TQDM_DISABLE": "1"}


def wanted(data_dir: Path) -> bool:
    """Not switched off by `RCA_DEMO`, and not delivered to this data directory before."""
    if os.environ.get("RCA_DEMO", "1").strip().lower() in OFF:
        return False
    return not (data_dir / MARKER).exists()


def run_programs(timeout: float = PROGRAMS_TIMEOUT) -> list[dict[str, Any]]:
    """`python -m demo` in its own process: the incidents its programs raised.

    The child dies with us (it is only ever waited on by the thread that started it),
    and lives in its own process group, so a Ctrl-C at the terminal is ours to handle.
    """
    done = subprocess.run(
        [sys.executable, "-m", "demo"],
        cwd=REPO,
        env={**os.environ, **PROGRAM_ENV},
        capture_output=True,
        timeout=timeout,
        check=False,
        preexec_fn=_own_group_and_die_with_parent,  # noqa: PLW1509 - fork of a waiting thread
    )
    if done.returncode != 0:
        last = (done.stderr.decode(errors="replace").strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"python -m demo exited with status {done.returncode}: {last}")
    return json.loads(done.stdout)


def post(incidents: list[dict[str, Any]], base_url: str, api_key: str) -> int:
    """POST them as one batch with `api_key`; how many the server stored or already had."""
    request = urllib.request.Request(  # noqa: S310 - http to our own server
        f"{base_url}/api/v1/incidents/batch",
        data=json.dumps({"incidents": incidents}).encode(),
        headers={"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as resp:  # noqa: S310 - our own server
        results = json.loads(resp.read())["results"]
    return sum(1 for result in results if result["status"] in (200, 202))


def deliver(incidents: list[dict[str, Any]], base_url: str, project_slug: str = "demo") -> int:
    """Send with a key made for this and revoked afterwards: the user's key is never
    read back from disk, and the settings page shows what sent them."""
    project = Project.objects.get(slug=project_slug)
    key, secret = create_key(project, name="demo programs (first start)")
    try:
        return post(incidents, base_url, secret)
    finally:
        revoke(key)


class FirstRunDemo:
    """Runs the programs in a background thread from `start()`; `finish()` posts them."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.incidents: list[dict[str, Any]] = []
        self.error = ""
        self._thread = threading.Thread(target=self._run, name="demo-programs", daemon=True)

    def start(self) -> FirstRunDemo:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self.incidents = run_programs()
        except Exception as exc:  # reported by finish(), in one line
            self.error = f"{type(exc).__name__}: {exc}"

    def finish(self, base_url: str) -> str:
        """One line for the banner saying what happened; never raises."""
        self._thread.join(PROGRAMS_TIMEOUT)
        if self.error or not self.incidents:
            return f"Demo incidents not created: {self.error or 'no program failed'}"[:300]
        try:
            sent = deliver(self.incidents, base_url)
            (self.data_dir / MARKER).write_text(f"{sent} demo incidents sent\n")
        except Exception as exc:  # URLError, HTTPError, a database error
            return f"Demo incidents not sent: {type(exc).__name__}: {exc}"[:300]
        finally:
            connection.close()
        return (
            f"Demo: {sent} incidents raised by the small failing programs in demo/programs/"
            " are on the timeline, marked 'demo' (RCA_DEMO=0 skips them)"
        )


def start(data_dir: Path) -> FirstRunDemo | None:
    """Begin the first-run demo, or None when it is off or was delivered already."""
    return FirstRunDemo(data_dir).start() if wanted(data_dir) else None
