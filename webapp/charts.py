"""Incidents per hour as a server-rendered SVG bar chart: no chart library, no script.

`hourly_counts` asks the database for one aggregate row per hour; `bar_chart` turns the
counts into bar geometry the template draws (escaping stays the template's job).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import QuerySet, Sum

from ingest.models import Issue
from webapp.models import IncidentHour

HOUR = timedelta(hours=1)
WIDTH = 960
HEIGHT = 120
MARGIN_BOTTOM = 18
MARGIN_LEFT = 36


def hourly_counts(
    issues: QuerySet[Issue], since: datetime, now: datetime
) -> list[tuple[datetime, int]]:
    """Incidents received per hour of [since, now] for these issues, zero-filled, oldest first.

    Read from the hourly rollup (webapp.models.IncidentHour), not the incidents: at most one
    row per issue and hour (bench/million.py: 292,000 rows for 1,000,000 incidents over
    30 days, most issues being quiet most hours). The first bar counts its whole hour."""
    start = since.replace(minute=0, second=0, microsecond=0)
    rows = (
        IncidentHour.objects.filter(issue__in=issues.values("pk"), hour__gte=start)
        .values("hour")
        .annotate(n=Sum("count"))
        .order_by()
    )
    counts = {row["hour"]: row["n"] for row in rows}
    hours = []
    at = start
    while at <= now:
        hours.append((at, counts.get(at, 0)))
        at += HOUR
    return hours


@dataclass
class Bar:
    x: float
    y: float
    width: float
    height: float
    hour: datetime
    count: int


@dataclass
class Chart:
    width: int
    height: int
    plot_height: int
    left: int
    peak: int
    total: int
    bars: list[Bar] = field(default_factory=list)
    ticks: list[tuple[float, str]] = field(default_factory=list)  # (x, label)


def bar_chart(buckets: list[tuple[datetime, int]]) -> Chart:
    plot_height = HEIGHT - MARGIN_BOTTOM
    peak = max((n for _, n in buckets), default=0)
    step = (WIDTH - MARGIN_LEFT) / max(1, len(buckets))
    gap = 1 if step > 3 else 0
    bars = []
    for i, (hour, n) in enumerate(buckets):
        h = round(plot_height * n / peak, 1) if peak else 0
        if n and h < 1:
            h = 1
        x = round(MARGIN_LEFT + i * step, 2)
        bars.append(Bar(x, round(plot_height - h, 1), max(0.5, step - gap), h, hour, n))
    every = max(1, len(buckets) // 6)
    ticks = [
        (bar.x, bar.hour.strftime("%b %d %H:%M" if len(buckets) > 24 else "%H:%M"))
        for bar in bars[::every]
        if bar.x < WIDTH - 70  # room for the label
    ]
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        plot_height=plot_height,
        left=MARGIN_LEFT,
        peak=peak,
        total=sum(n for _, n in buckets),
        bars=bars,
        ticks=ticks,
    )
