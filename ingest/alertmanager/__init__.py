"""Prometheus Alertmanager's webhook as a way in: each firing alert is an incident.

:mod:`.schema` is the payload Alertmanager posts (version 4), :mod:`.mapping` turns one
alert into an incident payload (pure), :mod:`.receive` accepts the firing ones through the
same path as ``POST /api/v1/incidents`` and resolves the issues of resolved ones, and
:mod:`.api` is the router ``webapp/api.py`` mounts at ``/api/v1/alertmanager``.
"""
