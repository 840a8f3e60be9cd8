"""SLO rules on stored incidents and alerts: what they count, when a breach opens and clears,
the timeline, and editing them in the project's settings (no worker: messages stay queued)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from ingest.models import Incident
from rca.models import Notification
from rca.notify import set_webhook
from rca.slo.defaults import rules_of
from rca.slo.evaluate import evaluate
from rca.slo.matching import count, matches
from rca.slo.models import SloBreach, SloRule
from tests.support.factories import project_with_key, shape_error
from tests.support.ui import member, store

pytestmark = pytest.mark.django_db

OOMS = [
    {
        "service": "chat",
        "error_type": "torch.OutOfMemoryError",
        "message": "Tried to allocate 2 GiB",
    },
    {
        "service": "chat",
        "error_type": "RuntimeError",
        "message": "CUDA out of memory. Tried to allocate 20.00 MiB",
    },
    {
        "service": "tf",
        "error_type": "tensorflow.python.framework.errors_impl.ResourceExhaustedError",
        "message": "OOM when allocating tensor with shape[64,4096]",
    },
    {"service": "etl", "error_type": "MemoryError", "message": ""},
]
NOT_OOM = [
    shape_error(batch=4),
    {"service": "chat", "error_type": "ValueError", "message": "memory_format must be contiguous"},
    {"service": "chat", "error_type": "OutOfMemoryErrorHandlerMissing", "message": "no handler"},
]


@pytest.fixture
def project(client):
    project = project_with_key("slo").project
    set_webhook(project, "https://hooks.slack.com/services/T0/B0/slo")
    client.force_login(member(project, "alice"))
    return project


def rule(project, name: str) -> SloRule:
    return next(r for r in rules_of(project) if r.name == name)


def test_a_new_project_gets_the_three_default_rules(project):
    assert [(r.name, r.signal, r.threshold, r.window_seconds) for r in rules_of(project)] == [
        ("OOM frequency", "incidents", 3, 3600),
        ("Latency spike", "alerts", 1, 15),
        ("Accuracy drop", "alerts", 1, 300),
    ]


def test_oom_is_decided_from_the_type_or_the_message_and_query_and_test_agree(project):
    oom_rule = rule(project, "OOM frequency")
    ooms = [store(project, p) for p in OOMS]
    others = [store(project, p) for p in NOT_OOM]
    assert [matches(oom_rule, i) for i in ooms] == [True] * len(OOMS)
    assert [matches(oom_rule, i) for i in others] == [False] * len(NOT_OOM)
    assert count(oom_rule, timezone.now()) == len(OOMS)


def test_three_ooms_within_the_hour_open_one_breach_with_one_message(project):
    for payload in OOMS[:2] + NOT_OOM:
        store(project, payload)
    assert not SloBreach.objects.exists()  # two OOMs: below the threshold
    store(project, OOMS[2])  # the third, on ingest
    breach = SloBreach.objects.get()
    assert (breach.rule.name, breach.count, breach.window_seconds) == ("OOM frequency", 3, 3600)
    for payload in OOMS:  # the storm goes on; the periodic pass runs too
        store(project, payload)
    evaluate(project)
    assert SloBreach.objects.count() == 1
    [message] = Notification.objects.filter(kind="slo_breach")
    assert "SLO breach: OOM frequency" in message.payload["text"]
    assert "3 matching incidents within 1 h" in message.payload["text"]


def test_a_breach_clears_when_its_window_empties_and_a_recurrence_is_a_new_breach(project):
    oom_rule = rule(project, "OOM frequency")
    for payload in OOMS[:3]:
        store(project, payload)
    later = timezone.now() + timezone.timedelta(seconds=3601)
    evaluate(project, now=later)
    assert SloBreach.objects.get().ended_at == later
    SloRule.objects.filter(pk=oom_rule.pk).update(window_seconds=60)
    Incident.objects.update(received_at=timezone.now() - timezone.timedelta(minutes=5))
    evaluate(project)  # nothing within the new window: still clear
    for payload in OOMS[:3]:
        store(project, payload)
    assert SloBreach.objects.count() == 2
    assert Notification.objects.filter(kind="slo_breach").count() == 2


def test_a_disabled_rule_opens_nothing_and_closes_its_breach(project):
    for payload in OOMS[:3]:
        store(project, payload)
    SloRule.objects.filter(name="OOM frequency").update(enabled=False)
    evaluate(project)
    assert SloBreach.objects.get().ended_at is not None
    store(project, OOMS[3])
    assert SloBreach.objects.count() == 1


def test_the_timeline_shows_an_ongoing_breach_and_then_that_it_cleared(client, project):
    for payload in OOMS[:3]:
        store(project, payload)
    html = client.get("/").content.decode()
    assert "SLO breach: OOM frequency" in html and "ongoing" in html
    assert "3 matching incidents, window 1 h" in html
    evaluate(project, now=timezone.now() + timezone.timedelta(hours=2))
    html = client.get("/", HTTP_HX_REQUEST="true").content.decode()
    assert "SLO breach: OOM frequency" in html and "cleared" in html


def test_rules_are_edited_in_the_project_settings(client, project):
    page = client.get(f"/projects/{project.slug}/settings").content.decode()
    assert "SLO rules" in page and "OOM frequency" in page and "Latency spike" in page
    oom = rule(project, "OOM frequency")
    p = f"r{oom.pk}"
    form = {
        f"{p}-name": "OOM frequency",
        f"{p}-condition": ">= 5 OOMs in 10 min",
        f"{p}-signal": "incidents",
        f"{p}-error_types_text": "OutOfMemoryError, MemoryError",
        f"{p}-message_contains": "out of memory",
        f"{p}-labels_text": "",
        f"{p}-threshold": "5",
        f"{p}-window_seconds": "600",
        f"{p}-enabled": "on",
    }
    resp = client.post(f"/projects/{project.slug}/slo/{oom.pk}", form)
    assert resp.status_code == 302
    oom.refresh_from_db()
    assert (oom.threshold, oom.window_seconds, oom.error_types) == (
        5,
        600,
        ["OutOfMemoryError", "MemoryError"],
    )

    bad = {**form, f"{p}-threshold": "0", f"{p}-labels_text": "severity"}
    resp = client.post(f"/projects/{project.slug}/slo/{oom.pk}", bad, HTTP_HX_REQUEST="true")
    html = resp.content.decode()
    assert resp.status_code == 200 and 'id="slo"' in html
    assert "greater than or equal to 1" in html and "write labels as name=value" in html
    oom.refresh_from_db()
    assert oom.threshold == 5


def test_a_rule_can_be_added_but_not_by_a_viewer(client, project):
    new = {
        "new-name": "Error storm",
        "new-signal": "incidents",
        "new-threshold": "100",
        "new-window_seconds": "300",
        "new-enabled": "on",
    }
    assert client.post(f"/projects/{project.slug}/slo", new).status_code == 302
    assert SloRule.objects.filter(project=project, name="Error storm", threshold=100).exists()
    again = client.post(f"/projects/{project.slug}/slo", new, HTTP_HX_REQUEST="true")
    assert "a rule of that name already" in again.content.decode()

    client.force_login(member(project, "victor", role="viewer"))
    refused = client.post(f"/projects/{project.slug}/slo", {**new, "new-name": "Other"})
    assert refused.status_code in (403, 404)
    assert not SloRule.objects.filter(name="Other").exists()


def test_rules_read_per_stored_batch_are_the_models_the_orm_reads(project):
    """rules_of builds its models from a plain statement (issue 19): each field, the JSON
    ones and the creation time included, is what the ORM gives for the same row."""
    rules_of(project)
    SloRule.objects.create(
        project=project,
        name="labelled",
        signal=SloRule.Signal.ALERTS,
        error_types=["A", "ü"],
        labels={"team": ["ml", None], "n": 1.5},
        enabled=False,
    )
    mine = rules_of(project)
    orm = list(SloRule.objects.filter(project=project).order_by("id"))
    assert len(mine) == len(orm) == 4
    fields = [f.attname for f in SloRule._meta.concrete_fields]
    for a, b in zip(mine, orm, strict=True):
        assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields]
        assert (a._state.adding, a._state.db) == (b._state.adding, b._state.db)
        assert a.labels == b.labels and type(a.error_types) is list
