"""`manage.py run`: migrate, seed a demo project, then supervise database, worker and web
(see webapp/supervisor.py); the banner with URL, login, key and DSN comes once all is ready."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connections
from django.utils import timezone

from ingest import metrics
from webapp import bootstrap, demo_incidents, embedded, leftovers, readiness, supervisor


class Command(BaseCommand):
    help = "Run Rootcause on this machine: database, worker and web server in one command."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))

    def handle(self, *args, port: int, **options) -> None:
        since = timezone.now()
        data_dir = embedded.state_dir()
        watchdog = self._own_data_dir(data_dir)
        call_command("migrate", interactive=False, verbosity=0)
        call_command("runbooks", "load", verbosity=1)
        base_url = f"http://127.0.0.1:{port}"
        banner = bootstrap.ensure_demo(data_dir / "credentials", base_url)
        demo = demo_incidents.start(data_dir)  # first start: its programs run meanwhile

        # Links in API answers and Slack point at this run's port unless configured.
        public_url = os.environ.get("RCA_BASE_URL") or base_url
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "RCA_BASE_URL": public_url}
        # Every web and worker process counts into one emptied directory (ingest/metrics.py).
        metrics_dir = Path(env.get(metrics.MULTIPROC_ENV) or data_dir / "metrics")
        env[metrics.MULTIPROC_ENV] = str(metrics.reset_dir(metrics_dir))
        out_lock = threading.Lock()
        kids = supervisor.children(port, data_dir)
        web = next(kid for kid in kids if kid.name == "web")
        units = [supervisor.watch_child(kid, env, out_lock) for kid in kids]
        if not os.environ.get("DATABASE_URL"):
            units.insert(0, supervisor.watch_postgres())
        sup = supervisor.Supervisor(units, metrics_dir=metrics_dir)

        def announce() -> None:
            checks = readiness.wait_until_started(
                since, lambda: supervisor.listens(web, port), sup.stopping, supervisor.say
            )
            if checks is None:
                return
            failing = {name: c["detail"] for name, c in checks.items() if not c["ok"]}
            status = f"NOT ready: {failing}" if failing else "ready"
            # The demo is posted now that the web and a worker answer (it never raises).
            shown = banner + (demo.finish(base_url) + "\n" if demo and not failing else "")
            with out_lock:  # one block, after the children's start-up lines
                print(f"\n[run   ] Rootcause is {status}\n{shown}", flush=True)

        threading.Thread(target=announce, daemon=True).start()
        connections.close_all()  # the supervisor itself holds no connection across restarts
        code = sup.run()
        if watchdog is not None:  # the cluster is stopped: let the watchdog go too
            watchdog.communicate(timeout=30)
        sys.exit(code)

    def _own_data_dir(self, data_dir: Path) -> subprocess.Popen[bytes] | None:
        """Hold the data dir's run lock; restart a cluster left by an earlier process and
        watch it so it dies with us (webapp/leftovers.py). The watchdog, or None."""
        try:
            self._lock = leftovers.take_lock(data_dir)
        except leftovers.DataDirInUse as exc:
            raise CommandError(str(exc)) from None
        if os.environ.get("DATABASE_URL"):
            return None
        connections.close_all()
        if (pid := leftovers.stop_stale_postgres(embedded.data_dir())) is not None:
            supervisor.say(f"stopped PostgreSQL pid {pid}, left running by an earlier process")
        embedded.ensure_running()
        return leftovers.start_watchdog(embedded.data_dir())
