"""A step marked for one setting (``mode: training`` / ``mode: serving``) is a bet on that
setting: when the incident does not tell which it is, a step that fixes both ranks above it.

A bare CUDA out-of-memory message (no frames, logs or inference context) says nothing about
whether a training loop or a server ran out: it is not told to wrap inference in
``torch.no_grad()``. The same message with a training loop's frames gets a training step,
and with a served request's context a serving step.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from rca.corpus.step_metadata import StepMetadata
from rca.suggestion.context import AnalysisContext
from rca.suggestion.providers.incident_view import read_incident
from rca.suggestion.providers.offline_weights import WEIGHTS
from rca.suggestion.providers.step_ranking import _setting_bet, _setting_score, rank_steps
from tests.support.evidence import incident_context

_OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total"
    " capacity of 23.65 GiB of which 1.20 GiB is free. Of the allocated memory 21.10 GiB is"
    " allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated."
)
_OLD_OOM = (
    "RuntimeError: CUDA out of memory. Tried to allocate 60.00 MiB (GPU 0; 6.00 GiB total"
    " capacity; 4.11 GiB already allocated; 34.82 MiB free; 4.42 GiB reserved in total by"
    " PyTorch)"
)
#: As retrieval ranks them for a bare OOM message: the inference runbook first.
_RANKED = (("cuda-oom-inference", 0.9), ("cuda-oom-training", 0.88))


def _training_frames() -> list[dict[str, object]]:
    return [
        {
            "filename": "/home/u/proj/train.py",
            "function": "train_one_epoch",
            "lineno": 88,
            "module": "",
            "in_app": True,
            "context_line": "loss.backward()",
        }
    ]


def _bare(message: str) -> AnalysisContext:
    return incident_context(message, *_RANKED)


@pytest.mark.parametrize("message", [_OOM, _OLD_OOM])
def test_a_bare_oom_gets_a_step_for_either_setting(message: str) -> None:
    ctx = _bare(message)
    assert read_incident(ctx).mode is None
    chosen = rank_steps(ctx)[0]
    assert chosen.applies.mode is None
    assert "no_grad" not in chosen.action
    assert "batch" in chosen.action


@pytest.mark.parametrize("message", [_OOM, _OLD_OOM])
def test_the_same_oom_in_a_training_loop_gets_a_training_step(message: str) -> None:
    ctx = incident_context(message, *_RANKED, frames=_training_frames())
    chosen = rank_steps(ctx)[0]
    assert chosen.applies.mode == "training"
    assert chosen.evidence.slug == "cuda-oom-training"


@pytest.mark.parametrize("message", [_OOM, _OLD_OOM])
def test_the_same_oom_while_serving_requests_gets_a_serving_step(message: str) -> None:
    context = {"model_id": "llama-3-8b", "batch_size": 32, "seq_len": 4096, "device": "cuda:0"}
    ctx = replace(_bare(message), inference_context=context)
    chosen = rank_steps(ctx)[0]
    assert chosen.applies.mode == "serving"
    assert chosen.evidence.slug == "cuda-oom-inference"


def test_a_marked_step_ranks_below_a_neutral_one_only_when_the_setting_is_unknown() -> None:
    bare = read_incident(_bare(_OOM))
    training = read_incident(incident_context(_OOM, *_RANKED, frames=_training_frames()))
    marked, neutral = StepMetadata(mode="serving"), StepMetadata()
    assert _setting_bet(marked, bare) == -WEIGHTS.mode_unknown < 0
    assert _setting_bet(neutral, bare) == 0.0
    assert _setting_bet(marked, training) == 0.0  # known: the setting score decides
    none: frozenset[str] = frozenset()
    assert _setting_score(marked, bare, none) == 0.0  # the bet is not in the score
    assert _setting_score(marked, training, none) == -WEIGHTS.mode


def test_the_bet_orders_steps_but_leaves_the_chosen_steps_score() -> None:
    ranked = rank_steps(_bare(_OOM))
    assert ranked[0].preference == 0.0
    assert any(candidate.score > ranked[0].score for candidate in ranked[1:])


def test_the_code_evidence_decides_the_setting_over_cue_words() -> None:
    # Words of serving (inference, server, request, endpoint) in the message; the frames are
    # a training loop's: the premises read training, and so does the ranker.
    message = _OOM + " while the inference server handled a request from the endpoint"
    ctx = incident_context(message, *_RANKED, frames=_training_frames())
    assert read_incident(ctx).mode == "training"
    assert read_incident(_bare(message)).mode == "serving"  # no code evidence: cue words
