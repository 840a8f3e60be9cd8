"""App config for the web UI, health checks and worker heartbeats; it wires the apps together."""

from django.apps import AppConfig


class WebappConfig(AppConfig):
    name = "webapp"
    verbose_name = "Rootcause"

    def ready(self) -> None:
        """Ingest announces stored incidents; analysis listens (the one seam between them).
        Every database connection plans prepared statements per execution
        (`ingest/plan_cache.py`)."""
        from django.db.backends.signals import connection_created

        from ingest.plan_cache import plan_each_execution
        from ingest.signals import incidents_stored
        from rca.queue.intake import on_incidents_stored
        from rca.slo.evaluate import on_incidents_stored as evaluate_slos

        incidents_stored.connect(on_incidents_stored, dispatch_uid="rca-intake")
        incidents_stored.connect(evaluate_slos, dispatch_uid="rca-slo")
        connection_created.connect(plan_each_execution, dispatch_uid="rca-custom-plans")
