"""Analysing incidents, in stages: corpus -> retrieval -> suggestion -> notify, driven by queue.

See docs/ARCHITECTURE.md. Ingest never imports this package: it announces stored incidents
on `ingest.signals.incidents_stored`, which `webapp/apps.py` connects to
:func:`rca.queue.intake.on_incidents_stored`.
"""
