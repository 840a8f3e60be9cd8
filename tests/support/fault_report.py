"""Where each accepted-but-unanalysed incident of a fault test is stuck, read straight from
the stack's database, spool and broker tables, so a failure says which state holds what.

`explain` answers per event id: stored or not (an inbox row, a spool file, nowhere), its
incident's analysis state (pending / joined / analyzing with its lease / done / failed),
its issue's leader and that leader's state, its Analysis rows, broker messages naming it,
and which kill came last before it was accepted. `summary` counts those states, so a
message never needs a truncated list to say what happened.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg


@dataclass
class Kill:
    """One kill of a fault test: its victim's role and when (time.monotonic) it was killed
    and the stack was ready again."""

    name: str
    at: float
    ready_at: float | None = None


@dataclass
class Fate:
    """What became of one accepted event id."""

    event_id: str
    accepted_at: float
    after_kill: str  # "<role> +1.2s" or "<role> outage +0.4s" or "none"
    state: str  # the one-word class `summary` counts
    detail: dict[str, Any] = field(default_factory=dict)

    def line(self) -> str:
        detail = json.dumps(self.detail, default=str)
        return f"{self.event_id} [{self.state}] after {self.after_kill}: {detail}"


def database(data_dir: Path) -> psycopg.Connection[Any]:
    """An autocommit connection to the stack's embedded cluster (its socket, from the
    postmaster's pid file), database `postgres` as `make run` uses it."""
    lines = (data_dir / "pg" / "postmaster.pid").read_text().splitlines()
    return psycopg.connect(
        host=lines[4], user="postgres", dbname="postgres", autocommit=True, connect_timeout=10
    )


def after_kill(kills: Sequence[Kill], at: float) -> str:
    """The last kill before `at`: inside its outage (killed, not ready yet) or after it."""
    before = [k for k in kills if k.at <= at]
    if not before:
        return "none"
    k = before[-1]
    if k.ready_at is None or at < k.ready_at:
        return f"{k.name} outage +{at - k.at:.2f}s"
    return f"{k.name} +{at - k.at:.2f}s (ready +{k.ready_at - k.at:.1f}s)"


