"""The inbox processor lowers its own priority by RCA_INBOX_NICE, as the README says: the
setting used to be read from Django settings that never defined it, so the environment
variable did nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROBE = (
    "import os, django; django.setup(); "
    "from ingest.inbox.runner import lower_priority; "
    "before = os.nice(0); lower_priority(); print(os.nice(0) - before)"
)


def niceness_step(value: str | None) -> int:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "webapp.settings",
        # a URL, so the settings start no embedded cluster; nothing connects to it
        "DATABASE_URL": "postgresql://nobody@127.0.0.1:9/none",
    }
    env.pop("RCA_INBOX_NICE", None)
    if value is not None:
        env["RCA_INBOX_NICE"] = value
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(os.nice(0) > 10, reason="this process is already too nice to measure")
@pytest.mark.parametrize(("value", "step"), [(None, 5), ("2", 2), ("0", 0)])
def test_the_processor_is_as_much_nicer_as_configured(value: str | None, step: int) -> None:
    assert niceness_step(value) == step
