"""The timeline: a user's issues, newest activity first, narrowed by filters, in few queries.

Everything a row shows comes from one query (the current suggestion's action is a
correlated subquery), so a page costs the same whether a project has ten issues or ten
thousand incidents.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import Count, Min, OuterRef, Q, QuerySet, Subquery
from django.http import QueryDict
from django.utils import timezone

from ingest import spool
from ingest.models import InboxItem, Incident, Issue, Project
from ingest.storable import storable_text
from rca.models import Suggestion
from rca.slo.models import SloBreach
from webapp import access, heartbeat

PAGE_SIZE = 50
RANGES = {
    "1h": timedelta(hours=1),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "30d": timedelta(days=30),
}
DEFAULT_RANGE = "7d"
STATUSES = [choice for choice, _ in Issue.Status.choices]
MAX_TEXT = 200


@dataclass(frozen=True)
class Filters:
    """What the user narrowed the timeline to; also its shareable query string."""

    project: str = ""
    service: str = ""
    model: str = ""
    status: str = ""
    error_type: str = ""
    range: str = DEFAULT_RANGE
    q: str = ""
    page: int = 1

    @classmethod
    def from_query(cls, params: QueryDict) -> Filters:
        def text(name: str) -> str:
            # As stored: a NUL (which PostgreSQL refuses in a parameter: a 500) is U+FFFD.
            return storable_text(params.get(name, "").strip()[:MAX_TEXT])

        status = text("status")
        window = text("range")
        try:
            page = max(1, int(params.get("page", "1")))
        except ValueError:
            page = 1
        return cls(
            project=text("project"),
            service=text("service"),
            model=text("model"),
            status=status if status in STATUSES else "",
            error_type=text("error_type"),
            range=window if window in RANGES else DEFAULT_RANGE,
            q=text("q"),
            page=page,
        )

    def since(self, now: datetime | None = None) -> datetime:
        return (now or timezone.now()) - RANGES[self.range]

    def querystring(self, **changes) -> str:
        """The URL query for these filters (defaults left out), with `changes` applied."""
        values = asdict(replace(self, **changes))
        defaults = asdict(Filters())
        return urlencode({k: v for k, v in values.items() if v != defaults[k]})


@dataclass(frozen=True)
class Backlog:
    """Incidents waiting for analysis in the user's projects: `waiting` counts every pending
    one, `joined` the repeats among them that wait on an analysis already queued for their
    issue (no message of their own, rca/queue/coalesce.py)."""

    waiting: int = 0
    joined: int = 0
    oldest_since: datetime | None = None
    queued: int = 0  # accepted into the inbox, not stored yet (ingest/inbox/)


def backlog(user) -> Backlog:
    """One aggregate over pending incidents, an index-only scan of the partial index on
    analysis_status, which carries every column it reads (project, analysis_joined,
    analysis_updated_at): counting `pk` instead would read one heap page per pending row
    (10,000 pending: ~50 ms, migration 0010). Not narrowed by the timeline's filters,
    since the workers' backlog is the same whatever the user is looking at."""
    projects = Project.objects.filter(memberships__user=user).values("pk")
    pending = Incident.objects.filter(
        analysis_status=Incident.Analysis.PENDING, project__in=projects
    )
    row = pending.aggregate(
        waiting=Count("*"),
        joined=Count("analysis_joined", filter=Q(analysis_joined=True)),  # never null
        oldest_since=Min("analysis_updated_at"),
    )
    # Rows the inbox processor has not stored yet are waiting too: a storm shows here first.
    queued = InboxItem.objects.filter(project__in=projects, failed_at__isnull=True).count()
    return Backlog(**row, queued=queued)


def worker_silence(now: datetime | None = None) -> int | None:
    """Seconds since a worker last answered a ping, once that is longer than /readyz allows
    (heartbeat.FRESH_FOR), else None: the banner saying incidents are stored but not analysed.
    None too before any worker ever answered (a first start embeds the corpus first, and
    /readyz reports it); the workers' beat pings every 30 s, so a live worker never shows it."""
    beat = heartbeat.latest_seen()
    if beat is None:
        return None
    silence = (now or timezone.now()) - beat.seen_at
    return int(silence.total_seconds()) if silence > heartbeat.FRESH_FOR else None


