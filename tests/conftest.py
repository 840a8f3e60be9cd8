"""Shared fixtures: the real Celery worker subprocess on the test database and broker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

from tests.support import corpus
from tests.support.processes import SESSION_LONG, SESSION_WORKER_POLL, Worker, sqla_broker_url

# Hypothesis settings for the whole suite, in one place. `ci` (the default, `make test`):
# no deadline and no too_slow health check, since on a loaded 2-core box a slow draw or
# example is the machine, not the code (a unit property failed that way in a full run);
# 100 examples where a test sets no count. `deep` (HYPOTHESIS_PROFILE=deep) tries 1,000
# there. Counts written at a test stay: the ingest fuzzers' 2,000/1,000/500 are what it
# takes to meet the lone-surrogate and NaN 500s they once found (at 200 examples a seeded
# run passed with either bug put back; at 2,000 the NaN one failed).
hypothesis_settings.register_profile(
    "ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
hypothesis_settings.register_profile(
    "deep", parent=hypothesis_settings.get_profile("ci"), max_examples=1000
)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Worker subprocesses inherit this: tests stand in for Slack with servers on loopback.
os.environ.setdefault("RCA_WEBHOOK_ALLOWED_HOSTS", "127.0.0.1,localhost")
# Servers tests start store what they accept before answering (see _ingest_inline below).
os.environ.setdefault("RCA_INGEST_INLINE", "true")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config, specs) -> None:
    """Under pytest-xdist (`make test` runs `pytest -n 2 --dist loadfile`) each worker gets a
    state dir of its own, `$RCA_DATA_DIR/gw0`, `gw1`: its own embedded cluster, spool and
    runbook dirs. Tests terminate backends by application name, stop and restart processors
    and fill spools;
    on one shared cluster a worker would do that to the other's. Each worker stops its own
    cluster in its sessionfinish below; the controller stops the one its settings started
    and any a worker left running (one that crashed or was interrupted alone).

    The embedding cache is the one thing they share: `$RCA_DATA_DIR/embedding-cache`, so
    the corpus is embedded once, by one process (tests/support/corpus.py)."""
    base = os.environ.get("RCA_DATA_DIR")
    if not base or os.environ.get("DATABASE_URL"):
        return  # an external database: workers get databases of their own (suffix _gwN)
    for index, spec in enumerate(specs):
        spec.env.setdefault(corpus.CACHE_ENV, corpus.shared_cache_dir(base))
        spec.env.setdefault("RCA_DATA_DIR", os.path.join(base, f"gw{index}"))
        _WORKER_STATE_DIRS.append(Path(spec.env["RCA_DATA_DIR"]))


#: The state dirs this (controller) process gave its xdist workers.
_WORKER_STATE_DIRS: list[Path] = []


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus) -> None:
    """Stop the embedded PostgreSQL when this run had a cluster of its own (`make test`;
    under xdist each process stops its own, see `pytest_xdist_setupnodes`).

    Last: after an interrupt (Ctrl-C, a timeout, -x) pytest tears the session's fixtures
    down in its own sessionfinish, and the test database's flush needs the cluster; run
    first, this stopped it under them and the run ended in a traceback, no summary."""
    from webapp import embedded

    if not os.environ.get("DATABASE_URL") and os.environ.get("RCA_DATA_DIR"):
        embedded.stop()
        for state in _WORKER_STATE_DIRS:
            embedded.stop(state / "pg")


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        "inbox: ingest accepts, answers and leaves storing to a processor (accept-then-process"
        " for real; without it the request stores its own incidents: RCA_INGEST_INLINE)",
    )
    # xdist hands out files in the order `pytest_collection_modifyitems` below leaves them,
    # not sorted by test count (its default puts the one-test files, the longest here, last).
    if getattr(config.option, "loadscopereorder", False):
        config.option.loadscopereorder = False


#: Directories whose files start servers, workers or whole stacks: a minute or more each.
_SLOW_TIERS = ("tests/integration/", "tests/browser/")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items) -> None:
    """Under xdist (`make test`), integration and browser files come before the unit ones.

    `--dist loadfile` gives a process one more file when it has two tests or fewer left,
    so a file of one long test (test_faults, test_make_run: minutes each on a loaded box)
    also brings the next file along. xdist's default order, most tests first, put those
    files last: one process ran them one after the other while the other sat idle (231 s
    of a 34-min run). Ordered this way the unit files, many and short, come last and even
    out the end. A stable sort: each file's tests keep pytest-django's order. One process
    (`-n 0`) keeps pytest-django's order across files too."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    items.sort(key=lambda item: not item.nodeid.startswith(_SLOW_TIERS))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    """Under xdist, a process that reaches a unit file runs no integration or browser file
    again (files go out in the order above, one process taking the next in line): the
    session's workers stop there instead of polling the broker for the rest of the run.
    (xdist sets `dist` to "no" in its processes, so the mode cannot be checked here; a test
    that wants a worker after that fails, saying so, instead of getting a stopped one.)"""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    wanted = sorted(set(SESSION_WORKERS) & set(item.fixturenames))
    if wanted and _STOPPED_EARLY:
        pytest.fail(f"{wanted} stopped when this process reached the unit files", pytrace=False)
    if wanted or not SESSION_LONG or item.nodeid.startswith(_SLOW_TIERS):
        return
    for worker in SESSION_LONG:
        worker.stop()  # again at the session's end: a no-op then
    SESSION_LONG.clear()
    _STOPPED_EARLY.append(item.nodeid)


#: The unit test at which this process stopped the session's workers (tests/support/processes.py).
_STOPPED_EARLY: list[str] = []


@pytest.fixture(autouse=True)
def _ingest_inline(request, monkeypatch) -> None:
    """Requests store what they accept before answering (RCA_INGEST_INLINE), so a test can
    read the incident's ids off the answer; servers a test starts inherit it through the
    environment (set above for module-scoped ones). Tests of the real async path
    (`@pytest.mark.inbox`, `make run`) turn it off."""
    from django.conf import settings

    inline = request.node.get_closest_marker("inbox") is None
    monkeypatch.setenv("RCA_INGEST_INLINE", "true" if inline else "false")
    monkeypatch.setattr(settings, "RCA_INGEST_INLINE", inline)


@pytest.fixture(scope="session")
def broker_url(django_db_setup, django_db_blocker):
    """Point this process's Celery app at a broker inside the test database.

    The embedded broker lives in the database, so the test run gets its own queue and a
    `make run` worker on the same cluster can never steal the tests' tasks.
    """
    from django.conf import settings
    from django.db import connection

    from webapp.celery import app

    url = os.environ.get("CELERY_BROKER_URL") or sqla_broker_url(connection.settings_dict)
    settings.CELERY_BROKER_URL = url
    app.conf.broker_url = url
    yield url
    _release_broker_connections(app)


def _release_broker_connections(app) -> None:
    """Close the SQLAlchemy broker's pooled connections so the test database can be dropped."""
    app.pool.force_close_all()
    from kombu.transport import sqlalchemy

    for engine, _session in sqlalchemy.Channel._engines.values():
        engine.dispose()
    sqlalchemy.Channel._engines.clear()


