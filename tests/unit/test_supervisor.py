"""`make run`'s restart rules: backoff, crash loop, one line per restart, reasons to stop.

The policy is driven with explicit times; the supervisor with a fake clock and units that
are plain functions, so these run in milliseconds. The real processes are exercised by
tests/integration/test_make_run.py.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

from webapp.supervisor import (
    Child,
    RestartHistory,
    RestartPolicy,
    Supervisor,
    Watched,
    describe_exit,
)


def test_backoff_doubles_from_one_second_up_to_thirty():
    history = RestartHistory(RestartPolicy(loop_restarts=100))
    delays = []
    now = 0.0
    for _ in range(8):
        delay = history.delay_after_death(started_at=now, died_at=now + 5)
        assert delay is not None
        delays.append(delay)
        now += 5 + delay
        history.restarted(now)
    assert delays == [1, 2, 4, 8, 16, 30, 30, 30]


def test_a_long_healthy_run_starts_the_backoff_over():
    history = RestartHistory()
    assert history.delay_after_death(0, 1) == 1
    history.restarted(2)
    assert history.delay_after_death(2, 3) == 2
    history.restarted(5)
    assert history.delay_after_death(5, 500) == 1  # ran for minutes: a fresh failure


def test_sixth_quick_death_within_a_minute_is_a_crash_loop():
    history = RestartHistory()
    now = 0.0
    for _ in range(5):  # dies at once each time: restarts at 1, 3, 7, 15, 31 s
        delay = history.delay_after_death(now, now)
        assert delay is not None
        now += delay
        history.restarted(now)
    assert history.delay_after_death(now, now) is None


def test_five_restarts_spread_over_more_than_a_minute_are_no_crash_loop():
    history = RestartHistory()
    for restart_at in (0, 20, 40, 60, 80):
        history.restarted(restart_at)
    assert history.delay_after_death(started_at=80, died_at=95) is not None


def test_exit_statuses_read_as_sentences():
    assert describe_exit(-signal.SIGKILL) == "was killed by SIGKILL"
    assert describe_exit(3) == "exited with status 3"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class FakeUnit:
    """A unit whose death the test decides; counts starts."""

    def __init__(self) -> None:
        self.starts = 0
        self.dead = False

    def start(self) -> None:
        self.starts += 1
        self.dead = False

    def watched(self, name: str = "worker") -> Watched:
        return Watched(
            name,
            start=self.start,
            death=lambda: "was killed by SIGKILL" if self.dead else None,
            stop=lambda _deadline: None,
        )


def test_a_dead_unit_is_restarted_after_its_backoff_with_one_line(capsys):
    clock, fake = Clock(), FakeUnit()
    unit = fake.watched()
    sup = Supervisor([unit], clock=clock)
    sup._start(unit)
    fake.dead = True
    sup.check(unit)
    assert (
        capsys.readouterr().out == "[run   ] worker was killed by SIGKILL; restarting it in 1 s\n"
    )
    sup.check(unit)  # still within its backoff
    assert fake.starts == 1
    clock.now += 1
    sup.check(unit)
    assert fake.starts == 2 and not sup.stopping.is_set()
    assert capsys.readouterr().out == ""


def test_a_crash_loop_stops_the_supervisor_and_says_why():
    clock, fake = Clock(), FakeUnit()
    unit = fake.watched("web")
    sup = Supervisor([unit], clock=clock)
    sup._start(unit)
    while not sup.stopping.is_set() and clock.now < 1000:
        fake.dead = True
        sup.check(unit)
        if unit.restart_at is not None:
            clock.now = unit.restart_at
            sup.check(unit)
    assert fake.starts == 6
    assert sup.reason.startswith("web was killed by SIGKILL after 5 restarts within 60 s")


def test_a_unit_that_fails_to_start_counts_as_dead(capsys):
    clock = Clock()

    def refuse() -> None:
        raise RuntimeError("shared memory block still in use")

    unit = Watched("postgres", start=refuse, death=lambda: "is gone", stop=lambda _d: None)
    sup = Supervisor([unit], clock=clock)
    sup._start(unit)
    sup.check(unit)
    out = capsys.readouterr().out
    assert "postgres did not start: RuntimeError: shared memory block still in use" in out
    assert "postgres is gone; restarting it in 1 s" in out


def test_stopping_a_child_takes_its_whole_process_group(tmp_path):
    """The orphaned beat of the bug report: the leader dies, its child must go too."""
    pid_file = tmp_path / "grandchild.pid"
    script = (
        "import subprocess, sys, time;"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']);"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid));"
        "time.sleep(60)"
    )
    child = Child("worker", [sys.executable, "-c", script])
    child.start({}, threading.Lock())
    assert child.proc is not None
    while not pid_file.exists() or not pid_file.read_text():
        time.sleep(0.05)
    grandchild = int(pid_file.read_text())
    child.proc.send_signal(signal.SIGKILL)  # as in the report: kill -9 of the main process
    child.proc.wait()
    assert child.death() == "was killed by SIGKILL"
    child.terminate()
    child.wait_or_kill(time.monotonic() + 5)
    gone = subprocess.run(
        ["ps", "-o", "stat=", "-p", str(grandchild)], capture_output=True, text=True
    )
    assert gone.stdout.strip() in ("", "Z"), gone.stdout  # gone, or a zombie awaiting its reaper
