"""Data for UI tests: members of projects, incidents stored through ingest, analyses.

`analysed()` writes the Analysis + Suggestion rows the pipeline would write, so the panel
can be tested without a worker; the browser test uses the real worker instead.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.utils import timezone

from ingest.models import Incident, Project
from ingest.schema import IncidentIn
from ingest.store import store_incident
from rca.models import Analysis, Suggestion
from webapp.models import Membership

PASSWORD = "correct-horse-battery"


def member(project: Project, username: str, role: str = "responder") -> User:
    user = User.objects.filter(username=username).first() or User.objects.create_user(
        username, password=PASSWORD
    )
    Membership.objects.create(user=user, project=project, role=role)
    return user


def store(project: Project, payload: dict) -> Incident:
    """Validate and store a payload exactly as POST /api/v1/incidents does."""
    return store_incident(project, IncidentIn.model_validate(payload).payload()).incident


def analysed(incident: Incident, **overrides) -> Suggestion:
    analysis = Analysis.objects.create(
        incident=incident,
        issue=incident.issue,
        status=Analysis.Status.DONE,
        provider="offline",
        model="offline-v1",
        prompt_version="p1",
        retrieved=[
            {
                "slug": "linear-layer-shape-mismatch",
                "title": "Linear layer in_features mismatch",
                "failure_class": "shape_mismatch",
                "section": "Remediation",
                "kind": "runbook",
                "bm25": 7.5,
                "cosine": 0.81,
                "fused": 0.032,
            },
        ],
        latency_ms=42,
        finished_at=timezone.now(),
    )
    fields = {
        "action": "Set the head's in_features to 256 in /srv/ranker/model.py",
        "reason": "The input has 256 features but the weight expects 512 (dim 1).",
        "runbook_slug": "linear-layer-shape-mismatch",
        "confidence": 0.8,
        "validation": {
            "format_ok": True,
            "grounded": True,
            "stack_path_match": 1.0,
            "shape_incompatibility": 0.83,
            "unknown_dim_share": 0.0,
            "ok": True,
            "complaints": [],
        },
        "valid": True,
        "provider": "offline",
        "model": "offline-v1",
        **overrides,
    }
    suggestion = Suggestion.objects.create(
        analysis=analysis, issue=incident.issue, incident=incident, **fields
    )
    Incident.objects.filter(pk=incident.pk).update(analysis_status=Incident.Analysis.DONE)
    incident.analysis_status = Incident.Analysis.DONE
    return suggestion
