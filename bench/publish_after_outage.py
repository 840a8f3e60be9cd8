"""How soon an analysis is queued when the database (and the embedded broker inside it)
comes back after a SIGKILL, as `make run`'s supervisor restarts it.

A web process's background publisher (rca/queue/publisher.py) hands incident ids to the
broker. Two cases, each measured in seconds from the moment the restarted database
answers until the id's message is in the broker's table:

* `during_outage_s`: an id submitted while the database was down (its send is refused);
* `right_after_s`: an id submitted as soon as the database answers again (the process's
  pooled broker connections still point at the dead server).

`null` means not queued within BENCH_OUTAGE_WAIT seconds: such an id waits for the
sweeper (RCA_ANALYSIS_PENDING_AFTER + RCA_SWEEP_INTERVAL, up to 150 s by default).
Runs on its own cluster under .data/bench-outage; ends with one JSON line.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time

import _env

os.environ.setdefault("RCA_DATA_DIR", str(_env.REPO / ".data" / "bench-outage"))
os.environ.pop("DATABASE_URL", None)
os.environ.pop("CELERY_BROKER_URL", None)
_env.setup_django()

from django.db import connection  # noqa: E402

from rca.queue.enqueue import background  # noqa: E402
from webapp import embedded  # noqa: E402

QUEUE = "bench-outage"
WAIT = float(os.environ.get("BENCH_OUTAGE_WAIT", "60"))


def queued() -> set[int]:
    """Incident ids whose message sits in QUEUE (kombu's SQLAlchemy transport tables)."""
    connection.close()  # a fresh connection: the old one may point at the killed server
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.payload FROM kombu_message m JOIN kombu_queue q ON q.id = m.queue_id"
            " WHERE q.name = %s",
            [QUEUE],
        )
        rows = [json.loads(payload) for (payload,) in cursor.fetchall()]
    # Celery's protocol 2: the task's positional args are shown in headers.argsrepr, "(42,)".
    return {int(i) for row in rows for i in re.findall(r"\d+", row["headers"]["argsrepr"])}


def database_answers() -> bool:
    try:
        connection.close()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception:
        return False


def seconds_until(incident_id: int, since: float) -> float | None:
    deadline = since + WAIT
    while time.monotonic() < deadline:
        try:
            if incident_id in queued():
                return round(time.monotonic() - since, 2)
        except Exception:  # noqa: S110 - the database is still starting
            pass
        time.sleep(0.1)
    return None


def main() -> None:
    publisher = background(QUEUE)
    base = int(time.time())  # ids unique to this run
    publisher.submit([base])
    publisher.flush(30)  # warm: the process's broker connection is pooled now
    assert base in queued(), "the broker did not take the first message"

    pid = embedded.postmaster_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    publisher.submit([base + 1])  # refused: the broker is down
    publisher.flush(30)
    time.sleep(1)
    embedded.ensure_running()  # what the supervisor does
    while not database_answers():
        time.sleep(0.1)
    back = time.monotonic()
    publisher.submit([base + 2])
    right_after = seconds_until(base + 2, back)
    during = seconds_until(base + 1, back)
    print(json.dumps({"during_outage_s": during, "right_after_s": right_after}))


if __name__ == "__main__":
    main()
