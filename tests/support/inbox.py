"""The inbox processor (`manage.py process_inbox`) as a subprocess on the test database."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from tests.support.processes import LoggedProcess, database_url


class Processor(LoggedProcess):
    """`manage.py process_inbox`, as `make run` and compose run it; analyses it queues go
    to an in-memory broker (dropped), like the test web servers'."""

    what = "processor"

    def __init__(
        self, db: dict, log_path: Path, *options: str, env: dict[str, str] | None = None
    ) -> None:
        argv = [sys.executable, "manage.py", "process_inbox", "--poll", "0.5", *options]
        base = {"DATABASE_URL": database_url(db), "CELERY_BROKER_URL": "memory://"}
        super().__init__(argv, log_path, {**base, **(env or {})})

    def ready(self) -> bool:
        return "processing the inbox" in self.log()

    def kill(self) -> None:
        """SIGKILL: no handler, no commit of the claim at hand."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self._log.close()