@dataclass
class TimelinePage:
    issues: list[Issue]
    total: int
    page: int
    pages: int
    filters: Filters
    backlog: Backlog = Backlog()
    worker_silent_for: int | None = None  # seconds; see worker_silence()
    spooled: int = 0  # incidents accepted during a database outage, not yet replayed
    # RCA_SPOOL_FIRST (or RCA_SENTRY_SPOOL_FIRST): incidents go to the spool whether or not
    # the database is up, so the banner cannot say they were "accepted while it was away".
    spool_first: bool = False
    slo_breaches: list[SloBreach] = field(default_factory=list)  # see slo_breaches()

    @property
    def next_query(self) -> str:
        """Query string of the next (older) page, or "" on the last page."""
        return self.filters.querystring(page=self.page + 1) if self.page < self.pages else ""

    @property
    def previous_query(self) -> str:
        return self.filters.querystring(page=self.page - 1) if self.page > 1 else ""


def filtered_issues(user, filters: Filters) -> QuerySet[Issue]:
    """The user's issues matching every filter except the time range."""
    qs = Issue.objects.filter(project__memberships__user=user)
    if filters.project:
        qs = qs.filter(project__slug=filters.project)
    exact = {
        "service": filters.service,
        "model_id": filters.model,
        "status": filters.status,
        "error_type": filters.error_type,
    }
    qs = qs.filter(**{field: value for field, value in exact.items() if value})
    if filters.q:
        qs = qs.filter(
            Q(title__icontains=filters.q)
            | Q(culprit__icontains=filters.q)
            | Q(error_type__icontains=filters.q)
            | Q(service__icontains=filters.q)
        )
    return qs


def slo_breaches(
    user, filters: Filters, now: datetime | None = None, limit: int = 10
) -> list[SloBreach]:
    """The SLO breaches of the user's projects still on, or ended within the range (rca/slo)."""
    qs = SloBreach.objects.filter(project__memberships__user=user).filter(
        Q(ended_at__isnull=True) | Q(ended_at__gte=filters.since(now))
    )
    if filters.project:
        qs = qs.filter(project__slug=filters.project)
    return list(qs.select_related("rule", "project").order_by("-started_at")[:limit])


def timeline_issues(user, filters: Filters, now: datetime | None = None) -> TimelinePage:
    """One page of issues, the total, the analysis backlog and the workers' last heartbeat:
    four queries, whatever the data volume."""
    qs = filtered_issues(user, filters).filter(last_seen__gte=filters.since(now))
    total = qs.count()
    pages = max(1, -(-total // PAGE_SIZE))
    page = min(filters.page, pages)
    current = Suggestion.objects.filter(issue=OuterRef("pk")).order_by("-created_at", "-pk")
    # The latest occurrence's environment: "demo" marks the first-run demo's issues.
    latest = Incident.objects.filter(issue=OuterRef("pk")).order_by("-received_at")
    # The page's ids first (a subquery), then the rows with their subqueries: selecting the
    # subqueries with OFFSET evaluated them for every skipped row too (page 3 of 30 days:
    # 150 latest-incident lookups for 50 rows shown).
    order = ("-last_seen", "-pk")
    ids = qs.order_by(*order).values("pk")[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    rows = (
        Issue.objects.filter(pk__in=ids)
        .select_related("project")
        .annotate(
            suggested_action=Subquery(current.values("action")[:1]),
            suggestion_status=Subquery(current.values("status")[:1]),
            latest_environment=Subquery(latest.values("environment")[:1]),
        )
        .order_by(*order)
    )
    return TimelinePage(
        issues=list(rows),
        total=total,
        page=page,
        pages=pages,
        filters=filters,
        backlog=backlog(user),
        worker_silent_for=worker_silence(now),
        spooled=spool.count(),  # this host's spool: a directory listing while it is empty
        spool_first=bool(settings.RCA_SPOOL_FIRST or settings.RCA_SENTRY_SPOOL_FIRST),
        slo_breaches=slo_breaches(user, filters, now),
    )


@dataclass
class FilterChoices:
    projects: list[Project]
    services: list[str]
    models: list[str]
    error_types: list[str]


def filter_choices(user, limit: int = 200) -> FilterChoices:
    """The values the filter menus offer: what the user's issues actually contain."""
    issues = Issue.objects.filter(project__memberships__user=user)

    def distinct(field: str) -> list[str]:
        values = issues.exclude(**{field: ""}).order_by(field).values_list(field, flat=True)
        return list(values.distinct()[:limit])

    return FilterChoices(
        projects=list(access.projects_of(user)),
        services=distinct("service"),
        models=distinct("model_id"),
        error_types=distinct("error_type"),
    )
