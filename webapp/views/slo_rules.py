"""Project settings: the SLO rules (rca/slo), edited one form per rule, plus one to add."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from rca.slo.editing import rule_form, rule_forms
from webapp import access, project_settings
from webapp.pages import is_fragment, page


@page
@require_POST
def save_rule(request: HttpRequest, slug: str, rule_id: int | None = None) -> HttpResponse:
    project, _role = access.project(request.user, slug, write=True)
    form = rule_form(project, rule_id, request.POST)
    if form is None:
        raise Http404("no such rule")
    saved = form.is_valid()
    if saved:
        form.save()
    invalid = None if saved else form
    if is_fragment(request):  # errors answer 200: htmx 2 does not swap 4xx
        context = {
            "project": project,
            "can_manage": True,
            "slo_forms": rule_forms(project, invalid),
            "slo_saved": saved,
        }
        return render(request, "projects/_slo.html", context)
    if invalid is not None:
        context = {
            **project_settings.settings_context(project, show_secrets=True),
            "can_manage": True,
            "slo_forms": rule_forms(project, invalid),
        }
        return render(request, "projects/settings.html", context)
    messages.success(request, f"SLO rule {form.instance.name!r} saved.")
    return redirect("project-settings", slug=project.slug)
