"""Project settings: API keys, Sentry DSN, Slack webhook and its test message."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from webapp import access, project_settings
from webapp.pages import is_fragment, page

NEW_KEY = "new_api_key"  # session slot: the plaintext survives exactly one redirect


def _context(request: HttpRequest, project, role: str, **extra) -> dict:
    responder = role == access.RESPONDER
    return {
        **project_settings.settings_context(project, show_secrets=responder),
        "can_manage": responder,
        **extra,
    }


@page
def settings_index(request: HttpRequest) -> HttpResponse:
    projects = list(access.projects_of(request.user))
    if len(projects) == 1:
        return redirect("project-settings", slug=projects[0].slug)
    return render(request, "projects/index.html", {"projects": projects})


@page
def settings_page(request: HttpRequest, slug: str) -> HttpResponse:
    project, role = access.project(request.user, slug)
    new_key = request.session.pop(NEW_KEY, None)
    return render(
        request, "projects/settings.html", _context(request, project, role, new_key=new_key)
    )


@page
@require_POST
def create_key(request: HttpRequest, slug: str) -> HttpResponse:
    project, role = access.project(request.user, slug, write=True)
    _, plaintext = project_settings.create_key(project, request.POST.get("name", ""))
    if is_fragment(request):
        context = _context(request, project, role, new_key=plaintext)
        return render(request, "projects/_keys.html", context)
    request.session[NEW_KEY] = plaintext
    return redirect("project-settings", slug=project.slug)


@page
@require_POST
def revoke_key(request: HttpRequest, slug: str, key_id: int) -> HttpResponse:
    project, role = access.project(request.user, slug, write=True)
    project_settings.revoke_key(project, key_id)
    if is_fragment(request):
        return render(request, "projects/_keys.html", _context(request, project, role))
    return redirect("project-settings", slug=project.slug)


@page
@require_POST
def rotate_key(request: HttpRequest, slug: str, key_id: int) -> HttpResponse:
    """A new key of the same name, shown once; the old one gets 401 from now on."""
    project, role = access.project(request.user, slug, write=True)
    plaintext = project_settings.rotate_key(project, key_id)
    if is_fragment(request):
        return render(
            request, "projects/_keys.html", _context(request, project, role, new_key=plaintext)
        )
    if plaintext:
        request.session[NEW_KEY] = plaintext
    return redirect("project-settings", slug=project.slug)


@page
@require_POST
def rotate_dsn(request: HttpRequest, slug: str) -> HttpResponse:
    """A new Sentry DSN; SDKs still configured with the old one get 401 from now on."""
    project, role = access.project(request.user, slug, write=True)
    project_settings.rotate_dsn(project)
    if is_fragment(request):
        return render(
            request, "projects/_dsn.html", _context(request, project, role, dsn_rotated=True)
        )
    messages.success(
        request, "New DSN: configure your Sentry SDKs with it; the old one is refused now."
    )
    return redirect("project-settings", slug=project.slug)


@page
@require_POST
def slack_webhook(request: HttpRequest, slug: str) -> HttpResponse:
    project, role = access.project(request.user, slug, write=True)
    error = project_settings.save_webhook(project, request.POST.get("webhook_url", ""))
    context = _context(request, project, role, slack_error=error, slack_saved=not error)
    if is_fragment(request):  # errors answer 200: htmx 2 does not swap 4xx
        return render(request, "projects/_slack.html", context)
    if error:
        return render(request, "projects/settings.html", context)
    messages.success(request, "Slack webhook saved.")
    return redirect("project-settings", slug=project.slug)


@page
@require_POST
def slack_test(request: HttpRequest, slug: str) -> HttpResponse:
    project, role = access.project(request.user, slug, write=True)
    ok, detail = project_settings.send_test(project)
    if is_fragment(request):
        context = _context(request, project, role, test_ok=ok, test_detail=detail)
        return render(request, "projects/_slack.html", context)
    (messages.success if ok else messages.error)(request, f"Test message: {detail}")
    return redirect("project-settings", slug=project.slug)
