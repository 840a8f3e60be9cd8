"""A row that cannot be stored is kept and marked; the rows of its claim are stored anyway.

Two kinds of poison in one claim with good rows: a payload the Python side cannot read (a
JSON array where an object is expected) and a row the database refuses (a trigger raises
for its event id, as a constraint would). Storing the claim fails, its savepoint rolls
back, and each row is stored on its own: the good rows once, in the order accepted, the
poison rows left in the inbox with `failed_at` and the error's first line, and not claimed
again: the next claim, on the same connection, stores what came after them.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.utils.timezone import now

from ingest.inbox.accept import accept
from ingest.inbox.process import process_pending
from ingest.models import InboxItem, Incident
from tests.support.factories import project_with_key, shape_error

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def refuse():
    """`refuse(event_id)`: the database refuses to insert an incident with that id."""

    def install(event_id: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$"
                f" BEGIN IF NEW.event_id = '{event_id}' THEN"
                " RAISE EXCEPTION 'refused by the test' USING ERRCODE = 'check_violation';"
                " END IF; RETURN NEW; END $$"
            )
            cursor.execute(
                "CREATE TRIGGER refuse_poison BEFORE INSERT ON ingest_incident"
                " FOR EACH ROW EXECUTE FUNCTION refuse_poison()"
            )

    yield install
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER IF EXISTS refuse_poison ON ingest_incident")
        cursor.execute("DROP FUNCTION IF EXISTS refuse_poison()")


def test_poison_rows_are_kept_and_marked_and_the_rest_of_their_claim_is_stored(settings, refuse):
    settings.RCA_INGEST_INLINE = False
    project = project_with_key("poison-rows").project
    first = accept(project, [shape_error(batch=1), shape_error(batch=2)])
    (poison_db,) = accept(project, [shape_error(batch=3)])
    refuse(poison_db.event_id)
    InboxItem.objects.create(  # as if accepted: a payload no accept would let through
        project=project, source="api", event_id="poison-py", payload=[1], received_at=now()
    )
    last = accept(project, [shape_error(batch=4)])

    assert process_pending(10) == 5

    good = [row.event_id for row in (*first, *last)]
    stored = list(Incident.objects.filter(project=project).order_by("pk"))
    assert [i.event_id for i in stored] == good  # each once, in the order accepted
    kept = {row.event_id: row for row in InboxItem.objects.filter(project=project)}
    assert sorted(kept) == sorted([poison_db.event_id, "poison-py"])
    assert all(row.failed_at is not None for row in kept.values())
    assert "refused by the test" in kept[poison_db.event_id].error
    assert kept["poison-py"].error.startswith("AttributeError")

    again = accept(project, [shape_error(batch=5)])
    assert process_pending(10) == 1  # marked rows are not claimed again
    assert Incident.objects.filter(project=project, event_id=again[0].event_id).count() == 1
    assert InboxItem.objects.filter(project=project).count() == 2
