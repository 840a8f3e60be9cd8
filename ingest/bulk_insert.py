"""Insert many rows of one model as a single JSON document (`jsonb_to_recordset`).

Why not `bulk_create`: on PostgreSQL, Django 5.2 sends each column as an array, and
psycopg text-escapes every quote of every JSON value in it through a regex template.
Incidents are mostly JSON, so that escaping was a fifth of a batch's CPU. Here the
rows travel as one document made by a compiled JSON encoder, and PostgreSQL takes it apart.

The column list comes from the model's own fields, so a new field is inserted without
touching this module. Values are what the fields' `pre_save` gives (so `auto_now_add`
still works), and they are written as JSON. That is exact for what incidents hold:
text, integers, datetimes (ISO 8601 with offset) and JSON documents, where JSON null
becomes SQL NULL.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from functools import cache
from typing import Any

from django.db import connection
from django.db.models import Model
from pydantic_core import PydanticSerializationError, to_json

from ingest.prepared import fetch


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


@cache
def _statement(model: type[Model]) -> tuple[str, tuple[Any, ...]]:
    quote = connection.ops.quote_name
    fields = tuple(f for f in model._meta.concrete_fields if not f.primary_key)
    columns = ", ".join(quote(str(f.column)) for f in fields)
    # Types without their modifiers (varchar, not varchar(64)): a value too long is then
    # refused by the table's own column, with the same error the ORM would get.
    typed = ", ".join(
        f"{quote(str(f.column))} {str(f.db_type(connection)).split('(')[0]}" for f in fields
    )
    pk = quote(str(model._meta.pk.column if model._meta.pk else "id"))
    table = quote(model._meta.db_table)
    # Names are the model's own, quoted; the only value is the parameter.
    sql = f"""INSERT INTO {table} ({columns}) SELECT {columns}
        FROM ROWS FROM (jsonb_to_recordset(%s::jsonb) AS ({typed})) WITH ORDINALITY
        AS r({columns}, _n) ORDER BY _n RETURNING {pk}"""  # noqa: S608
    return sql, fields


def _document(rows: list[dict[str, Any]]) -> str:
    """The rows as one JSON array, by pydantic-core's encoder (issue 19: ~3-4x faster than
    `json.dumps`, 30-38 us an incident here; datetimes are ISO 8601, UTC as `Z`). What it
    cannot encode (a lone surrogate, an unknown type) goes through `json.dumps`, which
    writes or refuses it as before; NaN is written as NaN by both, and jsonb refuses it."""
    try:
        return to_json(rows).decode()
    except PydanticSerializationError:
        return json.dumps(rows, default=_json_default, ensure_ascii=False, separators=(",", ":"))


def insert_rows(objs: Sequence[Model]) -> None:
    """INSERT unsaved instances of one model in one statement; sets their primary keys."""
    if not objs:
        return
    sql, fields = _statement(type(objs[0]))
    rows = [{f.column: f.pre_save(obj, True) for f in fields} for obj in objs]
    document = _document(rows)
    pks = [row[0] for row in fetch(sql, [document])]
    for obj, pk in zip(objs, pks, strict=True):
        obj.pk = pk
        obj._state.adding = False
        obj._state.db = connection.alias
