"""Integration tests enqueue through the test run's own broker (inside the test database)."""

import pytest


@pytest.fixture(autouse=True)
def _test_broker(broker_url) -> str:
    return broker_url


@pytest.fixture(autouse=True, scope="session")
def _no_persistent_connections(django_db_setup) -> None:
    """The live server answers each request in a new thread; with persistent connections
    every thread would leave one open and the test database could not be dropped."""
    from django.db import connections

    for conn in connections.all():
        conn.settings_dict["CONN_MAX_AGE"] = 0
