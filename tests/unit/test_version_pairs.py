"""Version-pairing failures name the package and the direction (issue 16).

A third of real failures are fixed by upgrading, downgrading or pinning one named component.
The incident's text says which (a requirement and the version found, two releases out of
step, a library loaded against the one the code was built for, a name missing from a
package); the runbooks' steps name those values as placeholders and are chosen by the facts.
Checked on several wordings, on look-alikes that must not fire, and metamorphically: renamed
packages and versions give the same step with the new names.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsing.frames import make_frame
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.validation import validate
from rca.suggestion.version_pairs import (
    library_build,
    missing_import,
    version_change,
    version_facts,
    version_values,
)
from tests.support.evidence import incident_context

GENERIC = "version-named-package-mismatch"


def _suggest(message: str, *ranked: tuple[str, float], **kwargs: Any) -> Draft:
    return OfflineProvider().suggest(incident_context(message, *ranked, **kwargs))


@settings(max_examples=150, deadline=None)
@given(message=st.text(max_size=500), logs=st.lists(st.text(max_size=300), max_size=3))
def test_any_text_is_read_without_raising(message: str, logs: list[str]) -> None:
    version_facts(message, logs)
    version_values(message, logs)


@pytest.mark.parametrize(
    ("text", "package", "direction", "target", "installed"),
    [
        (
            "RuntimeError: jaxlib is version 0.3.25, but this version of jax requires version"
            " >= 0.4.6.",
            "jaxlib",
            "upgrade",
            ">= 0.4.6",
            "0.3.25",
        ),
        (
            "ValueError: jaxlib is version 0.1.41, but this version of jax requires version"
            " 0.1.43.",
            "jaxlib",
            "upgrade",
            ">= 0.1.43",
            "0.1.41",
        ),
        (
            "ImportError: deepspeed>=0.10.0,<=0.16.9 is required for a normal functioning of"
            " this module, but found deepspeed==0.17.2.",
            "deepspeed",
            "downgrade",
            "<= 0.16.9",
            "0.17.2",
        ),
        (
            "ERROR: pip's dependency resolver does not currently take into account all the"
            " packages that are installed. peft 0.7.1 requires torch>=1.13.0, but you have"
            " torch 1.12.1 which is incompatible.",
            "torch",
            "upgrade",
            ">= 1.13.0",
            "1.12.1",
        ),
        (
            "RuntimeError: jaxlib version 0.4.31 is newer than and incompatible with jax"
            " version 0.4.20. Please update your jax and/or jaxlib packages.",
            "jaxlib",
            "downgrade",
            "the version jax 0.4.20 supports",
            "0.4.31",
        ),
        (
            "ValueError: 4 bit quantization requires bitsandbytes>=0.39.0 - please upgrade your"
            " bitsandbytes version",
            "bitsandbytes",
            "upgrade",
            ">= 0.39.0",
            "",
        ),
        (
            "ImportError: Please install bitsandbytes>=0.44.0 via `pip install"
            " bitsandbytes>=0.44.0` to use bitsandbytes quantizer.",
            "bitsandbytes",
            "upgrade",
            ">= 0.44.0",
            "",
        ),
    ],
)
def test_the_package_and_direction_are_read_from_each_wording(
    text: str, package: str, direction: str, target: str, installed: str
) -> None:
    change = version_change(text, [], {})
    assert change is not None
    assert (change.package, change.direction, change.target, change.installed) == (
        package,
        direction,
        target,
        installed,
    )


def test_look_alikes_name_no_version_change() -> None:
    for text in (
        "Requirement already satisfied: torch>=2.0 in ./site-packages (2.1.0)",
        "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",
        "ValueError: version 2 of the config requires 3 inputs",
        "jaxlib was compiled with CUDA 12.2 support.",
        "Collecting transformers>=4.30 (from -r requirements.txt (line 3))",
        "deepspeed>=0.10.0,<=0.16.9 is required, but found deepspeed==0.12.0.",  # met
        "jaxlib is version 0.4.6, but this version of jax requires version >= 0.4.6.",  # met
        # Newer, but not said to be incompatible: a newer driver runs older runtimes.
        "CUDA driver version 12.2 is newer than the runtime version 11.8",
    ):
        assert version_change(text, [], {}) is None, text
    # A requirement the logs show met is not the cause (the fact required-version-installed
    # covers it), so no upgrade is claimed.
    message = "ImportError: Using `load_in_4bit` requires bitsandbytes>=0.39.0"
    assert version_change(message, [], {"bitsandbytes": (0, 41, 1)}) is None
    assert version_change(message, [], {"bitsandbytes": (0, 37, 0)}) is not None


def test_a_library_loaded_against_another_build_says_which_is_older() -> None:
    older = library_build(
        ["Loaded runtime CuDNN library: 8.5.0 but source was compiled with: 8.6.0."]
    )
    assert older is not None and older.running_older and older.library == "CuDNN"
    newer = library_build(
        [
            "E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library:"
            " 6021 (compatibility version 6000) but source was compiled with 5105"
            " (compatibility version 5100)."
        ]
    )
    assert newer is not None and not newer.running_older
    plan = library_build(
        [
            "The engine plan file is not compatible with this version of TensorRT, expecting"
            " library version 8.2.4 got 8.2.3, please rebuild."
        ]
    )
    assert plan is not None and (plan.library, plan.running, plan.built) == (
        "TensorRT",
        "8.2.4",
        "8.2.3",
    )
    model = library_build(["Unsupported model IR version: 10, max supported IR version: 9"])
    assert model is not None and model.running_older
    cuda = library_build(
        [
            "The detected CUDA version (11.8) mismatches the version that was used to compile"
            " PyTorch (12.1). Please make sure to use the same CUDA versions."
        ]
    )
    assert cuda is not None and cuda.running_older
    for text in (
        "Loaded runtime CuDNN library: 8.6.0 but source was compiled with: 8.6.0.",  # same
        "Loaded cuDNN version 8902",
        "TensorRT version: 8.6.1",
    ):
        assert library_build([text]) is None, text


def test_a_missing_import_is_public_or_internal_by_the_module_it_comes_from() -> None:
    public = "ImportError: cannot import name 'prepare_model_for_kbit_training' from 'peft'"
    assert missing_import(public) == ("peft", "prepare_model_for_kbit_training", True)
    first_level = "cannot import name 'is_npu_available' from 'accelerate.utils' (/x/y.py)"
    assert missing_import(first_level) == ("accelerate", "is_npu_available", True)
    internal = "cannot import name 'log' from 'torch.distributed.elastic.agent.server.api'"
    assert missing_import(internal) == ("torch", "log", False)
    private = "cannot import name '_freeze_adapter' from 'peft.utils.other'"
    assert missing_import(private) == ("peft", "_freeze_adapter", False)
    assert missing_import("ModuleNotFoundError: No module named 'peft'") is None
    # An attribute missing from a module says nothing of the direction (numpy removed it).
    assert missing_import("AttributeError: module 'numpy' has no attribute 'float'") is None


@pytest.mark.parametrize(
    ("low", "high", "have", "need"),
    [("jaxlib", "jax", "0.3.25", "0.4.6"), ("foo-core", "foo", "1.2.0", "2.0.1")],
)
def test_renamed_packages_get_the_same_upgrade_step_with_their_own_names(
    low: str, high: str, have: str, need: str
) -> None:
    message = (
        f"RuntimeError: {low} is version {have}, but this version of {high} requires version"
        f" >= {need}."
    )
    draft = _suggest(message, (GENERIC, 0.9), ("jax-jaxlib-cuda-install", 0.85))
    assert draft.action.startswith(f"Upgrade {low} to >= {need} (installed: {have})")
    assert validate(draft, incident_context(message, (GENERIC, 0.9))).ok


@pytest.mark.parametrize(
    ("package", "ceiling", "found"),
    [("deepspeed", "0.16.9", "0.17.2"), ("quuxlib", "3.1", "4.0.0")],
)
def test_a_release_above_the_supported_range_is_downgraded_never_upgraded(
    package: str, ceiling: str, found: str
) -> None:
    message = (
        f"ImportError: {package}>=0.1.0,<={ceiling} is required for a normal functioning of"
        f" this module, but found {package}=={found}."
    )
    ctx = incident_context(message, (GENERIC, 0.9))
    assert "version-above-supported" in read_premises(ctx).facts
    draft = OfflineProvider().suggest(ctx)
    assert draft.action.startswith(f"Downgrade {package} to <= {ceiling} (installed: {found})")
    upgrade = Draft(
        f"Upgrade {package} to <= {ceiling}.", "It is old.", GENERIC, 0.5, "test", "test"
    )
    assert not validate(upgrade, ctx).premises_ok  # restates the upgrade step, ruled out


def test_without_a_named_package_no_template_reaches_the_suggestion() -> None:
    """The filled steps need values; an incident without them gets the runbook's own
    fallback step, never a "{package}" left unfilled."""
    message = "ImportError: the installed packages are incompatible; reinstall them"
    draft = _suggest(message, (GENERIC, 0.9))
    assert "{" not in draft.action
    assert "requirements" in draft.action


def test_a_public_import_upgrades_that_package_and_an_internal_one_its_importer() -> None:
    for package, name in (("peft", "prepare_model_for_kbit_training"), ("widgetkit", "Knob")):
        message = (
            f"ImportError: cannot import name '{name}' from '{package}'"
            f" (/env/{package}/__init__.py)"
        )
        draft = _suggest(message, (GENERIC, 0.9), ("version-transformers-import-error", 0.8))
        assert draft.action.startswith(f"Upgrade {package} to a release that has {name}")
    internal = (
        "ImportError: cannot import name 'log' from 'torch.distributed.elastic.agent.server.api'"
    )
    draft = _suggest(internal, (GENERIC, 0.9))
    assert "imports log from torch" in draft.action
    assert not draft.action.startswith("Upgrade torch")


@pytest.mark.parametrize(
    ("library", "running", "built"), [("CuDNN", "7.3.1", "7.5.0"), ("FooDNN", "2.1.0", "2.3.0")]
)
def test_an_older_runtime_library_is_upgraded_to_the_build_version(
    library: str, running: str, built: str
) -> None:
    line = f"Loaded runtime {library} library: {running} but source was compiled with: {built}."
    draft = _suggest(line, ("cuda-library-built-for-other-version", 0.9))
    assert draft.action.startswith(f"Upgrade {library} to {built} or newer (loaded now: {running})")


def test_a_newer_runtime_library_asks_for_the_framework_build_made_for_it() -> None:
    line = (
        "Loaded runtime CuDNN library: 6021 (compatibility version 6000) but source was"
        " compiled with 5105 (compatibility version 5100)."
    )
    frame = make_frame(
        "/usr/lib/python3/site-packages/tensorflow/python/client/session.py", "run", 1321
    )
    ctx = incident_context(line, ("cuda-library-built-for-other-version", 0.9), frames=[frame])
    assert "runtime-newer-than-build" in read_premises(ctx).facts
    draft = OfflineProvider().suggest(ctx)
    # cuDNN prints 1000 * major + 100 * minor + patch: 5105 is 5.1.5, 6021 is 6.0.21.
    assert draft.action.startswith("Install CuDNN 5.1.5, the release this build was compiled")
    # TensorFlow's wording, with the release its tested build configurations pair with cuDNN 6
    # (rca/knowledge/compatibility/tensorflow-gpu-cuda.toml).
    assert "TensorFlow release built for CuDNN 6.0.21 (upgrade tensorflow-gpu to 1.3.0" in (
        draft.action
    )
    upgrade = Draft(
        "Upgrade CuDNN to 5.1.5 or newer, or install the framework release built for CuDNN 6.0.21.",
        "Older runtime.",
        "cuda-library-built-for-other-version",
        0.5,
        "test",
        "test",
    )
    assert not validate(upgrade, ctx).premises_ok


def test_an_engine_mismatch_names_the_version_that_built_it() -> None:
    for running, built in (("8.2.4", "8.2.3"), ("10.1.0", "9.3.0")):
        line = (
            "The engine plan file is not compatible with this version of TensorRT, expecting"
            f" library version {running} got {built}, please rebuild."
        )
        draft = _suggest(line, ("version-tensorrt-engine-mismatch", 0.9))
        assert f"built with TensorRT {built}, the runtime is {running}" in draft.action
    # Without the versions, the step keeps its plain wording.
    plain = "[TRT] [E] 4: [runtime.cpp::deserializeCudaEngine::50] Engine deserialization failed."
    draft = _suggest(plain, ("version-tensorrt-engine-mismatch", 0.9))
    assert "{" not in draft.action and "built with" not in draft.action
