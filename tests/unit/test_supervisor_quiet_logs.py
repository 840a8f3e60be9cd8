"""A quiet `make run`: routine periodic tasks log at DEBUG, their failures keep their level."""

from __future__ import annotations

import logging

import pytest

import webapp.celery  # noqa: F401 - installs the filter on Celery's loggers


@pytest.mark.parametrize(
    ("logger", "message"),
    [
        ("celery.beat", "Scheduler: Sending due task worker-heartbeat (webapp.tasks.heartbeat)"),
        ("celery.worker.strategy", "Task webapp.tasks.heartbeat[1f] received"),
        ("celery.app.trace", "Task rca.tasks.sweep_stuck_analyses[2e] succeeded in 0.01s: None"),
    ],
)
def test_routine_task_lines_are_hidden_at_info(caplog, logger, message):
    with caplog.at_level(logging.INFO):
        logging.getLogger(logger).info(message)
    assert caplog.records == []


def test_routine_task_lines_show_at_debug(caplog):
    with caplog.at_level(logging.DEBUG, logger="celery.app.trace"):
        logging.getLogger("celery.app.trace").info("Task webapp.tasks.heartbeat[3d] succeeded")
    assert [r.levelname for r in caplog.records] == ["DEBUG"]


def test_a_failing_routine_task_and_real_work_still_log(caplog):
    trace = logging.getLogger("celery.app.trace")
    with caplog.at_level(logging.INFO):
        trace.error("Task webapp.tasks.heartbeat[4c] raised unexpected: OperationalError()")
        trace.info("Task rca.tasks.analyse_incident[5b] succeeded in 2.1s: None")
    assert [r.levelname for r in caplog.records] == ["ERROR", "INFO"]
