"""Browser tests: Debian chromium driven by Playwright against the live dev server.

Playwright's sync API runs an event loop in the test thread, so Django's async-safety
check would refuse the test's own database calls; DJANGO_ALLOW_ASYNC_UNSAFE lifts that
(the live server answers in its own threads either way).
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(autouse=True)
def _test_broker(broker_url) -> str:
    """Incidents POSTed to the live server are enqueued on the test run's own broker."""
    return broker_url


@pytest.fixture(autouse=True, scope="session")
def _no_persistent_connections(django_db_setup) -> None:
    """Each live-server request runs in a new thread: no connection may outlive it."""
    from django.db import connections

    for conn in connections.all():
        conn.settings_dict["CONN_MAX_AGE"] = 0


@pytest.fixture(scope="session")
def _playwright():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def browser(_playwright):
    browser = _playwright.chromium.launch(
        executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS
    )
    yield browser
    browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()
