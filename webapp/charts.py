"""Incidents over time as a server-rendered SVG bar chart: no chart library, no script.

`incident_counts` asks a rollup for one aggregate row per bar; `bar_chart` turns the counts
into the SVG marks. The marks are built here as one string rather than in a template loop:
720 hourly bars cost ~60 ms through the template engine (bench/million.py), a join of
f-strings costs about one. Nothing of the user's goes into them (numbers and dates only),
and the labels are escaped all the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db.models import QuerySet, Sum
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from ingest.models import Issue
from webapp.models import IncidentDay, IncidentHour

HOUR = timedelta(hours=1)
SIX_HOURS = timedelta(hours=6)
DAY = timedelta(days=1)
QUARTERS = (0, 6, 12, 18)  # IncidentDay's h00, h06, h12, h18
# Up to a week, one bar per hour (169 bars); beyond, one per six hours (a 30-day range: 121
# bars, 7 px each, rather than 721 of 1.3 px, which no one reads and which cost 100 ms).
HOURLY_UP_TO = timedelta(days=7)
WIDTH = 960
HEIGHT = 120
MARGIN_BOTTOM = 18
MARGIN_LEFT = 36


def bar_width(since: datetime, now: datetime) -> timedelta:
    """The time one bar covers for the range [since, now]; each width has its own rollup."""
    return HOUR if now - since <= HOURLY_UP_TO else SIX_HOURS


def bucket_start(at: datetime, width: timedelta) -> datetime:
    """The start of the bar holding `at`, for a width of an hour, six hours or a day: bars
    begin on UTC hours divisible by the width, as the rollup trigger counts them."""
    at = at.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    hours = int(width / HOUR)
    return at.replace(hour=at.hour - at.hour % hours) if hours < 24 else at.replace(hour=0)


def incident_counts(
    issues: QuerySet[Issue], since: datetime, now: datetime
) -> tuple[timedelta, list[tuple[datetime, int]]]:
    """The bar width and the incidents received per bar of [since, now] for these issues,
    zero-filled, oldest first. The first bar counts its whole hour (or six hours).

    Read from a rollup, not the incidents: IncidentHour, one row per issue and busy hour
    (bench/million.py, 30 days of 1,000,000 incidents: 292,000 rows, most issues being quiet
    most hours), or IncidentDay for six-hour bars, one row per issue and busy day (55,800)."""
    width = bar_width(since, now)
    start = bucket_start(since, width)
    narrowed = {"issue__in": issues.values("pk")}
    if width == HOUR:
        hours = IncidentHour.objects.filter(hour__gte=start, **narrowed).values("hour")
        counts = {row["hour"]: row["n"] for row in hours.annotate(n=Sum("count")).order_by()}
    else:
        counts = _six_hour_counts(
            IncidentDay.objects.filter(day__gte=bucket_start(start, DAY), **narrowed)
        )
    buckets = []
    at = start
    while at <= now:
        buckets.append((at, counts.get(at, 0)))
        at += width
    return width, buckets


def _six_hour_counts(days: QuerySet[IncidentDay]) -> dict[datetime, int]:
    """The four six-hour counts of each day row, summed over the issues, keyed by start."""
    sums = days.values("day").annotate(*(Sum(f"h{h:02}") for h in QUARTERS)).order_by()
    counts: dict[datetime, int] = {}
    for row in sums:
        fields: dict[str, Any] = dict(row)  # the sums' keys are built, not literal
        for h in QUARTERS:
            counts[fields["day"] + timedelta(hours=h)] = fields[f"h{h:02}__sum"] or 0
    return counts


def hourly_counts(
    issues: QuerySet[Issue], since: datetime, now: datetime
) -> list[tuple[datetime, int]]:
    """Incidents per hour of [since, now] (a range of at most HOURLY_UP_TO)."""
    width, buckets = incident_counts(issues, since, now)
    assert width == HOUR, "ranges over HOURLY_UP_TO are counted in six-hour bars"
    return buckets


@dataclass
class Chart:
    width: int
    height: int
    plot_height: int
    left: int
    peak: int
    total: int
    per: str  # "hour" or "6 hours": what one bar counts
    marks: SafeString = mark_safe("")  # the bars and the time axis labels, as SVG


def _span(at: datetime, width: timedelta) -> str:
    """A bar's time in the display time zone: "Dec 04 13:00", or "Dec 04 12:00-18:00"."""
    local = timezone.localtime(at)
    if width == HOUR:
        return local.strftime("%b %d %H:00")
    return f"{local:%b %d %H:%M}-{timezone.localtime(at + width):%H:%M}"


def bar_chart(buckets: list[tuple[datetime, int]], width: timedelta = HOUR) -> Chart:
    """Bar geometry for `buckets` (as incident_counts returns them), drawn as SVG marks:
    a bar per non-empty bucket with its time and count as a tooltip, and up to six time
    labels along the axis."""
    plot_height = HEIGHT - MARGIN_BOTTOM
    peak = max((n for _, n in buckets), default=0)
    step = (WIDTH - MARGIN_LEFT) / max(1, len(buckets))
    bar = round(max(0.5, step - (1 if step > 3 else 0)), 2)
    marks = []
    for i, (at, n) in enumerate(buckets):
        if not n:
            continue
        h = max(1, round(plot_height * n / peak, 1))
        marks.append(
            f'<rect x="{round(MARGIN_LEFT + i * step, 2)}" y="{round(plot_height - h, 1)}" '
            f'width="{bar}" height="{h}" class="bar">'
            f"<title>{escape(_span(at, width))}: {n}</title></rect>"
        )
    label = "%b %d %H:%M" if len(buckets) > 24 else "%H:%M"
    for i in range(0, len(buckets), max(1, len(buckets) // 6)):
        x = round(MARGIN_LEFT + i * step, 2)
        if x < WIDTH - 70:  # room for the label
            text = escape(timezone.localtime(buckets[i][0]).strftime(label))
            marks.append(f'<text x="{x}" y="{HEIGHT - 2}" class="axis">{text}</text>')
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        plot_height=plot_height,
        left=MARGIN_LEFT,
        peak=peak,
        total=sum(n for _, n in buckets),
        per="hour" if width == HOUR else f"{int(width / HOUR)} hours",
        marks=mark_safe("".join(marks)),  # noqa: S308 - numbers and escaped dates only
    )
