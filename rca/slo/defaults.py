"""The rules every project starts with (seed §4.4: a multi-signal SLO breach).

Data, not code: each default is a plain dict of `SloRule` fields, editable afterwards in
the project's settings. A project that has no rules gets these on its first evaluation
(or its settings page); rules are disabled, not deleted, so defaults come back only for a
project whose every rule was deleted.

- **OOM frequency**: 3 or more out-of-memory incidents within an hour. Out of memory is
  decided from the parsed error type and the message, never from a service or model: the
  type's last dotted part names an out-of-memory error in the frameworks we parse
  (`torch.cuda.OutOfMemoryError`, Python's `MemoryError`, TensorFlow's
  `ResourceExhaustedError`, Java's `OutOfMemoryError`, a Kubernetes `OOMKilled` reason),
  or the message says "out of memory" (CUDA's and ROCm's wording when the type is a plain
  `RuntimeError`).
- **Latency spike** and **Accuracy drop**: fed by the shipped Prometheus rules
  (docs/prometheus/golden-signals.rules.yml) through the Alertmanager webhook: one firing
  `ModelP99LatencyHigh` (P99 > 2 s sustained 15 s) or `ModelAUCDrop` (AUC down by 0.03 or
  more within 5 min) is a breach, until Alertmanager resolves it.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, connection, transaction

from ingest.models import Project
from rca.slo.models import SloRule

DEFAULT_RULES: list[dict[str, Any]] = [
    {
        "name": "OOM frequency",
        "condition": ">= 3 out-of-memory incidents per hour",
        "signal": SloRule.Signal.INCIDENTS,
        "error_types": [
            "OutOfMemoryError",
            "MemoryError",
            "ResourceExhaustedError",
            "OOMKilled",
        ],
        "message_contains": "out of memory",
        "threshold": 3,
        "window_seconds": 3600,
    },
    {
        "name": "Latency spike",
        "condition": "P99 latency > 2 s sustained 15 s",
        "signal": SloRule.Signal.ALERTS,
        "error_types": ["ModelP99LatencyHigh"],
        "threshold": 1,
        "window_seconds": 15,
    },
    {
        "name": "Accuracy drop",
        "condition": "AUC drop >= 0.03 within 5 min",
        "signal": SloRule.Signal.ALERTS,
        "error_types": ["ModelAUCDrop"],
        "threshold": 1,
        "window_seconds": 300,
    },
]


# Read on every stored batch (`evaluate_stored`): written out, the ORM's building of the
# same SELECT cost the inbox processor ~0.5 ms of CPU per batch (issue 19), and a raw
# queryset's iteration (its column mapping, model init order, converters looked up for
# every query) ~0.3 ms more. The rows become models as the ORM makes them: each column
# through its field's converters (the JSON fields), then `from_db`.
_FIELDS = SloRule._meta.concrete_fields
_ATTNAMES = [f.attname for f in _FIELDS]
_RULES = (
    f"SELECT {', '.join(str(f.column) for f in _FIELDS)}"  # noqa: S608
    f" FROM {SloRule._meta.db_table} WHERE project_id = %s ORDER BY id"
)


def _converters() -> list[tuple[int, list[Any], Any]]:
    """Per column needing one: its index, its converters and their expression (the ORM's
    `SQLCompiler.get_converters` for a model's own columns)."""
    out = []
    for index, f in enumerate(_FIELDS):
        column = f.get_col(SloRule._meta.db_table)
        found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
        if found:
            out.append((index, found, column))
    return out


def _rules(project: Project) -> list[SloRule]:
    with connection.cursor() as cursor:
        cursor.execute(_RULES, [project.pk])
        rows = cursor.fetchall()
    if not rows:
        return []
    converters = _converters()
    rules = []
    for row in rows:
        values = list(row)
        for index, found, column in converters:
            for convert in found:
                values[index] = convert(values[index], column, connection)
        rules.append(SloRule.from_db(connection.alias, _ATTNAMES, values))
    return rules


def rules_of(project: Project) -> list[SloRule]:
    """The project's rules, oldest first; the defaults are created for a project with none."""
    rules = _rules(project)
    if rules:
        return rules
    try:
        with transaction.atomic():
            SloRule.objects.bulk_create(SloRule(project=project, **rule) for rule in DEFAULT_RULES)
    except IntegrityError:  # another process created them first
        pass
    return _rules(project)
