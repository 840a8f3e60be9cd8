"""Faults a user sees: a banner while no worker answers, a plain 503 page while the database
is unreachable (never Django's 500, never on /api/)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from tests.support.factories import project_with_key
from tests.support.ui import member
from webapp.models import WorkerHeartbeat

BANNER = "incidents are stored but not analysed"


@pytest.fixture
def alice(client: Client) -> Client:
    client.force_login(member(project_with_key("ml-platform").project, "alice"))
    return client


def beat(seconds_ago: int) -> None:
    seen_at = timezone.now() - timedelta(seconds=seconds_ago)
    WorkerHeartbeat.objects.update_or_create(hostname="worker@test", defaults={"seen_at": seen_at})


@pytest.mark.django_db
def test_the_timeline_says_so_while_no_worker_answers(alice):
    beat(seconds_ago=5)
    assert BANNER not in alice.get("/").content.decode()

    beat(seconds_ago=300)  # past the 60 s /readyz allows
    page = alice.get("/").content.decode()
    assert "No worker has answered for 300 s: " + BANNER in page
    # The results fragment that filters refresh carries it too.
    assert BANNER in alice.get("/?range=24h", HTTP_HX_REQUEST="true").content.decode()

    beat(seconds_ago=0)  # a worker answers again
    assert BANNER not in alice.get("/").content.decode()


@pytest.fixture
def database_down() -> Iterator[None]:
    """The default connection pointed at a port nothing listens on, for this test only
    (the shared test cluster keeps running); restored before the database is flushed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    saved = dict(connection.settings_dict)
    connection.close()
    connection.settings_dict.update(HOST="127.0.0.1", PORT=str(closed_port))
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


@pytest.mark.django_db(transaction=True)
def test_pages_answer_503_saying_the_database_is_unreachable(alice, database_down):
    for path in ("/", "/runbooks/", "/accounts/login/"):
        response = alice.get(path)
        assert response.status_code == 503, path
        assert response["Retry-After"] == "10"
        assert "The database is unreachable" in response.content.decode()

    # The API keeps its own answers: never this HTML page.
    api = Client(raise_request_exception=False).get("/api/v1/incidents")
    assert "The database is unreachable" not in api.content.decode()
