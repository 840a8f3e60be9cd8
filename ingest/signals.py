"""The one seam through which ingest announces what it stored (wired in `webapp/apps.py`).

Ingest is the lower layer: it knows nothing of analysis or notifications. After storing a
batch it sends `incidents_stored` once, inside the storing transaction, so that what a
receiver writes (a notification row, say) commits or rolls back with the incidents, and a
receiver that publishes to a broker does so with `transaction.on_commit`: a message then
never names an incident the database does not have.

Arguments: `project` (the :class:`~ingest.models.Project`) and `incidents`, the newly
stored :class:`~ingest.models.Incident` rows in order (pks set). An incident that opened
its issue says so in `opened_issue`: ``"new"`` or ``"regressed"``; a retried event that was
already stored is not announced again.
"""

from django.dispatch import Signal

incidents_stored = Signal()
