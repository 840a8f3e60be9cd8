"""Locks that serialise notifications and analyses never block rows that merely point at
what they lock: an ingest holding the project's lock while it waits for an issue row must
not deadlock with a worker inserting a notification (seen in bench/storm.py as lost
Slack messages)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from ingest.models import Issue
from ingest.store import store_incident
from rca.models import Notification
from rca.notify.records import lock_project
from rca.queue.coalesce import settle
from tests.support.factories import project_with_key, shape_error

pytestmark = pytest.mark.django_db(transaction=True)


def in_other_connection(work) -> threading.Thread:
    """Run `work` on a connection of its own; the thread ends when the work is done."""

    def run() -> None:
        try:
            work()
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_held_project_lock_does_not_block_inserting_a_notification():
    project = project_with_key("locks").project
    issue = store_incident(project, shape_error(batch=4)).incident.issue
    with transaction.atomic():
        lock_project(project.pk)  # an ingest deciding a digest, still in its transaction
        insert = in_other_connection(
            lambda: Notification.objects.create(
                project=project, issue=issue, kind="suggestion", target="t"
            )
        )
        insert.join(timeout=30)
        assert not insert.is_alive(), "the insert waited for the project lock"
    assert Notification.objects.filter(issue=issue, kind="suggestion").exists()


def test_a_held_issue_lock_does_not_block_inserting_a_notification_for_it():
    project = project_with_key("locks").project
    issue = store_incident(project, shape_error(batch=4)).incident.issue
    with transaction.atomic():
        Issue.objects.select_for_update(no_key=True).get(pk=issue.pk)  # as admit/settle do
        insert = in_other_connection(
            lambda: Notification.objects.create(
                project=project, issue=issue, kind="suggestion", target="t"
            )
        )
        insert.join(timeout=30)
        assert not insert.is_alive(), "the insert waited for the issue lock"
    settle(issue.pk)  # and settling still takes the same lock without trouble
