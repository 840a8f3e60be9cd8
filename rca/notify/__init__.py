"""When Rootcause tells Slack: once per (issue, kind, webhook); storms folded, new failures never.

Each `notify_*` records a `Notification` row -- the unique (issue, kind, target) key makes
a second call a no-op -- and queues `rca.queue.tasks.send_notification` once the transaction
commits, on a queue of its own (RCA_QUEUE_NOTIFY): a send waits on Slack for up to
RCA_SLACK_TIMEOUT, and no analysis may wait behind it. `deliver()` is that task's work: one
attempt, recorded on the row.

What a channel hears, and why. The digest exists so that one storm cannot flood the
channel; it must never hide the failure the on-call person most needs, a *new* one that
turns up while the storm runs. So:

* **repeats send nothing**: an occurrence of an issue already announced is counted on the
  issue (and answered by its analysis), never messaged; a storm of a known failure is
  silent in Slack however long it lasts;
* **a new issue is announced on its own**, "New issue" at once and "Suggested fix" when
  its analysis ends, **unless its burst or the window is used up**. With
  B = RCA_SLACK_BURST_LIMIT (2), S = RCA_SLACK_BURST_SECONDS (5), N =
  RCA_SLACK_DIGEST_THRESHOLD (5) and M = RCA_SLACK_DIGEST_WINDOW_MINUTES (5), per project
  and webhook: it gets its own messages when fewer than B of the issues that opened in the
  S seconds before it were announced, and fewer than N new issues in the last M minutes.
  New issues that open within seconds of one another (a deploy breaking twenty things at
  once) share a cause; the first B of them are announced and the rest are folded. Because
  a burst takes at most B of the window's N messages, a new failure that opens S seconds
  or more after the burst still gets its own messages, up to N per window in all: the
  bound on what any storm of *different* new issues can post;
* **folded issues go into one digest**: the first folded issue opens it; it stays open for
  M minutes, then is sent once, listing every issue that joined it ("17 more new issues").
  A later folded issue opens the next digest. A folded issue's suggestion is not sent (the
  digest links its page, which shows it);
* **a regression is always sent**, once per regressing occurrence.

So in any M minutes a project's channel gets at most N single new-issue messages (and
their suggestions), plus one digest per M minutes while issues are being folded. The rule
reads only times and counts, never an error's text or service. Decisions are made under a
row lock on the project, so concurrent workers count the same way.

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
