"""While the database is unreachable, UI pages answer a plain 503 saying so, not Django's 500.

Every page reads the session and the user from the database, so "the database is down"
cannot be a banner on a page: it is the page. Other faults (a silent worker) are banners
on the timeline (webapp/timeline.py).

A view that hits a dead connection raises `OperationalError` or `InterfaceError`, caught
in `process_exception`. A middleware's own query (saving the session, django-axes) has
been turned into a 500 by Django before it reaches here, so a 500 is answered as a 503
too when the database then refuses a connection (one attempt, only on a 500).

Paths under /api/ never answer HTML, whatever failed (a view, a middleware, a URL that
does not exist): an error there is the API's JSON, `{"detail": [{"loc", "msg"}]}`
(ingest/errors.py), and a database outage is a 503 with Retry-After, as is a key that
cannot be checked because of one (`ingest.key_cache.Unverifiable`). The machine endpoints
(/metrics, /healthz, /readyz) are left as they are: their clients read Prometheus text.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from http import HTTPStatus

from django.db import DatabaseError, InterfaceError, OperationalError, connection
from django.http import HttpRequest, HttpResponse

from ingest.errors import error_response
from ingest.key_cache import Unverifiable

log = logging.getLogger(__name__)

RETRY_AFTER = 10  # seconds: `make run` restarts a dead PostgreSQL after 1 s, then 2 s, 4 s...
API = "/api/"
NOT_UI = (API, "/metrics", "/healthz", "/readyz")
#: What an API client is told for a refusal that did not come from an API handler.
API_MESSAGES = {
    404: "no API operation at this path (see /api/v1/docs)",
    405: "method not allowed here (the Allow header says which are)",
    500: "internal error; the server's log has the details",
}
KEPT_HEADERS = ("Retry-After", "Allow", "WWW-Authenticate")
#: What Django's own error answers are (its 404/500 pages, an empty 405; ninja's DEBUG 500).
HTML = ("text/html", "text/plain")
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Database unreachable · Rootcause</title></head>
<body><h1>The database is unreachable</h1>
<p>Rootcause cannot show anything until it answers again. Reload this page in a few
seconds; if this persists, the server's log says why the database is down.</p></body></html>
"""


def unavailable() -> HttpResponse:
    response = HttpResponse(PAGE, status=503, content_type="text/html; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER)
    response["Cache-Control"] = "no-store"
    return response


def database_answers() -> bool:
    """A live connection answers `SELECT 1`, or a new one can be opened. A connection that
    failed is not None until the request ends, so `ensure_connection` alone would trust it.
    Inside a transaction that outlives the request (a test's), the probe would end it by
    closing the connection: there the answer is "it answers", and Django's 500 stands."""
    if connection.in_atomic_block:
        return True
    if connection.connection is not None and connection.is_usable():
        return True
    try:
        connection.close()
        connection.ensure_connection()
    except DatabaseError:
        return False
    return True


class DatabaseDownMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if request.path.startswith(API):
            return api_json(request, response)
        if response.status_code == 500 and _is_ui(request) and not database_answers():
            log.warning("%s answered 503: the database is unreachable", request.path)
            return unavailable()
        return response

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if request.path.startswith(API):
            return api_exception(request, exc)
        if not isinstance(exc, OperationalError | InterfaceError) or not _is_ui(request):
            return None
        if database_answers():  # a query error, not an outage: Django's 500 and its log
            return None
        log.warning("%s answered 503: the database is unreachable (%s)", request.path, exc)
        return unavailable()


def _is_ui(request: HttpRequest) -> bool:
    return not request.path.startswith(NOT_UI)


def api_unavailable(msg: str, retry_after: int = RETRY_AFTER) -> HttpResponse:
    response = error_response(503, [], msg, Retry_After=str(retry_after))
    response["Cache-Control"] = "no-store"
    return response


def _database_down() -> HttpResponse:
    return api_unavailable(f"the database is unavailable; retry in {RETRY_AFTER} s")


def api_exception(request: HttpRequest, exc: Exception) -> HttpResponse | None:
    """A 503 for an outage (or a key it keeps us from checking); None: Django's 500 and its
    log, which `api_json` then turns into JSON."""
    if isinstance(exc, Unverifiable):
        log.warning("%s answered 503: %s", request.path, exc)
        return api_unavailable(str(exc), exc.retry_after)
    if isinstance(exc, OperationalError | InterfaceError) and not database_answers():
        log.warning("%s answered 503: the database is unreachable (%s)", request.path, exc)
        return _database_down()
    return None


def api_json(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """An API refusal that Django wrote as a page (its 404 and 500 pages, a middleware's
    500, an empty 405) in the API's error shape; a 500 during an outage as a 503."""
    if response.status_code < 400 or not response.get("Content-Type", "").startswith(HTML):
        return response  # the API's own answers (JSON; protobuf for OTLP) are left alone
    if response.status_code == 500 and not database_answers():
        log.warning("%s answered 503: the database is unreachable", request.path)
        return _database_down()
    status = response.status_code
    try:
        phrase = HTTPStatus(status).phrase.lower()
    except ValueError:
        phrase = "refused"
    answer = error_response(status, [], API_MESSAGES.get(status, phrase))
    for name in KEPT_HEADERS:
        if name in response:
            answer[name] = response[name]
    return answer
