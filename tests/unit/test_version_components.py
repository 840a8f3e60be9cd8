"""Version and driver pairings name the right component and the right direction (issue 16).

A GPU stack fails in look-alike words at three layers that take different fixes: the NVIDIA
driver (too old for the CUDA runtime: update the driver, never a library), a library loaded
against the one a framework was compiled with (PyTorch's and JAX's cuDNN checks: which side
is older decides upgrade vs the matching build), and a soname a binary package asks for
(``libcublasLt.so.11``: the package was built for CUDA 11). Requirements without a number
("too old", "the latest version of X") and ceilings the message names ("Downgrade the
protobuf package to 3.20.x") give the package and the direction too. Checked on the wordings
as projects print them, on look-alikes, and metamorphically: generated package names and
versions keep the direction.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsing.frames import make_frame
from rca.suggestion.api_drift import read_drift
from rca.suggestion.cuda_components import (
    component_facts,
    component_values,
    decoded,
    driver_gap,
    missing_soname,
)
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.validation import validate
from rca.suggestion.version_pairs import library_build, version_change, version_facts
from tests.support.evidence import incident_context

GENERIC = "version-named-package-mismatch"
BUILD = "cuda-library-built-for-other-version"
DRIVER = "cuda-driver-too-old"

_NAME = st.from_regex(r"[a-z][a-z0-9]{2,8}(?:[-_][a-z0-9]{2,6})?", fullmatch=True)
_PART = st.integers(min_value=0, max_value=40)
_VERSION = st.tuples(st.integers(1, 20), _PART, _PART)


def _dotted(version: tuple[int, int, int]) -> str:
    return ".".join(str(part) for part in version)


@pytest.mark.parametrize(
    ("library", "number", "dotted"),
    [
        ("cuDNN", "7102", "7.1.2"),
        ("cudnn", "8906", "8.9.6"),
        ("cuDNN", "90501", "9.5.1"),
        ("cuda", "11040", "11.4"),
        ("cuda", "12020", "12.2"),
        ("TensorRT", "8602", "8602"),
    ],
)
def test_integer_versions_are_decoded_by_their_documented_encoding(
    library: str, number: str, dotted: str
) -> None:
    assert decoded(library, number) == dotted


def test_pytorch_and_jax_cudnn_checks_say_which_side_is_older() -> None:
    older = library_build(
        [
            "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0)"
            " but found runtime version (8, 4, 1). PyTorch already comes bundled with cuDNN."
        ]
    )
    assert older is not None and older.running_older
    assert (older.library, older.running, older.built) == ("cuDNN", "8.4.1", "8.5.0")
    newer = library_build(
        [
            "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked"
            " against 7605"
        ]
    )
    assert newer is not None and not newer.running_older
    assert (newer.running, newer.built) == ("7.6.5", "7.1.2")
    jax = library_build(
        [
            "CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against"
            " version 8906, which is newer."
        ]
    )
    assert jax is not None and jax.running_older and jax.built == "8.9.6"
    over_lines = library_build(
        [
            "CUDA backend failed to initialize: Unable to use CUDA because of the following issues"
            " with CUDA components:\nOutdated cuDNN installation found.\nVersion JAX was built"
            " against: 8907\nMinimum supported: 9100\nInstalled version: 8907\nThe local"
            " installation version must be no lower than 9100."
        ]
    )
    assert over_lines is not None and over_lines.running_older
    assert (over_lines.running, over_lines.built) == ("8.9.7", "9.1.0")


def test_an_older_cudnn_under_pytorch_is_upgraded_and_a_newer_one_matched() -> None:
    older = (
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but"
        " found runtime version (8, 4, 1)."
    )
    draft = OfflineProvider().suggest(incident_context(older, (BUILD, 0.9)))
    assert draft.action.startswith("Upgrade cuDNN to 8.5.0 or newer (loaded now: 8.4.1)")
    newer = (
        "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked"
        " against 7605"
    )
    ctx = incident_context(newer, (BUILD, 0.9))
    assert "runtime-newer-than-build" in read_premises(ctx).facts
    draft = OfflineProvider().suggest(ctx)
    assert draft.action.startswith("Install cuDNN 7.1.2, the release this build was compiled for")
    wrong = Draft(
        "Upgrade cuDNN to 7.1.2 or newer (loaded now: 7.6.5), or install the framework release"
        " built for cuDNN 7.6.5.",
        "The runtime is older.",
        BUILD,
        0.5,
        "test",
        "test",
    )
    assert not validate(wrong, ctx).premises_ok


@settings(max_examples=60, deadline=None)
@given(lib=st.from_regex(r"[A-Za-z][a-z]{2,6}DNN", fullmatch=True), a=_VERSION, b=_VERSION)
def test_the_older_side_is_kept_under_renamed_libraries_and_versions(
    lib: str, a: tuple[int, int, int], b: tuple[int, int, int]
) -> None:
    if a == b:
        return
    text = (
        f"RuntimeError: {lib} version incompatibility: PyTorch was compiled  against"
        f" ({a[0]}, {a[1]}, {a[2]}) but found runtime version ({b[0]}, {b[1]}, {b[2]})."
    )
    build = library_build([text])
    assert build is not None and build.library == lib
    assert build.running_older == (b < a)
    facts = version_facts(text, [])
    assert ("runtime-older-than-build" in facts) == (b < a)
    assert ("runtime-newer-than-build" in facts) == (b > a)


@pytest.mark.parametrize(
    ("text", "cuda"),
    [
        (
            "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found"
            " version 11000). Please update your GPU driver",
            "11.0",
        ),
        (
            "RuntimeError: The NVIDIA driver on your system is too old (found version 11040).",
            "11.4",
        ),
        (
            "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version ; GPU=0",
            "",
        ),
    ],
)
def test_a_driver_too_old_is_read_as_the_driver_not_a_library(text: str, cuda: str) -> None:
    gap = driver_gap([text])
    assert gap is not None and gap.cuda == cuda
    assert component_facts([text]) == {"driver-older-than-runtime"}
    assert not version_facts(text, []) & {"runtime-older-than-build", "runtime-newer-than-build"}


def test_nvidia_smi_gives_the_cuda_release_an_insufficient_driver_supports() -> None:
    texts = [
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
        "| NVIDIA-SMI 470.86       Driver Version: 470.86       CUDA Version: 11.4     |",
    ]
    assert component_values(texts) == {"driver-cuda": "11.4"}


def test_the_driver_step_names_what_the_driver_supports_and_library_steps_stay_out() -> None:
    message = (
        "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please"
        " update your GPU driver"
    )
    draft = OfflineProvider().suggest(incident_context(message, (DRIVER, 0.9), (BUILD, 0.8)))
    assert draft.runbook == DRIVER
    assert "Update the NVIDIA driver" in draft.action
    assert "supports CUDA up to 11.4" in draft.action


def test_look_alikes_are_not_driver_gaps() -> None:
    for text in (
        "Failed to initialize NVML: Driver/library version mismatch",
        "Your system is too old to run this game",
        "driver.py: version 2 installed",
    ):
        assert driver_gap([text]) is None


@pytest.mark.parametrize(
    ("line", "file", "major"),
    [
        (
            "FAIL : Failed to load library libonnxruntime_providers_cuda.so with error:"
            " libcublasLt.so.11: cannot open shared object file: No such file or directory",
            "libcublasLt.so.11",
            "11",
        ),
        (
            "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot"
            " open shared object file",
            "libcudnn_cnn_infer.so.8",
            "8",
        ),
        (
            "Please make sure cudnn_cnn_infer64_8.dll is in your library path!",
            "cudnn_cnn_infer64_8.dll",
            "8",
        ),
    ],
)
def test_a_missing_soname_names_the_major_version_the_binary_was_linked_for(
    line: str, file: str, major: str
) -> None:
    soname = missing_soname([line])
    assert soname is not None and (soname.file, soname.major) == (file, major)


def test_the_binary_that_asked_is_named_from_the_pinned_package() -> None:
    texts = [
        "Failed to load library libonnxruntime_providers_cuda.so with error: libcublasLt.so.11:"
        " cannot open shared object file: No such file or directory",
        "pip install onnxruntime-gpu==1.17.0",
    ]
    values = component_values(texts)
    assert values["linked-package"] == "onnxruntime-gpu 1.17.0"
    assert values["soname"] == "libcublasLt.so.11"


@pytest.mark.parametrize(
    ("message", "package", "direction", "target"),
    [
        (
            "backend='inductor' raised:\nRuntimeError: Cannot find a working triton installation."
            " Either the package is not installed or it is too old.",
            "triton",
            "upgrade",
            "a newer release",
        ),
        (
            "ValueError: You have a version of `bitsandbytes` that is not compatible with 8bit"
            " inference and training make sure you have the latest version of `bitsandbytes`"
            " installed",
            "bitsandbytes",
            "upgrade",
            "a newer release",
        ),
        (
            "TypeError: Descriptors cannot not be created directly.\n 1. Downgrade the protobuf"
            " package to 3.20.x or lower.",
            "protobuf",
            "downgrade",
            "<= 3.20.x",
        ),
        (
            "RuntimeWarning: JAX plugin jax_cuda12_plugin version 0.9.2 is installed, but it is not"
            " compatible with the installed jaxlib version 0.9.0.1",
            "jax_cuda12_plugin",
            "downgrade",
            "the release of jaxlib 0.9.0.1",
        ),
    ],
)
def test_directions_the_message_names_without_a_version_found(
    message: str, package: str, direction: str, target: str
) -> None:
    change = version_change(message, [], {})
    assert change is not None
    assert (change.package, change.direction, change.target) == (package, direction, target)


@settings(max_examples=60, deadline=None)
@given(companion=_NAME, owner=_NAME, have=_VERSION, need=_VERSION)
def test_a_companion_out_of_step_moves_toward_its_owner_under_renaming(
    companion: str, owner: str, have: tuple[int, int, int], need: tuple[int, int, int]
) -> None:
    if have == need or companion == owner:
        return
    message = (
        f"RuntimeWarning: plugin {companion} version {_dotted(have)} is installed, but it is not"
        f" compatible with the installed {owner} version {_dotted(need)}"
    )
    change = version_change(message, [], {})
    assert change is not None and change.package == companion
    assert change.direction == ("downgrade" if have > need else "upgrade")


@settings(max_examples=60, deadline=None)
@given(package=_NAME, ceiling=st.tuples(st.integers(1, 9), st.integers(0, 40)))
def test_a_ceiling_the_message_names_is_a_downgrade_of_that_package(
    package: str, ceiling: tuple[int, int]
) -> None:
    version = f"{ceiling[0]}.{ceiling[1]}"
    message = f"Error: workarounds: 1. Downgrade the {package} package to {version}.x or lower."
    change = version_change(message, [], {})
    assert change is not None
    assert (change.package, change.direction) == (package, "downgrade")
    assert "version-above-supported" in version_facts(message, [])


def test_a_public_import_raised_in_another_package_names_that_importer() -> None:
    message = (
        "ImportError: cannot import name 'EncoderDecoderCache' from 'transformers'"
        " (/env/lib/python3.10/site-packages/transformers/__init__.py)"
    )
    frames = [
        make_frame("/env/lib/python3.10/site-packages/peft/__init__.py", "<module>", 22),
        make_frame("/env/lib/python3.10/site-packages/peft/peft_model.py", "<module>", 37),
    ]
    assert read_drift(message, frames, []).caller_package == "peft"
    draft = OfflineProvider().suggest(incident_context(message, (GENERIC, 0.9), frames=frames))
    assert draft.action.startswith(
        "Upgrade transformers to a release that has EncoderDecoderCache (or downgrade peft"
    )
    # Raised from the user's own file, nothing names an importer and the aside goes.
    own = [make_frame("/home/me/train.py", "<module>", 3)]
    assert read_drift(message, own, []).caller_package == ""
    draft = OfflineProvider().suggest(incident_context(message, (GENERIC, 0.9), frames=own))
    assert "downgrade" not in draft.action and "{" not in draft.action
