"""App config for the web UI, health checks and worker heartbeats; it wires the apps together."""

from django.apps import AppConfig


class WebappConfig(AppConfig):
    name = "webapp"
    verbose_name = "Rootcause"

    def ready(self) -> None:
        """Ingest announces stored incidents; analysis listens (the one seam between them)."""
        from ingest.signals import incidents_stored
        from rca.queue.intake import on_incidents_stored
        from rca.slo.evaluate import on_incidents_stored as evaluate_slos

        incidents_stored.connect(on_incidents_stored, dispatch_uid="rca-intake")
        incidents_stored.connect(evaluate_slos, dispatch_uid="rca-slo")