def _rows(cur: psycopg.Cursor[Any], sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
    cur.execute(sql, params)
    names = [d.name for d in cur.description or []]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _broker(cur: psycopg.Cursor[Any]) -> dict[int, list[str]]:
    """Incident id -> the queued messages naming it ("<queue>:<task>:<visible>")."""
    try:
        found = _rows(
            cur,
            "SELECT q.name AS queue, m.visible, m.payload FROM kombu_message m"
            " JOIN kombu_queue q ON q.id = m.queue_id",
            [],
        )
    except psycopg.Error:
        return {}
    out: dict[int, list[str]] = {}
    for row in found:
        try:
            message = json.loads(row["payload"])
            headers = message.get("headers") or {}
            ids = [int(i) for i in re.findall(r"\d+", str(headers.get("argsrepr", "")))]
            if not ids and message.get("body"):
                args = json.loads(base64.b64decode(message["body"]))[0]
                ids = [int(a) for a in args if isinstance(a, int)]
        except (ValueError, TypeError, KeyError, IndexError):
            continue
        for i in ids:
            out.setdefault(i, []).append(f"{row['queue']}:{headers.get('task')}:{row['visible']}")
    return out


def _spooled(spool_dir: Path, event_ids: Iterable[str]) -> dict[str, str]:
    """Event id -> the spool file still holding it (and its replayed offset sidecar)."""
    wanted = set(event_ids)
    out: dict[str, str] = {}
    if not spool_dir.is_dir():
        return out
    for path in sorted(spool_dir.iterdir()):
        try:
            text = path.read_bytes().decode(errors="replace")
        except OSError:
            continue
        for event_id in wanted:
            if event_id in text:
                out.setdefault(event_id, path.name)
    return out


def explain(
    data_dir: Path,
    event_ids: Sequence[str],
    accepted_at: dict[str, float],
    kills: Sequence[Kill],
) -> list[Fate]:
    """One `Fate` per event id (see the module docstring)."""
    fates: list[Fate] = []
    with database(data_dir) as conn, conn.cursor() as cur:
        incidents = {
            r["event_id"]: r
            for r in _rows(
                cur,
                "SELECT id, event_id, issue_id, analysis_status AS status, analysis_joined AS"
                " joined, analysis_attempts AS attempts, analysis_error AS error,"
                " analysis_updated_at AS updated, analysis_lease_until AS lease, received_at,"
                " now() AS now FROM ingest_incident WHERE event_id = ANY(%s)",
                [list(event_ids)],
            )
        }
        inbox = {
            r["event_id"]: r
            for r in _rows(
                cur,
                "SELECT id, event_id, failed_at, error FROM ingest_inboxitem"
                " WHERE event_id = ANY(%s)",
                [list(event_ids)],
            )
        }
        issue_ids = list({r["issue_id"] for r in incidents.values()})
        issues = {
            r["id"]: r
            for r in _rows(
                cur,
                "SELECT i.id, i.analysis_leader_id AS leader, l.analysis_status AS leader_status,"
                " l.analysis_joined AS leader_joined, l.analysis_attempts AS leader_attempts,"
                " l.analysis_lease_until AS leader_lease,"
                " (SELECT count(*) FROM ingest_incident j WHERE j.issue_id = i.id"
                "   AND j.analysis_status = 'pending' AND j.analysis_joined) AS joined_waiting"
                " FROM ingest_issue i LEFT JOIN ingest_incident l ON l.id = i.analysis_leader_id"
                " WHERE i.id = ANY(%s)",
                [issue_ids],
            )
        }
        analyses: dict[int, list[str]] = {}
        for r in _rows(
            cur,
            "SELECT a.incident_id, a.id, a.status, a.error, s.id AS suggestion FROM rca_analysis a"
            " LEFT JOIN rca_suggestion s ON s.analysis_id = a.id"
            " WHERE a.incident_id = ANY(%s) ORDER BY a.id",
            [[r["id"] for r in incidents.values()]],
        ):
            text = f"{r['id']}:{r['status']}{'+s' if r['suggestion'] else ''}"
            analyses.setdefault(r["incident_id"], []).append(
                text + (f" ({r['error'][:60]})" if r["error"] else "")
            )
        broker = _broker(cur)
    spooled = _spooled(data_dir / "spool", [e for e in event_ids if e not in incidents])
    for event_id in event_ids:
        at = accepted_at.get(event_id, 0.0)
        fate = Fate(event_id, at, after_kill(kills, at), "")
        incident = incidents.get(event_id)
        if incident is None:
            row = inbox.get(event_id)
            if row is not None:
                fate.state = "inbox-failed" if row["failed_at"] else "inbox"
                fate.detail = {"inbox_id": row["id"], "error": row["error"]}
            elif event_id in spooled:
                fate.state, fate.detail = "spool", {"file": spooled[event_id]}
            else:
                fate.state = "nowhere"
            fates.append(fate)
            continue
        status = str(incident["status"])
        fate.state = "joined" if status == "pending" and incident["joined"] else status
        issue = issues.get(incident["issue_id"], {})
        fate.detail = {
            "incident": incident["id"],
            "issue": incident["issue_id"],
            "attempts": incident["attempts"],
            "error": (incident["error"] or "")[:80],
            "updated_ago_s": round((incident["now"] - incident["updated"]).total_seconds(), 1),
            "lease_left_s": (
                round((incident["lease"] - incident["now"]).total_seconds(), 1)
                if incident["lease"]
                else None
            ),
            "analyses": analyses.get(incident["id"], []),
            "messages": broker.get(incident["id"], []),
            "leader": issue.get("leader"),
            "leader_state": issue.get("leader_status"),
            "leader_joined": issue.get("leader_joined"),
            "leader_attempts": issue.get("leader_attempts"),
            "leader_messages": broker.get(issue.get("leader") or -1, []),
            "joined_waiting_on_issue": issue.get("joined_waiting"),
        }
        fates.append(fate)
    return fates


def summary(fates: Sequence[Fate]) -> dict[str, Any]:
    """Counts per state, per (state, kill before acceptance) and per issue."""
    return {
        "states": dict(Counter(f.state for f in fates)),
        "after": dict(Counter(f"{f.state} after {f.after_kill.split(' +')[0]}" for f in fates)),
        "issues": dict(Counter(str(f.detail.get("issue")) for f in fates)),
    }


def report(path: Path, fates: Sequence[Fate], log_path: Path) -> str:
    """Write every fate to `path` (one line each); the message a failed assert shows: the
    counts, the first lines and where the whole report and the stack's log are kept."""
    path.write_text("\n".join(f.line() for f in fates) + "\n")
    head = "\n".join(f.line() for f in fates[:20])
    return (
        f"{len(fates)} accepted incidents not analysed: {json.dumps(summary(fates))}\n"
        f"{head}\nall of them: {path}\nstack log: {log_path}"
    )
