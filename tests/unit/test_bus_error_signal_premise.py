"""A shared-memory fix justified by a bus error is not given when another signal is named.

A judge's generic harm class (issue 16, borderline): a ``/dev/shm`` step whose reason names
a bus error while the message reports another signal (an illegal instruction).
:mod:`rca.suggestion.signal_names` reads ``signal-other-than-bus``; the bus-error steps carry
it in ``unless`` and :mod:`rca.suggestion.checks.bus_error` fails a shared-memory answer
that names a bus error. The other direction: a bus error still gets the shared-memory step.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rca.suggestion.checks.bus_error import bus_error_violations, raises_shared_memory
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.signal_names import OTHER_SIGNAL, named_signals, signal_facts
from rca.suggestion.validation import validate
from tests.support.evidence import message_context

SHM = ("dataloader-shared-memory-bus-error", 0.9)
WORKER = ("dataloader-worker-exited-unexpectedly", 0.9)
TGI = ("tgi-shard-cannot-start", 0.9)

#: (message, the signals it names)
OTHER = [
    (
        "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Illegal instruction.",
        {"SIGILL"},
    ),
    (
        "RuntimeError: DataLoader worker (pid 17) is killed by signal: Segmentation fault.",
        {"SIGSEGV"},
    ),
    (
        "RuntimeError: DataLoader worker (pid(s) 1234) exited unexpectedly ... signal: Killed",
        {"SIGKILL"},
    ),
    ("Error: Shard 0 process was signaled to shutdown with signal 4", {"SIGILL"}),
    ("Illegal instruction (core dumped)", {"SIGILL"}),
    ("torch.distributed.elastic.multiprocessing.api: exitcode  : -11 (pid: 311)", {"SIGSEGV"}),
    ("Fatal Python error: Aborted\n\nProcess finished with signal SIGABRT", {"SIGABRT"}),
]
BUS = [
    "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Bus error. It is possible"
    " that dataloader's workers are out of shared memory. Please try to raise your shared"
    " memory limit.",
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient"
    " shared memory (shm).",
    "Error: Download process was signaled to shutdown with signal 7",
    "Bus error (core dumped)",
]


def _llm(action: str, reason: str, runbook: str = SHM[0]) -> Draft:
    return Draft(action, reason, runbook, 0.8, "openai", "test-llm")


@pytest.mark.parametrize(("message", "signals"), OTHER)
def test_other_signals_are_read(message, signals):
    assert named_signals([message]) == signals
    assert OTHER_SIGNAL in read_premises(message_context(message)).facts


@pytest.mark.parametrize("message", BUS)
def test_a_bus_error_is_not_another_signal(message):
    assert OTHER_SIGNAL not in read_premises(message_context(message)).facts


def test_a_gpu_illegal_instruction_is_no_signal():
    message = "RuntimeError: CUDA error: an illegal instruction was encountered"
    assert named_signals([message]) == set()


def test_two_signals_one_of_them_bus_claim_nothing():
    assert signal_facts([OTHER[0][0], BUS[0]]) == set()


@pytest.mark.parametrize("runbook", [SHM, WORKER, TGI])
@pytest.mark.parametrize("message", [OTHER[0][0], OTHER[3][0], OTHER[4][0]])
def test_the_bus_error_step_is_never_the_action(message, runbook):
    ctx = message_context(message, runbook)
    for candidate in rank_steps(ctx):
        assert not bus_error_violations(candidate.action, candidate.reason, {OTHER_SIGNAL})
    suggestion = OfflineProvider().suggest(ctx)
    assert not bus_error_violations(suggestion.action, suggestion.reason, {OTHER_SIGNAL})


@pytest.mark.parametrize(("message", "runbook"), [(BUS[0], SHM), (BUS[2], TGI), (BUS[1], SHM)])
def test_a_bus_error_still_gets_the_shared_memory_step(message, runbook):
    suggestion = OfflineProvider().suggest(message_context(message, runbook))
    assert raises_shared_memory(suggestion.action), suggestion.action


@pytest.mark.parametrize(
    ("action", "reason", "harmful"),
    [
        ("Run the container with `--shm-size=8g`.", "Workers died of a bus error.", True),
        ("Raise /dev/shm (`--ipc=host`) for the SIGBUS.", "Shared memory is full.", True),
        ("Mount a larger /dev/shm.", "Signal 7 means shared memory ran out.", True),
        ("Run the container with `--shm-size=8g`.", "NCCL needs shared memory segments.", False),
        ("Install a TensorFlow build without AVX.", "The CPU lacks AVX: SIGILL.", False),
    ],
)
def test_an_llm_answer_blaming_a_bus_error_fails_validation(action, reason, harmful):
    ctx = message_context(OTHER[0][0], SHM)
    check = validate(_llm(action, reason), ctx)
    assert (not check.premises_ok) == harmful, check.complaints


def test_the_same_answer_passes_for_a_bus_error():
    ctx = message_context(BUS[0], SHM)
    draft = _llm("Run the container with `--shm-size=8g`.", "Workers died of a bus error.")
    assert validate(draft, ctx).premises_ok


# --------------------------------------------------------------------------- properties


@given(
    number=st.integers(1, 31), prefix=st.text(alphabet=st.sampled_from(list("ab :")), max_size=40)
)
def test_a_numbered_signal_is_other_unless_seven(number, prefix):
    facts = signal_facts([f"{prefix} killed by signal {number}"])
    known = number in {4, 6, 7, 8, 9, 11}
    assert (OTHER_SIGNAL in facts) == (known and number != 7)


@given(
    st.text(
        alphabet=st.sampled_from(list("signal: 7SIGBUS bus error(core dumped)\n-")), max_size=3000
    )
)
def test_arbitrary_text_never_raises(text):
    signal_facts([text])
    bus_error_violations(text, text, {OTHER_SIGNAL})


@pytest.mark.parametrize("piece", ["signal: ", "signal 1", "exitcode : -", "bus error shm "])
def test_reading_is_linear_in_adversarial_text(piece):
    def seconds(size: int) -> float:
        text = (piece * (size // len(piece) + 1))[:size]
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            signal_facts([text])
            bus_error_violations(text, text, {OTHER_SIGNAL})
            best = min(best, time.perf_counter() - started)
        return best

    small, large = seconds(2_000), seconds(80_000)
    assert large < max(1.0, 60 * small), (small, large)
