"""One Alertmanager alert -> one incident payload (the unified schema), pure.

- `service`: the `service` label, else `job` (what Prometheus names every scrape target),
  else "alertmanager";
- `environment`: the `environment` or `env` label;
- `error_type`: `alertname`; `message`: the `summary` annotation, then `description`;
- `tags`: every label as sent, every other annotation as ``annotation.<name>``, plus
  ``alertmanager.fingerprint`` and the `generatorURL` (values cut to 1000 characters);
- `inference_context.model_id`: the `model_id` or `model` label, when there is one;
- `occurred_at`: `startsAt`;
- `fingerprint`: ``["alertmanager", <alert fingerprint>]``, so every firing of one alert
  (one label set) is one issue, and nothing else joins it;
- `event_id`: derived from the fingerprint and `startsAt`. Alertmanager re-sends a firing
  alert every `repeat_interval` and whenever its group changes, always with the same
  `startsAt`, so a re-send is a retry of the same event (stored once); a new firing after
  a resolve has a new `startsAt`, so it is a new incident (and reopens the issue).
"""

from __future__ import annotations

import hashlib
from typing import Any

from ingest.alertmanager.schema import MAX_LABEL_VALUE, AlertIn
from ingest.grouping import fingerprint as issue_fingerprint_of

SOURCE = "alertmgr"  # Incident.source holds 10 characters
FALLBACK_SERVICE = "alertmanager"
TEXT_ANNOTATIONS = ("summary", "description")


def alert_fingerprint(alert: AlertIn) -> str:
    """Alertmanager's own fingerprint, or (a sender that omits it) one of the label set."""
    if alert.fingerprint:
        return alert.fingerprint
    labels = "\x1f".join(f"{k}\x1e{v}" for k, v in sorted(alert.labels.items()))
    return hashlib.sha256(labels.encode()).hexdigest()[:16]


def grouping_parts(alert: AlertIn) -> list[str]:
    """The explicit fingerprint the incident carries: one issue per alert label set."""
    return ["alertmanager", alert_fingerprint(alert)]


def issue_fingerprint(alert: AlertIn) -> str:
    """The fingerprint of the issue this alert's incidents group into (to resolve it)."""
    return issue_fingerprint_of("", [], "", grouping_parts(alert))


def event_id(alert: AlertIn) -> str:
    """Same alert, same firing -> same id: Alertmanager's re-sends are stored once."""
    firing = f"{alert_fingerprint(alert)}|{alert.startsAt.isoformat()}"
    return "am-" + hashlib.sha256(firing.encode()).hexdigest()[:40]


def _message(alert: AlertIn) -> str:
    parts = [alert.annotations.get(name, "").strip() for name in TEXT_ANNOTATIONS]
    return "\n\n".join(part for part in parts if part)


def _tags(alert: AlertIn) -> dict[str, Any]:
    tags: dict[str, Any] = dict(alert.labels)
    for name, value in alert.annotations.items():
        if name not in TEXT_ANNOTATIONS:
            tags[f"annotation.{name}"[:100]] = value[:MAX_LABEL_VALUE]
    tags["alertmanager.fingerprint"] = alert_fingerprint(alert)
    if alert.generatorURL:
        tags["alertmanager.generator_url"] = alert.generatorURL
    return tags


def incident_payload(alert: AlertIn) -> dict[str, Any]:
    """The incident a firing alert becomes, as `IncidentIn` accepts it."""
    labels = alert.labels
    alertname = labels.get("alertname", "").strip()
    payload: dict[str, Any] = {
        "service": (labels.get("service") or labels.get("job") or FALLBACK_SERVICE)[:200],
        "environment": (labels.get("environment") or labels.get("env") or "")[:100],
        "event_id": event_id(alert),
        "occurred_at": alert.startsAt,
        "error_type": (alertname or "Alert")[:255],
        "message": _message(alert) or f"{alertname or 'Alert'} is firing",
        "tags": _tags(alert),
        "fingerprint": grouping_parts(alert),
    }
    if model_id := (labels.get("model_id") or labels.get("model") or "")[:255]:
        payload["inference_context"] = {"model_id": model_id}
    return payload
