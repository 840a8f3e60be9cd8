"""The background publisher: requests never wait for it, and it never drops or repeats an id."""

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from rca.queue.publisher import CoalescingPublisher

REPO = Path(__file__).resolve().parents[2]


class SlowBroker:
    """Records each send; the first one blocks until released, like a broker round trip."""

    def __init__(self) -> None:
        self.sends: list[list[int]] = []
        self.release = threading.Event()
        self.entered = threading.Event()

    def __call__(self, ids: list[int]) -> None:
        self.entered.set()
        self.release.wait(5)
        self.sends.append(ids)


def test_submit_returns_while_a_send_is_in_flight_and_later_ids_go_out_together():
    broker = SlowBroker()
    publisher = CoalescingPublisher(broker)
    publisher.submit([1])
    assert broker.entered.wait(5)
    for i in range(2, 12):  # the broker is still busy with [1]: these must not wait
        publisher.submit([i])
    broker.release.set()
    assert publisher.flush(5)
    assert broker.sends == [[1], list(range(2, 12))]


def test_a_send_that_raises_does_not_stop_later_ones():
    sent: list[list[int]] = []

    def flaky(ids: list[int]) -> None:
        if ids == [1]:
            raise ConnectionError("broker went away")
        sent.append(ids)

    publisher = CoalescingPublisher(flaky)
    publisher.submit([1])
    assert publisher.flush(5)
    publisher.submit([2, 3])
    assert publisher.flush(5)
    assert sent == [[2, 3]]


def test_sends_are_capped_in_size():
    broker = SlowBroker()
    publisher = CoalescingPublisher(broker, most_per_send=4)
    publisher.submit([0])
    assert broker.entered.wait(5)
    publisher.submit(list(range(1, 11)))
    broker.release.set()
    assert publisher.flush(5)
    assert broker.sends == [[0], [1, 2, 3, 4], [5, 6, 7, 8], [9, 10]]


def test_ids_submitted_just_before_a_normal_exit_are_still_sent(tmp_path):
    """The process ends right after submitting (a gunicorn worker stopping): atexit flushes."""
    out = tmp_path / "sent.txt"
    script = textwrap.dedent(
        f"""
        import time
        from rca.queue.publisher import CoalescingPublisher

        def send(ids):
            time.sleep(0.3)  # a slow broker: still busy when the main thread ends
            with open({str(out)!r}, "a") as f:
                f.write(" ".join(map(str, ids)) + "\\n")

        p = CoalescingPublisher(send)
        p.submit([1, 2])
        p.submit([3])
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=30, cwd=REPO)
    sent = out.read_text().split()
    assert sorted(map(int, sent)) == [1, 2, 3]


def test_a_forked_child_sends_its_own_ids_and_not_the_parents(tmp_path):
    """gunicorn forks workers: a child must start its own thread, not inherit a dead one."""
    out = tmp_path / "sent.txt"
    script = textwrap.dedent(
        f"""
        import os, threading
        from rca.queue.publisher import CoalescingPublisher

        gate = threading.Event()
        def send(ids):
            gate.wait(5)
            with open({str(out)!r}, "a") as f:
                f.write(f"{{os.getpid()}}:{{','.join(map(str, ids))}}\\n")

        p = CoalescingPublisher(send)
        p.submit([1])           # the parent's thread is now stuck in send
        p.submit([2])           # queued in the parent when it forks
        pid = os.fork()
        if pid == 0:
            gate.set()
            p.submit([100])
            ok = p.flush(5)
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        gate.set()
        assert p.flush(5)
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=30, cwd=REPO)
    lines = out.read_text().split()
    by_pid: dict[str, list[str]] = {}
    for line in lines:
        pid, ids = line.split(":")
        by_pid.setdefault(pid, []).extend(ids.split(","))
    assert sorted(sorted(v) for v in by_pid.values()) == [["1", "2"], ["100"]]


class DownBroker:
    """Refuses every send (returns the ids as not sent) until `up` is set."""

    def __init__(self) -> None:
        self.up = threading.Event()
        self.sent: list[int] = []
        self.refused = 0

    def __call__(self, ids: list[int]) -> list[int]:
        if not self.up.is_set():
            self.refused += 1
            return ids
        self.sent.extend(ids)
        return []


def test_ids_refused_during_an_outage_go_out_once_the_broker_answers_again():
    """No new submit, no sweeper: the thread itself retries with backoff."""
    from tests.support.processes import wait_for

    broker = DownBroker()
    publisher = CoalescingPublisher(broker)
    publisher.submit([1, 2])
    wait_for(lambda: broker.refused >= 2, timeout=10, interval=0.05)  # retried, still down
    assert publisher.unsent() == [1, 2]
    broker.up.set()
    wait_for(lambda: broker.sent, timeout=20, interval=0.05)
    assert broker.sent == [1, 2] and publisher.unsent() == []


def test_a_fresh_id_sent_after_an_outage_takes_the_waiting_ones_with_it():
    from tests.support.processes import wait_for

    broker = DownBroker()
    publisher = CoalescingPublisher(broker)
    publisher.submit([1])
    wait_for(lambda: broker.refused, timeout=10, interval=0.01)
    broker.up.set()
    publisher.submit([2])
    wait_for(lambda: len(broker.sent) == 2, timeout=20, interval=0.01)
    assert sorted(broker.sent) == [1, 2]  # each once, the refused one not lost
