"""Who may see and change what: project membership decides, and outsiders get 404.

Views call these before touching data. Reading needs any membership; changing state
(deciding, re-analysing, resolving, settings) needs the responder role. A project the
user does not belong to is reported as missing (404), never as forbidden, so its
existence does not leak; a viewer trying to change something gets 403.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from ingest.models import Incident, Issue, Project
from rca.models import Suggestion
from webapp.models import Membership

RESPONDER = Membership.Role.RESPONDER


def projects_of(user) -> QuerySet[Project]:
    """The projects the user is a member of (any role), by name."""
    return Project.objects.filter(memberships__user=user).order_by("name")


def role_in(user, project_id: int) -> str | None:
    return (
        Membership.objects.filter(user=user, project_id=project_id)
        .values_list("role", flat=True)
        .first()
    )


def _check(user, project_id: int, *, write: bool) -> str:
    role = role_in(user, project_id)
    if role is None:
        raise Http404("no such object")
    if write and role != RESPONDER:
        raise PermissionDenied("responders only")
    return role


def project(user, slug: str, *, write: bool = False) -> tuple[Project, str]:
    """The project by slug with the user's role in it."""
    found = Project.objects.filter(slug=slug).first()
    if found is None:
        raise Http404("no such project")
    return found, _check(user, found.pk, write=write)


def issue(user, issue_id: int, *, write: bool = False) -> tuple[Issue, str]:
    found = Issue.objects.select_related("project").filter(pk=issue_id).first()
    if found is None:
        raise Http404("no such issue")
    return found, _check(user, found.project_id, write=write)


def incident(user, incident_id: int, *, write: bool = False) -> tuple[Incident, str]:
    found = Incident.objects.select_related("issue", "project").filter(pk=incident_id).first()
    if found is None:
        raise Http404("no such incident")
    return found, _check(user, found.project_id, write=write)


def suggestion(user, suggestion_id: int, *, write: bool = False) -> tuple[Suggestion, str]:
    found = Suggestion.objects.select_related("incident", "issue").filter(pk=suggestion_id).first()
    if found is None:
        raise Http404("no such suggestion")
    return found, _check(user, found.issue.project_id, write=write)
