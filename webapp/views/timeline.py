"""The timeline page (`/`); with htmx the same URL answers with the results fragment."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from webapp import charts
from webapp.pages import is_fragment, page
from webapp.timeline import (
    RANGES,
    STATUSES,
    Filters,
    filter_choices,
    filtered_issues,
    timeline_issues,
)


@page
def timeline(request: HttpRequest) -> HttpResponse:
    filters = Filters.from_query(request.GET)
    now = timezone.now()
    width, buckets = charts.incident_counts(
        filtered_issues(request.user, filters), filters.since(now), now
    )
    context = {
        "filters": filters,
        "result": timeline_issues(request.user, filters, now),
        "chart": charts.bar_chart(buckets, width),
    }
    if is_fragment(request):
        return render(request, "timeline/_results.html", context)
    context.update(choices=filter_choices(request.user), ranges=RANGES, statuses=STATUSES)
    return render(request, "timeline/page.html", context)
