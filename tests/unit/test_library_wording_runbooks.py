"""Library wordings of four failure kinds route to the runbook written for them (issue 16).

flash-attn's compiled module loaded against another torch (``flash-attn-undefined-symbol``,
from the flash-attention installation notes and its ``setup.py`` build switches), the older
transformers wording of the missing padding token (``tokenizer-pad-token-missing``), PEFT's
LoRA target names per architecture (``peft-target-modules-not-found``, from PEFT's defaults
per model type: the fix names a fused projection only when a printed model shows one) and the
start-up check of NVIDIA's NGC containers for the host driver (``cuda-driver-too-old``, from
the containers' release notes). Each wording, sent as a bare incident, must be found first
over the whole bundled corpus by lexical retrieval (BM25 and the signal prior; unit tests load
no embedding model), and the offline provider must suggest that runbook's fix in the
library's own terms, with a valid suggestion. Look-alikes of other kinds must not match the
new signals.
"""

from __future__ import annotations

import dataclasses

import pytest

from rca.corpus.files import match_signals
from tests.support.evidence import bundled_runbooks
from tests.support.vendor_checks import (
    check_routes,
)

#: slug -> (error type, message) as the libraries print them.
WORDINGS: dict[str, tuple[tuple[str, str], ...]] = {
    "flash-attn-undefined-symbol": (
        (
            "ImportError",
            "/opt/conda/lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so:"
            " undefined symbol: _ZN3c104cuda9SetDeviceEi",
        ),
        (
            "ImportError",
            "flash_attn_2_cuda.cpython-311-x86_64-linux-gnu.so: undefined symbol:"
            " _ZN3c105ErrorC2ENS_14SourceLocationENSt7__cxx1112basic_string"
            "IcSt11char_traitsIcESaIcEEE",
        ),
        (
            "ImportError",
            "/usr/lib/python3/dist-packages/flash_attn_cuda.cpython-39-x86_64-linux-gnu.so:"
            " undefined symbol: _ZNK3c1010TensorImpl36is_contiguous_nondefault_policy_impl"
            "ENS_12MemoryFormatE",
        ),
    ),
    "tokenizer-pad-token-missing": (
        (
            "ValueError",
            "Unable to set proper padding strategy as the tokenizer does not have a padding"
            " token. In this case please set the `pad_token` `(tokenizer.pad_token ="
            " tokenizer.eos_token e.g.)` or add a new pad token via the function"
            " add_special_tokens if you want to use a padding strategy",
        ),
        (
            "ValueError",
            "Asking to pad but the tokenizer does not have a padding token. Please select a"
            " token to use as `pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)`"
            " or add a new pad token via `tokenizer.add_special_tokens({'pad_token': '[PAD]'})`.",
        ),
    ),
    "peft-target-modules-not-found": (
        (
            "ValueError",
            "Target modules ['q_proj', 'v_proj'] not found in the base model. Please check the"
            " target modules and try again.",
        ),
    ),
    "cuda-driver-too-old": (
        (
            "none (container start-up error)",
            "ERROR: This container was built for NVIDIA Driver Release 530.30 or later, but"
            " version 470.82.01 was detected and compatibility mode is UNAVAILABLE.",
        ),
    ),
}

#: slug -> words every wording's suggested action holds (the documented fix's own terms).
ACTION_TERMS: dict[str, tuple[str, ...]] = {
    "flash-attn-undefined-symbol": ("flash-attn", "--no-build-isolation", "--no-cache-dir"),
    "tokenizer-pad-token-missing": ("tokenizer.pad_token = tokenizer.eos_token",),
    # no printed model shows the layout: this model's own names, no fused one guessed
    "peft-target-modules-not-found": ("target_modules", "own attention projections"),
    "cuda-driver-too-old": ("driver",),
}

#: slug -> errors of other kinds that the new signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "flash-attn-undefined-symbol": (
        "ModuleNotFoundError: No module named 'flash_attn'",
        "ImportError: /site-packages/xformers/_C.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
        "ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the"
        " following error: the package flash_attn seems to be not installed.",
        "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
    ),
    "tokenizer-pad-token-missing": (
        "UserWarning: A decoder-only architecture is being used, but right-padding was"
        " detected! For correct generation results, please set `padding_side='left'` when"
        " initializing the tokenizer.",
        "UserWarning: Setting `pad_token_id` to `eos_token_id`:2 for open-end generation.",
    ),
    "cuda-driver-too-old": (
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an"
        " NVIDIA GPU and installed a driver.",
        'docker: Error response from daemon: could not select device driver "" with'
        " capabilities: [[gpu]].",
        "Failed to initialize NVML: Driver/library version mismatch",
    ),
}

#: The signals each runbook gained here (the older ones have their own tests).
NEW_SIGNALS: dict[str, tuple[str, ...]] = {
    "flash-attn-undefined-symbol": (
        r"flash_attn\w*(\.cpython[^:\s]*)?\.(so|pyd)\S*: undefined symbol",
        r"import flash_attn\w*.{0,200}undefined symbol",
    ),
    "tokenizer-pad-token-missing": (
        "padding strategy as the tokenizer does not have a padding token",
    ),
    "cuda-driver-too-old": (
        r"This container was built for NVIDIA Driver Release [\d.]+ or later",
        r"version [\d.]+ was detected and compatibility mode is UNAVAILABLE",
    ),
}

_CASES = [(slug, w) for slug, wordings in WORDINGS.items() for w in wordings]
_IDS = [f"{slug}-{i}" for i, (slug, _) in enumerate(_CASES)]


@pytest.mark.parametrize(("slug", "wording"), _CASES, ids=_IDS)
def test_the_library_wording_routes_to_its_runbook_and_gets_its_fix(
    slug: str, wording: tuple[str, str]
) -> None:
    check_routes(slug, *wording, ACTION_TERMS[slug])


@pytest.mark.parametrize(
    ("slug", "text"), [(s, t) for s, texts in LOOK_ALIKES.items() for t in texts]
)
def test_errors_of_other_kinds_do_not_match_the_new_signals(slug: str, text: str) -> None:
    new_only = dataclasses.replace(bundled_runbooks()[slug], signals=NEW_SIGNALS[slug])
    assert not match_signals(new_only, text), text


def test_the_runbooks_cite_public_sources_and_carry_the_new_signals() -> None:
    runbooks = bundled_runbooks()
    for slug, signals in NEW_SIGNALS.items():
        rb = runbooks[slug]
        assert rb.sources and all(s.startswith("https://") for s in rb.sources), slug
        assert set(signals) <= set(rb.signals), slug
