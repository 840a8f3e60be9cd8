"""`manage.py run`: migrate, seed a demo project, then supervise worker + web (see supervisor)."""

from __future__ import annotations

import os
import sys
import threading

from django.core.management import call_command
from django.core.management.base import BaseCommand

from webapp import bootstrap, embedded, supervisor


class Command(BaseCommand):
    help = "Run Rootcause on this machine: database, worker and web server in one command."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))

    def handle(self, *args, port: int, **options) -> None:
        data_dir = embedded.state_dir()
        call_command("migrate", interactive=False, verbosity=0)
        call_command("runbooks", "load", verbosity=1)
        base_url = f"http://127.0.0.1:{port}"
        banner = bootstrap.ensure_demo(data_dir / "credentials", base_url)

        embedded_db = not os.environ.get("DATABASE_URL")
        on_exit = [embedded.stop] if embedded_db else []
        kids = supervisor.children(port, data_dir)
        # Links in API answers and Slack point at this run's port unless configured.
        public_url = os.environ.get("RCA_BASE_URL") or base_url
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "RCA_BASE_URL": public_url}
        sup = supervisor.Supervisor(kids, on_exit)

        def announce() -> None:
            body = supervisor.wait_until_ready(f"{base_url}/readyz")
            status = "ready" if body else "NOT ready after 60 s (see the logs above)"
            print(f"\n[run   ] Rootcause is {status}: {body}\n{banner}", flush=True)

        threading.Thread(target=announce, daemon=True).start()
        sys.exit(sup.run(env))
