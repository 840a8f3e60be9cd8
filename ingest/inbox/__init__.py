"""The inbox: accept an incident in the request, process it after (issue 19, item 1).

A request authenticates, bounds its size and rate, validates, writes one row per incident
to the `InboxItem` table (`write.py`) and answers; the processor (`process.py`, run by
`manage.py process_inbox`, `runner.py`) then scrubs, parses, groups and stores the rows
through `ingest.store.store_incidents` and deletes them in the same transaction. When the
database is away, `accept.py` hands the rows to the on-disk spool (`ingest.spool`), which
the processor stores once it is back. With RCA_SENTRY_SPOOL_FIRST, Sentry events skip the
table: they go to the spool first and are stored from there (`spool_first.py`).

Rows hold payloads as the client sent them, unscrubbed: nothing but the processor reads
them, so nothing unscrubbed reaches the API, the UI, a prompt or Slack.
"""
