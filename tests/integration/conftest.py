"""Integration tests enqueue through the test run's own broker (inside the test database)."""

import pytest


@pytest.fixture(autouse=True)
def _test_broker(broker_url) -> str:
    return broker_url


@pytest.fixture(scope="session")
def llm_worker(broker_url, make_httpserver, tmp_path_factory):
    """One worker on the `llm` queue for the session; its LLM is the `httpserver` that each
    test scripts (the same server all session, cleared before every test)."""
    from django.db import connection

    from tests.support.openai_stub import start_llm_worker
    from tests.support.processes import SESSION_LONG, SESSION_WORKER_POLL

    worker = start_llm_worker(
        dict(connection.settings_dict),
        broker_url,
        make_httpserver.url_for("/v1"),
        tmp_path_factory.mktemp("llm-worker"),
        extra_env=SESSION_WORKER_POLL,
    )
    SESSION_LONG.append(worker)
    try:
        worker.wait_ready()
        yield worker
    finally:
        worker.stop()


@pytest.fixture(autouse=True, scope="session")
def _no_persistent_connections(django_db_setup) -> None:
    """The live server answers each request in a new thread; with persistent connections
    every thread would leave one open and the test database could not be dropped."""
    from django.db import connections

    for conn in connections.all():
        conn.settings_dict["CONN_MAX_AGE"] = 0


@pytest.fixture(scope="module")
def slack_server():
    """A local server speaking Slack's protocol (webhooks, response_url), one per module."""
    from pytest_httpserver import HTTPServer

    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    yield server
    server.clear()
    server.stop()
