"""App config for the web UI, health checks and worker heartbeats."""

from django.apps import AppConfig


class WebappConfig(AppConfig):
    name = "webapp"
    verbose_name = "Rootcause"
