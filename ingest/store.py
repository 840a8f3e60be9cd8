"""Store incidents: scrub, derive, upsert their Issues, insert them — one transaction.

One code path serves a single POST and a batch: a batch of N costs the same few
statements as one incident (one idempotency lookup, one issue upsert, one multi-row
insert), which is where batched ingestion gets its throughput.

Idempotent on `event_id` (per project): a retried POST returns the first incident.
What happens next (analysis, notifications) is not ingest's business: it announces the
stored incidents on `ingest.signals.incidents_stored`, inside the transaction.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from ingest import metrics
from ingest.bulk_insert import insert_rows
from ingest.derive import Derived, derive
from ingest.event_ids import normalise_event_id
from ingest.models import Incident, Issue, Project
from ingest.prepared import fetch
from ingest.scrubbing import scrub, scrub_parsed
from ingest.signals import incidents_stored
from ingest.storable import storable


@dataclass
class Stored:
    incident: Incident
    created: bool  # False: an earlier incident with the same event_id was returned
    new_issue: bool = False
    regressed: bool = False


@dataclass
class _Prepared:
    """One validated payload, scrubbed and derived: everything but the database work."""

    event_id: str
    from_client: bool  # the id came from the client, so a retry may already be stored
    clean: dict[str, Any]
    derived: Derived
    occurred_at: datetime
    service: str


def _occurred_at(value: Any) -> datetime:
    if isinstance(value, datetime):
        return value if timezone.is_aware(value) else value.replace(tzinfo=UTC)
    if isinstance(value, str):
        try:
            return _occurred_at(datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            pass
    return timezone.now()


def client_event_id(payload: dict[str, Any], idempotency_key: str | None) -> str | None:
    """The id the client gave this incident (its `event_id`, else the Idempotency-Key's),
    in the one spelling stored; None when it gave none. The inbox keys its rows by it too."""
    client_id = payload.get("event_id") or idempotency_key
    return str(normalise_event_id(str(client_id)))[:64] if client_id else None


def _prepare(payload: dict[str, Any], idempotency_key: str | None, text: str | None) -> _Prepared:
    client_id = client_event_id(payload, idempotency_key)
    if text is None:  # with its text, the payload is storable already (`store_incidents`)
        payload = storable(payload)
    if not settings.RCA_SCRUB:
        clean = payload
    else:
        clean = scrub(payload) if text is None else scrub_parsed(payload, text)
    return _Prepared(
        event_id=client_id or uuid.uuid4().hex,
        from_client=bool(client_id),
        clean=clean,
        derived=derive(clean),
        occurred_at=_occurred_at(clean.get("occurred_at")),
        service=str(clean.get("service") or "unknown")[:200],
    )


_UPSERT_ISSUES = f"""
WITH rows AS (
    SELECT * FROM unnest(%(fp)s::text[], %(title)s::text[], %(error_type)s::text[],
                         %(culprit)s::text[], %(service)s::text[], %(model_id)s::text[],
                         %(n)s::int[])
           AS r (fp, title, error_type, culprit, service, model_id, n)
), before AS (
    SELECT fingerprint, status FROM {Issue._meta.db_table}
     WHERE project_id = %(project)s AND fingerprint = ANY(%(fp)s::text[])
)
INSERT INTO {Issue._meta.db_table} AS i
    (project_id, fingerprint, title, error_type, culprit, service, model_id, status,
     first_seen, last_seen, occurrence_count)
SELECT %(project)s, fp, title, error_type, culprit, service, model_id, 'open',
       %(seen)s, %(seen)s, n
  FROM rows ORDER BY fp
ON CONFLICT (project_id, fingerprint) DO UPDATE SET
    occurrence_count = i.occurrence_count + EXCLUDED.occurrence_count,
    last_seen = GREATEST(i.last_seen, EXCLUDED.last_seen),
    service = EXCLUDED.service,
    model_id = COALESCE(NULLIF(EXCLUDED.model_id, ''), i.model_id),
    status = CASE WHEN i.status = 'resolved' THEN 'open' ELSE i.status END
RETURNING i.id, i.fingerprint, (SELECT b.status FROM before b WHERE b.fingerprint = i.fingerprint)
"""  # noqa: S608 - table names are ours; values are parameters


@dataclass
class _IssueRow:
    id: int
    created: bool
    regressed: bool  # it was resolved and is open again


def _upsert_issues(project: Project, groups: dict[str, list[_Prepared]]) -> dict[str, _IssueRow]:
    """Create each issue or count its new occurrences: one statement, no lost updates.

    Rows are written in fingerprint order, so two batches touching the same issues lock
    them in the same order and cannot deadlock. Per issue, the newest incident of the
    batch provides the service and model shown on it.
    """
    fps = sorted(groups)
    last = [groups[fp][-1] for fp in fps]
    params: dict[str, Any] = {
        "project": project.pk,
        "fp": fps,
        "title": [p.derived.title for p in last],
        "error_type": [p.derived.error_type for p in last],
        "culprit": [p.derived.culprit for p in last],
        "service": [p.service for p in last],
        "model_id": [
            next((p.derived.model_id for p in reversed(groups[fp]) if p.derived.model_id), "")
            for fp in fps
        ],
        "n": [len(groups[fp]) for fp in fps],
        "seen": timezone.now(),
    }
    rows = fetch(_UPSERT_ISSUES, params)
    return {
        fp: _IssueRow(issue_id, before is None, before == Issue.Status.RESOLVED)
        for issue_id, fp, before in rows
    }


#: Incident's columns in the order its constructor takes them positionally (`from_db`'s).
_INCIDENT_FIELDS = tuple(Incident._meta.concrete_fields)


def _incident(project: Project, p: _Prepared, issue_id: int, source: str, opened: str) -> Incident:
    """The unsaved incident, as `Incident(project=project, issue_id=..., ...)` makes it.

    Built positionally, every column named gets its value and every other its field's
    default, as the keyword path gives them; then the project is set through its
    descriptor, as that path sets it (the id and the cached project). The keyword path
    cost the processor ~20 us of CPU per incident, ~40% more (issue 19);
    tests/unit/test_store_incident_init.py holds the two equal."""
    d, clean = p.derived, p.clean
    values = {
        "project_id": project.pk,
        "issue_id": issue_id,
        "event_id": p.event_id,
        "source": source,
        "service": p.service,
        "environment": str(clean.get("environment") or "")[:100],
        "occurred_at": p.occurred_at,
        "error_type": d.error_type,
        "message": d.message,
        "stacktrace_raw": clean.get("stacktrace"),
        "exceptions": d.exceptions,
        "logs": d.logs,
        "shape_diff": d.shape_diff,
        "shape_diff_source": d.shape_diff_source,
        "inference_context": clean.get("inference_context") or {},
        "resource_impact": clean.get("resource_impact") or {},
        "tags": clean.get("tags") or {},
        "model_id": d.model_id,
        "fingerprint": d.fingerprint,
        "opened_issue": opened,
    }
    incident = Incident(
        *[values[f.attname] if f.attname in values else f.get_default() for f in _INCIDENT_FIELDS]
    )
    incident.project = project
    return incident


_STORED_IDS = (
    f"SELECT event_id FROM {Incident._meta.db_table}"  # noqa: S608 - the table name is ours
    " WHERE project_id = %s AND event_id = ANY(%s)"
)


def _earlier(project: Project, client_ids: list[str]) -> dict[str, Incident]:
    """The incidents already stored under these ids. Almost always none (the inbox skips ids
    already stored): a plain statement says so, and only what it finds is read as models."""
    if not client_ids:
        return {}
    found = [event_id for (event_id,) in fetch(_STORED_IDS, [project.pk, client_ids])]
    if not found:
        return {}
    return {i.event_id: i for i in Incident.objects.filter(project=project, event_id__in=found)}


def _store_prepared(project: Project, prepared: list[_Prepared], source: str) -> list[Stored]:
    earlier = _earlier(project, [p.event_id for p in prepared if p.from_client])
    fresh: dict[str, int] = {}  # event_id -> index of the first new incident carrying it
    groups: dict[str, list[_Prepared]] = {}
    for index, p in enumerate(prepared):
        if p.event_id not in earlier and p.event_id not in fresh:
            fresh[p.event_id] = index
            groups.setdefault(p.derived.fingerprint, []).append(p)
    results: dict[int, Stored] = {}
    if fresh:
        with transaction.atomic():
            issues = _upsert_issues(project, groups)
            first_of_issue: set[str] = set()
            for index in fresh.values():
                p = prepared[index]
                fp = p.derived.fingerprint
                row = issues[fp]
                opened = ""
                if fp not in first_of_issue:
                    first_of_issue.add(fp)
                    opened = "new" if row.created else ("regressed" if row.regressed else "")
                results[index] = Stored(
                    _incident(project, p, row.id, source, opened),
                    created=True,
                    new_issue=opened == "new",
                    regressed=opened == "regressed",
                )
            stored = [s.incident for s in results.values()]
            insert_rows(stored)
            incidents_stored.send(sender=Incident, project=project, incidents=stored)
    out: list[Stored] = []
    for index, p in enumerate(prepared):
        if index in results:
            out.append(results[index])
        elif p.event_id in earlier:
            out.append(Stored(earlier[p.event_id], created=False))
        else:  # the same event_id twice in one batch: the second is a retry of the first
            out.append(Stored(results[fresh[p.event_id]].incident, created=False))
    return out


def store_incidents(
    project: Project,
    payloads: Sequence[dict[str, Any]],
    *,
    source: str = "api",
    idempotency_keys: Sequence[str | None] | None = None,
    texts: Sequence[str | None] | None = None,
) -> list[Stored]:
    """Persist validated payloads (snake_case dicts), in order; see the module docstring.

    `texts`: the JSON document each payload was read from, when the caller has it (the
    inbox processor): scrubbing then skips the payloads whose text shows nothing to scrub
    (`ingest.scrubbing.scrub_parsed`). A payload given with its text must be storable as it
    is (no NUL, lone surrogate, NaN or infinity; `ingest.storable`), as anything read back
    from jsonb or made by `ingest.inbox.records.storable_with_text` is: it is not copied
    through `storable` again (issue 19: 8-23 us of the processor's CPU an incident)."""
    keys = idempotency_keys or [None] * len(payloads)
    sources = texts or [None] * len(payloads)
    prepared = [
        _prepare(payload, key, text)
        for payload, key, text in zip(payloads, keys, sources, strict=True)
    ]
    try:
        stored = _store_prepared(project, prepared, source)
    except IntegrityError:
        # A concurrent retry carrying one of our event_ids committed first. The whole
        # transaction rolled back; once more, that incident is found and returned instead.
        stored = _store_prepared(project, prepared, source)
    if created := sum(s.created for s in stored):
        labels = (project.slug, metrics.bounded(source, metrics.SOURCES))
        metrics.INCIDENTS_RECEIVED.labels(*labels).inc(created)
    return stored


def store_incident(
    project: Project,
    payload: dict[str, Any],
    *,
    source: str = "api",
    idempotency_key: str | None = None,
) -> Stored:
    """Persist one validated payload (snake_case dict)."""
    return store_incidents(project, [payload], source=source, idempotency_keys=[idempotency_key])[0]
