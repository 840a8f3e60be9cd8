"""Rootcause Django project: settings, Celery app, embedded services and the UI."""

from webapp.celery import app as celery_app

__all__ = ["celery_app"]
