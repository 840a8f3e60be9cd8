"""The processor's lazy commits (`synchronous_commit` off, ingest/inbox/process.py) and a
crash of PostgreSQL that loses one: the claim's incidents and its inbox DELETE are lost
together, the rows come back and are stored once; a commit that queued a publish (an
analysis, a notification) is durable before anything is published.

On a cluster of its own (its own RCA_DATA_DIR), whose walwriter is told to wait 10 s, so
that a lazy commit is still only in PostgreSQL's memory when every one of its processes
is killed with SIGKILL: the loss is certain, not a race the test might miss.
"""

from __future__ import annotations

import json
import os
import signal

import psutil
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ingest.inbox.process import _DURABLE, process_pending
from ingest.inbox.records import make_records
from ingest.inbox.write import write
from ingest.models import InboxItem, Incident
from tests.support.factories import project_with_key, shape_error
from tests.support.processes import python
from webapp import embedded

pytestmark = pytest.mark.timeout(300)

#: Run in a subprocess on the crash cluster: a first incident of an issue (it publishes
#: the issue's analysis: a durable commit), then a second of the same issue (publishes
#: nothing: lazy), then every PostgreSQL process is killed at once.
CRASH = """
import json, os, signal, sys
import psutil
from django.db import connection
from ingest.inbox.process import process_pending
from ingest.inbox.records import make_records
from ingest.inbox.write import write
from ingest.models import Project
from webapp import embedded
payloads = json.loads(sys.argv[1])
project = Project.objects.create(name="Crash", slug="crash")
for payload in payloads:
    write(make_records(project.pk, "api", [payload]))
    assert process_pending(10, lazy_commit=True) == 1
postmaster = psutil.Process(embedded.postmaster_pid())
for proc in [postmaster, *postmaster.children()]:
    os.kill(proc.pid, signal.SIGKILL)
"""

#: After the restart: where each event id is (stored incidents, waiting inbox rows).
WHERE = """
import json, sys
from ingest.models import InboxItem, Incident
ids = json.loads(sys.argv[1])
def where(model):
    return sorted(model.objects.filter(event_id__in=ids).values_list("event_id", flat=True))
print(json.dumps({"stored": where(Incident), "waiting": where(InboxItem)}))
"""

PROCESS = "from ingest.inbox.process import process_pending; print(process_pending(10))"


def shell(env: dict[str, str], code: str, *args: str) -> str:
    """`code` in a Django shell on the crash cluster; its last line of output."""
    out = python(env, "-c", SETUP + code, *args)
    return out.strip().splitlines()[-1] if out.strip() else ""


SETUP = (
    "import django, os\n"
    "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'webapp.settings')\n"
    "django.setup()\n"
)


def test_a_lazy_commit_lost_in_a_database_crash_comes_back_and_is_stored_once(tmp_path):
    data = tmp_path / "data"
    env = {
        "RCA_DATA_DIR": str(data),
        "SECRET_KEY": "lazy-commit-test-" + "x" * 40,
        "CELERY_BROKER_URL": "memory://",  # the publish is not this test's subject
        "RCA_PUBLISH_IN_BACKGROUND": "false",
    }
    uri = python(env, "-c", "from webapp import embedded; print(embedded.database_url())")
    env["DATABASE_URL"] = uri.strip().splitlines()[-1]
    try:
        python(env, "manage.py", "migrate", "--no-input", "-v", "0")
        # The walwriter would write the lazy commit within 200 ms; here it waits 10 s.
        shell(
            env,
            "from django.db import connection\n"
            "c = connection.cursor()\n"
            "c.execute(\"ALTER SYSTEM SET wal_writer_delay = '10s'\")\n"
            "c.execute(\"ALTER SYSTEM SET wal_writer_flush_after = '1GB'\")\n"
            "c.execute('SELECT pg_reload_conf()')\n",
        )
        first, second = shape_error(8), shape_error(16)  # one issue, two occurrences
        first["event_id"], second["event_id"] = "a" * 32, "b" * 32
        ids = [first["event_id"], second["event_id"]]
        python(env, "-c", SETUP + CRASH, json.dumps([first, second]))
        python(
            env,
            "-c",
            "from webapp import embedded; embedded._wait_for_reaping("
            "embedded.data_dir()); embedded.ensure_running()",
        )
        where = json.loads(shell(env, WHERE, json.dumps(ids)))
        # The first commit queued the analysis: durable. The second was lazy and
        # lost with its DELETE: the row is back in the inbox, the incident not stored.
        assert where == {"stored": [ids[0]], "waiting": [ids[1]]}
        assert shell(env, PROCESS) == "1"
        assert json.loads(shell(env, WHERE, json.dumps(ids))) == {"stored": ids, "waiting": []}
    finally:
        pid = embedded.postmaster_pid(data / "pg")
        if pid is not None:
            for proc in [psutil.Process(pid), *psutil.Process(pid).children()]:
                os.kill(proc.pid, signal.SIGKILL)


@pytest.mark.queues_analyses  # the real publish on commit, not conftest's stand-in
@pytest.mark.django_db(transaction=True)
def test_a_claim_is_made_durable_before_commit_only_when_it_publishes(settings):
    settings.RCA_INGEST_INLINE = False
    tenant = project_with_key("lazy")
    first, second = shape_error(8), shape_error(16)
    for payload, publishes in ((first, True), (second, False)):
        write(make_records(tenant.project.pk, "api", [payload]))
        with CaptureQueriesContext(connection) as queries:
            assert process_pending(10, lazy_commit=True) == 1
        statements = [q["sql"] for q in queries.captured_queries]
        assert (_DURABLE in statements) is publishes, statements
    assert Incident.objects.filter(project=tenant.project).count() == 2
    assert not InboxItem.objects.exists()
    with connection.cursor() as cursor:  # SET LOCAL: the session's setting is untouched
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"
