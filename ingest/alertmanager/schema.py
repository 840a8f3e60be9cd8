"""The webhook payload Alertmanager posts (``version: "4"``), bounded like every ingest path.

Field names are Alertmanager's own (camelCase); unknown keys are ignored, so a newer
Alertmanager that adds fields still gets through. Bounds follow the incident schema:
labels become tags (at most 100 of them, names up to 100 characters, values up to 1000),
annotations are the message (up to 64 KiB).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from ingest.batch import max_items
from ingest.schema import MAX_MESSAGE, Timestamp

#: Labels and annotations one alert may carry: together with the few tags the mapping adds
#: they stay within the incident schema's 100 tags.
MAX_LABELS = 60
MAX_ANNOTATIONS = 30
MAX_LABEL_VALUE = 1000

LabelName = Annotated[str, Field(min_length=1, max_length=100)]
LabelValue = Annotated[str, Field(max_length=MAX_LABEL_VALUE)]
AnnotationValue = Annotated[str, Field(max_length=MAX_MESSAGE)]
Labels = Annotated[dict[LabelName, LabelValue], Field(max_length=MAX_LABELS)]
Annotations = Annotated[dict[LabelName, AnnotationValue], Field(max_length=MAX_ANNOTATIONS)]


class _In(BaseModel):
    model_config = ConfigDict(extra="ignore")


class AlertIn(_In):
    """One alert of the group; `fingerprint` names it across re-sends (a hash of its labels)."""

    status: Annotated[str, Field(pattern="^(firing|resolved)$")]
    labels: Labels = {}
    annotations: Annotations = {}
    startsAt: Timestamp  # noqa: N815 - Alertmanager's name
    endsAt: Timestamp | None = None  # noqa: N815
    generatorURL: Annotated[str, Field(max_length=MAX_LABEL_VALUE)] = ""  # noqa: N815
    fingerprint: Annotated[str, Field(max_length=64, pattern=r"^[A-Za-z0-9]*$")] = ""


class AlertmanagerIn(_In):
    """What Alertmanager's `webhook_configs` receiver posts: one group of alerts."""

    version: Annotated[str, Field(max_length=10)] = "4"
    receiver: Annotated[str, Field(max_length=255)] = ""
    status: Annotated[str, Field(pattern="^(firing|resolved)$")]
    alerts: Annotated[list[AlertIn], Field(min_length=1)]
    groupLabels: Labels = {}  # noqa: N815
    commonLabels: Labels = {}  # noqa: N815
    commonAnnotations: Annotations = {}  # noqa: N815
    externalURL: Annotated[str, Field(max_length=MAX_LABEL_VALUE)] = ""  # noqa: N815
    groupKey: Annotated[str, Field(max_length=MAX_LABEL_VALUE)] = ""  # noqa: N815
    truncatedAlerts: Annotated[int, Field(ge=0)] = 0  # noqa: N815

    @field_validator("alerts", mode="before")
    @classmethod
    def _at_most_a_batch(cls, alerts: Any) -> Any:
        """Counted before any alert is validated: 300,000 invalid alerts (900 KB) cost 7 s
        of validation, and errors for each, before the count was looked at."""
        if isinstance(alerts, list) and len(alerts) > (most := max_items()):
            raise PydanticCustomError(
                "too_many_alerts",
                "{count} alerts; send at most {most} per request "
                "(set max_alerts in the receiver's webhook_configs)",
                {"count": len(alerts), "most": most},
            )
        return alerts