#: Fixtures that run a worker for the test: with them, posted incidents are analysed.
RUNS_A_WORKER = frozenset({"celery_worker", "redis"})
#: Session workers whose tasks may outlive the test that queued them.
SESSION_WORKERS = ("celery_worker", "llm_worker")


@pytest.fixture(autouse=True)
def _session_workers_idle_before_the_flush(request):
    """Before a test's tables are truncated, the session's workers finish what it queued.

    The database fixture is requested from here, so it is torn down after this fixture:
    the wait comes first, then the TRUNCATE, which deadlocked with a worker still writing
    a test's last analysis (seen in CI, tests/integration/test_pipeline.py)."""
    names = [name for name in SESSION_WORKERS if name in request.fixturenames]
    if not names or "_django_db_helper" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("_django_db_helper")
    workers = [request.getfixturevalue(name) for name in names]
    yield
    for worker in workers:
        worker.wait_idle()


@pytest.fixture(autouse=True)
def _analyses_only_where_a_worker_runs(request, monkeypatch) -> None:
    """Tests that run no worker of their own do not queue analyses.

    The session's worker outlives each test. An incident posted by a test that does not
    care about its analysis would be analysed while pytest-django truncates the tables
    behind that test, and the TRUNCATE deadlocks with the analysis' inserts (seen in CI).
    Tests with a worker (`celery_worker`, a private `redis` one) and tests of publishing
    itself (`@pytest.mark.queues_analyses`) keep the real path.
    """
    if RUNS_A_WORKER & set(request.fixturenames) or request.node.get_closest_marker(
        "queues_analyses"
    ):
        return
    from rca.queue import intake

    monkeypatch.setattr(intake, "publish_analyses_on_commit", lambda *_, **__: None)


@pytest.fixture(scope="session")
def celery_worker(broker_url, tmp_path_factory):
    """One real `celery worker` process for the whole session, on the test database."""
    from django.db import connection

    worker = Worker(
        dict(connection.settings_dict),
        broker_url,
        tmp_path_factory.mktemp("worker"),
        extra_env=SESSION_WORKER_POLL,
    )
    SESSION_LONG.append(worker)
    try:
        worker.wait_ready()
        yield worker
    finally:
        worker.stop()
