"""The runbooks page and one runbook rendered from its (sanitised) Markdown."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from rca.models import Runbook
from webapp.markdown import render as render_markdown
from webapp.pages import page
from webapp.runbook_stats import runbooks_with_counts


@page
def runbook_list(request: HttpRequest) -> HttpResponse:
    return render(request, "runbooks/list.html", {"runbooks": runbooks_with_counts(request.user)})


@page
def runbook_detail(request: HttpRequest, slug: str) -> HttpResponse:
    runbook = get_object_or_404(Runbook, slug=slug)
    context = {"runbook": runbook, "body": render_markdown(runbook.body)}
    return render(request, "runbooks/detail.html", context)
