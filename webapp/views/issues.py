"""The issue page (one incident selected) and its status change (resolve / ignore / reopen)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from webapp import access
from webapp.issue_page import issue_context, set_status
from webapp.pages import is_fragment, page


@page
def issue_detail(request: HttpRequest, issue_id: int) -> HttpResponse:
    issue, role = access.issue(request.user, issue_id)
    context = issue_context(issue, role, request.GET.get("incident"))
    return render(request, "issues/detail.html", context)


@page
@require_POST
def issue_status(request: HttpRequest, issue_id: int) -> HttpResponse:
    issue, _ = access.issue(request.user, issue_id, write=True)
    set_status(issue, request.POST.get("status", ""))
    if is_fragment(request):
        response = render(request, "issues/_status.html", {"issue": issue, "can_respond": True})
        response["HX-Trigger"] = "issue-status-changed"
        return response
    return redirect("issue", issue_id=issue.pk)
