"""What the JSON API answers, as schemas: the OpenAPI document shows real fields.

They mirror ``ingest/serializers.py`` (the one place that shapes the dicts); a test
checks an answer against these schemas, so the two cannot drift apart unnoticed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ninja import Schema


class IncidentOut(Schema):
    id: int
    issue_id: int
    event_id: str
    source: str
    service: str
    environment: str
    occurred_at: datetime
    received_at: datetime
    error_type: str
    message: str
    exceptions: list[dict[str, Any]]
    logs: list[dict[str, Any]]
    shape_diff: list[dict[str, Any]]
    shape_diff_source: str
    inference_context: dict[str, Any]
    resource_impact: dict[str, Any]
    tags: dict[str, Any]
    fingerprint: str
    analysis_status: str
    url: str


class IncidentPage(Schema):
    """One page of incidents, newest first, and how many match in all."""

    count: int
    results: list[IncidentOut]
