"""The Slack message of a breach (pure) and its notification row, sent like any other.

The row goes through rca.notify's delivery (`rca.tasks.send_notification`): retries with
backoff, Retry-After, pausing a webhook Slack refuses, the settings page's delivery log.
`occurrence` is the breach's id, so one breach is one message however often it is told.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.db import transaction

from ingest.models import Project
from rca.models import Notification
from rca.notify import webhook_url
from rca.notify.slack import SlackPayload, escape, target_of
from rca.slo.models import SloBreach, SloRule, window_words


def summary(rule: SloRule, breach: SloBreach) -> str:
    """One line: the rule, the count and the window (plain text; escape it for Slack)."""
    window = window_words(breach.window_seconds)
    if rule.signal == SloRule.Signal.ALERTS:
        names = ", ".join(rule.error_types) or "any alert"
        counted = f"{breach.count} firing alert{'s' * (breach.count != 1)} ({names})"
        where = f"over its {window} window"
    else:
        counted = f"{breach.count} matching incident{'s' * (breach.count != 1)}"
        where = f"within {window}"
    condition = f" [{rule.condition}]" if rule.condition else ""
    return f"SLO breach: {rule.name}{condition}: {counted} {where} (threshold {breach.threshold})"


def build_payload(project_name: str, rule: SloRule, breach: SloBreach) -> SlackPayload:
    """The message: its text contains "SLO breach", the rule, the count and the window."""
    line = escape(summary(rule, breach))
    timeline = f"{settings.RCA_BASE_URL.rstrip('/')}/?range=24h"
    return {
        "text": f"{line} in {escape(project_name)}",
        "blocks": [
            {"type": "section", "text": {"type": "mrkdwn", "text": f"*{line}*", "verbatim": True}},
            {
                "type": "context",
                "elements": [
                    {
                        "type": "mrkdwn",
                        "text": f"{escape(project_name)} · <{timeline}|Timeline>",
                        "verbatim": True,
                    }
                ],
            },
        ],
        "unfurl_links": False,
        "unfurl_media": False,
    }


def notify_breach(project: Project, rule: SloRule, breach: SloBreach) -> Notification | None:
    """Record the message and queue it once the transaction commits (none without a webhook)."""
    url = webhook_url(project)
    if not url or project.slack_disabled_at is not None:
        return None
    n, created = Notification.objects.get_or_create(
        project=project,
        kind=Notification.Kind.SLO_BREACH,
        target=target_of(url),
        occurrence=str(breach.pk),
        defaults={"payload": build_payload(project.name, rule, breach)},
    )
    if created:
        from rca.queue.enqueue import SEND_NOTIFICATION, publish

        transaction.on_commit(partial(publish, SEND_NOTIFICATION, (n.pk,), None))
    return n
