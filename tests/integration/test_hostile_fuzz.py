"""Text an attacker writes, generated, over real HTTP: Sentry envelopes and OTLP exports are
never a 5xx, every refusal names a path, whatever was accepted is stored, and the stored
incident renders inert (no tag or attribute comes from its text).

The strategies are the hardening campaign's (docs/MEASUREMENTS.md, 2026-12-07): lying item
lengths, lone surrogates, NUL, 1e999 / 2**64 / 400-digit numbers, long runs of one
character, HTML, Markdown and `javascript:` links. The suite runs a few dozen examples;
a deeper hunt sets RCA_FUZZ_EXAMPLES (the campaign ran 8,000 envelopes).
"""

from __future__ import annotations

import json
import os
import uuid
from html.parser import HTMLParser

import pytest
import requests
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ingest.models import Incident
from tests.support.factories import project_with_key
from tests.support.ui import member

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = int(os.environ.get("RCA_FUZZ_EXAMPLES", "25"))
HOSTILE = [
    "\ud800",
    "\x00",
    "\u202e",
    "javascript:alert(1)",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "<https://evil.example|x>",
    "<!channel>",
    "\\" * 300,
    "(" * 2000,
    "sk-" * 2000,
    "a@b.c " * 500,
    "x" * 70_000,
    "Traceback (most recent call last):\n" * 50,
    "'\"><svg/onload=alert(1)>",
    "{{7*7}}",
]
NUMBERS = [1e308, -0.0, 2**64, -(2**63) - 1, 10**400, float("inf"), float("nan")]
text = st.sampled_from(HOSTILE) | st.text(max_size=40)
scalar = st.none() | st.booleans() | st.sampled_from(NUMBERS) | st.integers() | text
frame = st.fixed_dictionaries(
    {},
    optional={
        "filename": text,
        "function": text,
        "lineno": scalar,
        "vars": st.dictionaries(text, scalar, max_size=3),
    },
)
exception = st.fixed_dictionaries(
    {},
    optional={
        "type": text | scalar,
        "value": text | scalar,
        "stacktrace": st.fixed_dictionaries({"frames": st.lists(frame, max_size=3)}),
    },
)
event = st.fixed_dictionaries(
    {"event_id": st.uuids().map(lambda u: u.hex)},
    optional={
        "message": text | scalar,
        "exception": st.fixed_dictionaries({"values": st.lists(exception, max_size=3)}),
        "tags": st.dictionaries(text, scalar, max_size=3),
        "level": text,
        "release": text,
        "timestamp": scalar,
        "breadcrumbs": st.fixed_dictionaries(
            {"values": st.lists(st.fixed_dictionaries({"message": text}), max_size=2)}
        ),
    },
)


def _dumps(value) -> bytes:
    return json.dumps(value).encode()  # ensure_ascii: surrogates travel as \ud800 escapes


def _item(payload: bytes, framing: str) -> bytes:
    header: dict = {"type": "event"}
    if framing == "length":
        header["length"] = len(payload)
    elif framing == "lie":
        header["length"] = len(payload) + 3
    return _dumps(header) + b"\n" + payload


@pytest.fixture
def tenant():
    return project_with_key("hostile-fuzz")


def _refusal_names_a_path(answer: requests.Response) -> None:
    assert answer.status_code < 500, answer.text[:500]
    if answer.status_code >= 400:
        detail = answer.json()["detail"]
        assert detail and all(d["loc"] and d["msg"] for d in detail), answer.text[:500]


def test_hostile_envelopes_are_stored_or_refused_with_a_path(live_server, tenant):
    path = f"{live_server.url}/api/{tenant.project.pk}/envelope/"
    auth = {"X-Sentry-Auth": f"Sentry sentry_key={tenant.project.sentry_key}, sentry_version=7"}

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        events=st.lists(event, min_size=1, max_size=2),
        framing=st.sampled_from(["length", "none", "lie"]),
    )
    def post(events, framing):
        items = [_item(_dumps(e), framing) for e in events]
        body = b"\n".join([_dumps({"event_id": uuid.uuid4().hex}), *items])
        answer = requests.post(path, data=body, headers=auth, timeout=30)
        _refusal_names_a_path(answer)
        if answer.status_code == 200:
            ids = answer.json()["ids"]
            assert Incident.objects.filter(project=tenant.project, event_id__in=ids).count() == len(
                set(ids)
            )

    post()


def test_hostile_otlp_exports_are_never_a_server_error(live_server, tenant):
    def attr(key, value):
        return {"key": key, "value": value}

    value = st.one_of(
        text.map(lambda s: {"stringValue": s}),
        st.sampled_from(NUMBERS).map(lambda n: {"intValue": n}),
        st.sampled_from(NUMBERS).map(lambda n: {"doubleValue": n}),
    )

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(message=value, other=value, when=scalar)
    def post(message, other, when):
        record = {
            "timeUnixNano": when,
            "attributes": [
                attr("exception.type", {"stringValue": "E"}),
                attr("exception.message", message),
                attr("x", other),
            ],
        }
        export = {"resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}]}
        answer = requests.post(
            f"{live_server.url}/otlp/v1/logs",
            data=_dumps(export),
            headers={**tenant.auth, "Content-Type": "application/json"},
            timeout=30,
        )
        assert answer.status_code in (200, 400), answer.text[:500]

    post()


class _Markup(HTMLParser):
    """Every tag and attribute of a page; what the text added shows as a difference."""

    def __init__(self) -> None:
        super().__init__()
        self.found: set[str] = set()

    def handle_starttag(self, tag, attrs) -> None:
        self.found.add(tag)
        if tag == "script":  # the page's own scripts are counted: one more is the text's
            self.found.add(f"script {sum(f.startswith('script ') for f in self.found)}")
        self.found.update(f"{tag}[{name}]" for name, _ in attrs)
        self.found.update(v for name, v in attrs if name in ("href", "src") and v and ":" in v)


def test_a_hostile_incident_renders_inert(client, tenant):
    client.force_login(member(tenant.project, "alice"))

    def markup(incident_id: int) -> set[str]:
        page = client.get(f"/issues/{Incident.objects.get(pk=incident_id).issue_id}")
        assert page.status_code == 200
        parser = _Markup()
        parser.feed(page.content.decode())
        return parser.found

    def post(message: str, error_type: str, frame: str, tag: str):
        message = message[:20_000]  # within the schema: a log line holds 20,000 characters
        trace = f'Traceback (most recent call last):\n  File "{frame}", line 1, in {frame}\n'
        incident = {
            "service": "s",
            "message": message,
            "error_type": error_type[:255],
            "stacktrace": trace + f"{error_type}: {message}",
            "tags": {"k": tag[:1000]},
            "logs": [message],
            "inference_context": {"note": tag},
        }
        answer = client.post(
            "/api/v1/incidents",
            _dumps(incident),
            content_type="application/json",
            HTTP_AUTHORIZATION=tenant.auth["Authorization"],
        )
        assert answer.status_code == 202, answer.content[:300]
        return markup(answer.json()["incident_id"])

    baseline = post("plain", "ValueError", "/srv/app.py", "v")

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
    @given(message=text.filter(str.strip), error_type=text, frame=text, tag=text)
    @example(*["<script>alert(1)</script><img src=x onerror=alert(1)>"] * 4)
    @example(*["[x](javascript:alert(1)) <a href='javascript:alert(1)'>x</a>"] * 4)
    def render(message, error_type, frame, tag):
        assert post(message, error_type, frame, tag) <= baseline

    render()
