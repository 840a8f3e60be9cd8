"""When Rootcause tells Slack: at most once per (issue, kind, webhook), storms folded into digests.

Each `notify_*` records a `Notification` row -- the unique (issue, kind, target) key makes
a second call a no-op -- and queues `rca.queue.tasks.send_notification` once the transaction
commits. `deliver()` is that task's work: one attempt, recorded on the row.

The digest rule, per project and webhook, with N = RCA_SLACK_DIGEST_THRESHOLD and
M = RCA_SLACK_DIGEST_WINDOW_MINUTES:

* a new issue is sent on its own when fewer than N new-issue messages (queued, sent or
  failed -- not suppressed) were created for the project in the last M minutes;
* otherwise it is `suppressed` and joins the project's open digest. The first suppressed
  issue opens a digest; it stays open for M minutes, then it is sent once, listing every
  issue that joined it. A later suppressed issue opens the next digest.

So in any M minutes a project gets at most N single new-issue messages, and a storm that
lasts no longer than M minutes (50 issues in one minute, say) gets exactly one digest on
top. A suggestion for an issue that went into a digest is suppressed as well; regressions
are always sent. Decisions are made under a row lock on the project, so concurrent
workers count the same way.

One idea per module: :mod:`.webhooks` (which webhook a project posts to; saving and pausing
it), :mod:`.records` (the `Notification` rows every step writes, and the delivery log),
:mod:`.creation` (the `notify_*` calls and the digest decision), :mod:`.delivery` (one
attempt, retries, closing a digest) and :mod:`.try_webhook` (the settings page's test
message). Importers use this package; its submodules are an implementation detail.
"""

from __future__ import annotations

from rca.notify.creation import notify_new_issue, notify_regression, notify_suggestion
from rca.notify.delivery import RetryLater, backoff, deliver
from rca.notify.records import recent_notifications
from rca.notify.try_webhook import send_test_message
from rca.notify.webhooks import set_webhook, webhook_url

__all__ = [
    "RetryLater",
    "backoff",
    "deliver",
    "notify_new_issue",
    "notify_regression",
    "notify_suggestion",
    "recent_notifications",
    "send_test_message",
    "set_webhook",
    "webhook_url",
]
