"""The analysis panel of an incident: polled while analysing; accept/reject; re-analyse."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from ingest.models import Incident
from rca.feedback import DecisionError, decide
from rca.queue import intake
from webapp import access
from webapp.analysis_panel import panel
from webapp.issue_page import issue_context
from webapp.pages import is_fragment, page


def _issue_url(incident) -> str:
    return f"{reverse('issue', args=[incident.issue_id])}?incident={incident.pk}"


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


def _render_panel(request, incident, role, **extra) -> HttpResponse:
    context = {
        "panel": panel(incident, awaiting=extra.pop("awaiting", None), polls=extra.pop("polls", 0)),
        "incident": incident,
        "can_respond": role == access.RESPONDER,
        **extra,
    }
    return render(request, "issues/_analysis.html", context)


@page
def analysis(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident, role = access.incident(request.user, incident_id)
    if not is_fragment(request):
        return redirect(_issue_url(incident))
    return _render_panel(
        request,
        incident,
        role,
        awaiting=_int(request.GET.get("after")),
        polls=_int(request.GET.get("polls")) or 0,
    )


def _shown_on(request: HttpRequest, suggestion) -> Incident:
    """The incident whose panel the decision was made on: a repeat occurrence shows the
    suggestion it reused, and answers with its own panel; otherwise the suggestion's."""
    shown = _int(request.POST.get("incident"))
    if shown is not None and shown != suggestion.incident_id:
        incident = Incident.objects.filter(pk=shown, issue_id=suggestion.issue_id).first()
        if incident is not None:
            return incident
    return suggestion.incident


@page
@require_POST
def decision(request: HttpRequest, suggestion_id: int) -> HttpResponse:
    suggestion, role = access.suggestion(request.user, suggestion_id, write=True)
    incident = _shown_on(request, suggestion)
    error = ""
    try:
        decide(
            suggestion, request.user, request.POST.get("verdict", ""), request.POST.get("note", "")
        )
    except DecisionError as exc:
        error = str(exc)
    if is_fragment(request):  # errors answer 200: htmx 2 does not swap 4xx
        response = _render_panel(request, incident, role, decision_error=error)
        if not error:
            response["HX-Trigger"] = "suggestion-decided"
        return response
    if error:
        context = issue_context(incident.issue, role, str(incident.pk))
        return render(request, "issues/detail.html", {**context, "decision_error": error})
    return redirect(_issue_url(incident))


@page
@require_POST
def reanalyse(request: HttpRequest, incident_id: int) -> HttpResponse:
    incident, role = access.incident(request.user, incident_id, write=True)
    latest = panel(incident).analysis
    intake.reanalyse(incident.pk)
    if is_fragment(request):
        return _render_panel(request, incident, role, awaiting=latest.pk if latest else 0)
    return redirect(_issue_url(incident))
