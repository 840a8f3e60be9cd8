"""Who holds the GPU memory, read from an OOM message's own figures (issue 16, harm class 1).

A CUDA OOM whose figures show this process's allocator holds most of the memory in use must
never get "free the GPU of other processes" as its action, and one whose figures show the
memory held elsewhere must never be told to shrink its batch. Messages are the frameworks'
real wordings (PyTorch 1.x, 2.0 and >= 2.1, vLLM's start-up check).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsing.shapes import extract_shape_diff
from rca.suggestion.context import AnalysisContext
from rca.suggestion.oom_figures import memory_facts, read_oom_figures
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.validation import validate
from tests.support.evidence import evidence
from tests.support.linear_time import assert_linear

HERE = "memory-held-by-this-process"
ELSEWHERE = "memory-held-elsewhere"

#: PyTorch >= 2.1 inside a container: NVML lists the process itself by its host PID.
NEW_OWN_PID = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a"
    " total capacity of 79.15 GiB of which 3.06 MiB is free. Process 2414 has 79.14 GiB memory"
    " in use. Of the allocated memory 78.52 GiB is allocated by PyTorch, and 134.73 MiB is"
    " reserved by PyTorch but unallocated. If reserved but unallocated memory is large try"
    " setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
)
#: PyTorch >= 2.1, a vLLM worker: NVML reports 0 bytes for the process, PyTorch holds 20 GiB.
NEW_THIS_PROCESS = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.88 GiB. GPU 3 has a total"
    " capacity of 21.96 GiB of which 1.29 GiB is free. Including non-PyTorch memory, this"
    " process has 0 bytes memory in use. Of the allocated memory 19.02 GiB is allocated by"
    " PyTorch, and 1.32 GiB is reserved by PyTorch but unallocated."
)
#: PyTorch >= 2.1 with a second process listed that holds most of the device.
NEW_OTHER_PROCESS = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total"
    " capacity of 23.64 GiB of which 1.10 GiB is free. Process 3101 has 19.80 GiB memory in use."
    " Including non-PyTorch memory, this process has 2.70 GiB memory in use. Of the allocated"
    " memory 2.10 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but"
    " unallocated."
)
#: PyTorch 1.4-2.0 (cases-s rs001) and <= 1.3 ("cached" is reserved minus allocated; rs002).
OLD_HERE = (
    "RuntimeError: CUDA out of memory. Tried to allocate 60.00 MiB (GPU 0; 6.00 GiB total"
    " capacity; 4.11 GiB already allocated; 34.82 MiB free; 4.42 GiB reserved in total by PyTorch)"
)
OLDEST_HERE = (
    "RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 7.93 GiB total"
    " capacity; 6.19 GiB already allocated; 340.00 MiB free; 551.04 MiB cached)"
)
#: cases-s rs006: under 100 MiB reserved on a full 7.9 GiB GPU (a zombie process held it).
OLD_ELSEWHERE = (
    "Tried to allocate 216.00 MiB (GPU 0; 7.92 GiB total capacity; 69.17 MiB already allocated;"
    " 24.56 MiB free; 86.00 MiB reserved in total by PyTorch)"
)
VLLM_STARTUP = (
    "ValueError: Free memory on device (13.50/79.15 GiB) on startup is less than desired GPU"
    " memory utilization (0.9, 71.24 GiB). Decrease GPU memory utilization or reduce GPU memory"
    " used by other processes."
)

_OTHER_PROCESS_WORDS = ("other process", "stale process", "free gpu", "nvidia-smi -c")


def _facts(message: str) -> set[str]:
    return memory_facts(read_oom_figures(message))


@pytest.mark.parametrize(
    ("message", "fact"),
    [
        (NEW_OWN_PID, HERE),
        (NEW_THIS_PROCESS, HERE),
        (OLD_HERE, HERE),
        (OLDEST_HERE, HERE),
        (NEW_OTHER_PROCESS, ELSEWHERE),
        (OLD_ELSEWHERE, ELSEWHERE),
        (VLLM_STARTUP, ELSEWHERE),
    ],
    ids=["own-pid", "this-0-bytes", "reserved", "cached", "other-pid", "zombie", "vllm-start"],
)
def test_the_figures_say_who_holds_the_memory(message: str, fact: str) -> None:
    facts = _facts(message)
    assert fact in facts
    assert {HERE, ELSEWHERE} - {fact} - facts == {HERE, ELSEWHERE} - {fact}  # never both


def test_every_figure_is_read_in_mib() -> None:
    new = read_oom_figures(NEW_OTHER_PROCESS)
    assert new.tried == 2048.0 and new.capacity == pytest.approx(23.64 * 1024)
    assert new.free == pytest.approx(1.10 * 1024)
    assert new.this_process == pytest.approx(2.70 * 1024)
    assert new.listed == (pytest.approx(19.80 * 1024),)
    assert new.reserved == pytest.approx(2.10 * 1024 + 120.0)
    oldest = read_oom_figures(OLDEST_HERE)
    assert oldest.spare == pytest.approx(551.04) and oldest.allocated == pytest.approx(6.19 * 1024)


def test_a_message_without_figures_shows_no_memory_fact() -> None:
    assert _facts("ResourceExhaustedError: OOM when allocating tensor with shape[4096]") == set()
    assert _facts("CUDA out of memory. Tried to allocate 2.00 MiB") == set()


def test_a_device_shared_half_and_half_shows_neither_holder() -> None:
    message = (
        "Tried to allocate 1.00 GiB (GPU 0; 24.00 GiB total capacity; 11.00 GiB already"
        " allocated; 10.00 MiB free; 12.50 GiB reserved in total by PyTorch)"
    )
    assert not {HERE, ELSEWHERE} & _facts(message)


def _ctx(message: str, *ranked: tuple[str, float], **extra: Any) -> AnalysisContext:
    return AnalysisContext(
        error_type="torch.OutOfMemoryError",
        message=message,
        shape_diff=extract_shape_diff(message),
        evidence=evidence(*ranked),
        **extra,
    )


def test_an_oom_held_by_this_process_is_not_blamed_on_another_process() -> None:
    ctx = _ctx(
        NEW_OWN_PID,
        ("gpu-memory-held-by-other-process", 0.9),
        ("cuda-oom-training", 0.85),
        ("cuda-oom-fragmentation", 0.8),
    )
    assert HERE in read_premises(ctx).facts
    assert not rank_steps(ctx)  # every step of the other-process runbook is ruled out
    draft = OfflineProvider().suggest(ctx)
    # No step of it is the action: the draft only points at the runbook, abstains, and
    # fails validation as a fix, so it is shown as a labelled low-confidence hint.
    assert draft.abstained and not validate(draft, ctx).ok
    first = _ctx(NEW_OWN_PID, ("cuda-oom-training", 0.9), ("gpu-memory-held-by-other-process", 0.8))
    action = OfflineProvider().suggest(first).action.lower()
    assert not any(words in action for words in _OTHER_PROCESS_WORDS), action
    blame = Draft(
        "Run on a free GPU (`CUDA_VISIBLE_DEVICES=<free ids>`) or schedule jobs so that only"
        " one uses each device.",
        "Another process holds the memory.",
        "gpu-memory-held-by-other-process",
        0.6,
        "test",
        "test",
    )
    assert not validate(blame, ctx).premises_ok


def test_an_oom_held_elsewhere_is_still_sent_to_the_other_process() -> None:
    ctx = _ctx(
        OLD_ELSEWHERE,
        ("gpu-memory-held-by-other-process", 0.9),
        ("cuda-oom-training", 0.85),
    )
    facts = read_premises(ctx).facts
    assert ELSEWHERE in facts and HERE not in facts
    action = OfflineProvider().suggest(ctx).action.lower()
    assert "batch" not in action and "free gpu" in action


def test_an_oom_held_elsewhere_gets_no_step_that_shrinks_this_process() -> None:
    """The reverse harm: a zombie process holds the GPU; ``inference_mode``, a smaller batch
    or checkpointing in this process frees nothing of it."""
    ctx = _ctx(OLD_ELSEWHERE, ("cuda-oom-inference", 0.9), ("cuda-oom-training", 0.85))
    actions = [candidate.action for candidate in rank_steps(ctx)]
    assert actions and all("other processes" in action for action in actions), actions
    assert "other processes" in OfflineProvider().suggest(ctx).action


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=4000))
def test_any_text_reads_without_error(text: str) -> None:
    facts = _facts(text)
    assert facts <= {HERE, ELSEWHERE, "memory-fragmented", "memory-not-fragmented"} | {
        "allocation-fits-free"
    }


@pytest.mark.parametrize("head", ["1", "9.", "0 "])
def test_figures_repeated_without_end_read_in_linear_time(head: str) -> None:
    """Long runs of half-figures (no unit, no "free", no closing words) stay linear."""

    def read(repeat: int) -> None:
        text = (head + "1" * 40 + " GiB already allocated; " + "9" * 30 + ".") * repeat
        read_oom_figures(text + " Process 1 has " * repeat)

    assert_linear(read, 10, 2_000)


def test_an_adversarially_long_message_is_read_within_its_bound() -> None:
    def read(n: int) -> object:
        return read_oom_figures("Process 1 has 1 GiB memory in use. " * n + OLD_HERE)

    assert_linear(read, 500, 50_000)
    figures = read_oom_figures("Process 1 has 1 GiB memory in use. " * 50_000 + OLD_HERE)
    assert len(figures.listed) <= 64 and figures.reserved is None  # past the 20,000 chars
