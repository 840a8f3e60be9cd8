"""The NVIDIA kernel module and user-space libraries out of step (issue 16): the kernel's
"NVRM: API mismatch" report and nvidia-smi's "Driver/library version mismatch" are read for
both versions, the loaded module is the installed driver (never the client's libraries), and
the offline answer is to reload the module or reboot, naming both versions.

Wordings as the kernel, nvidia-smi, nvidia-container-cli and pynvml print them (dmesg and
syslog copies from NVIDIA/nvidia-docker#182, stackhpc/ansible-slurm-appliance#287,
NVIDIA/open-gpu-kernel-modules#829; nvidia-smi's from tinygrad/open-gpu-kernel-modules#47).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.cuda_components import component_facts, component_values
from rca.suggestion.driver_mismatch import DriverMismatch, driver_mismatch
from rca.suggestion.driver_targets import installed_driver, moved_older
from rca.suggestion.validation import validate
from rca.suggestion.version_numbers import parse_version
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear
from tests.support.vendor_routing import route_incident, route_message

_SLUG = "nvidia-driver-kernel-module-mismatch"
_NVRM = (
    "NVRM: API mismatch: the client has the version {client}, but this kernel module has the"
    " version {module}.  Please make sure that the kernel module and all NVIDIA driver"
    " components have the same version."
)
_DMESG = (
    "[ 7386.259769] NVRM: API mismatch: the client has the version {client}, but\n"
    "               NVRM: this kernel module has the version {module}.  Please\n"
    "               NVRM: make sure that this kernel module and all NVIDIA driver\n"
    "               NVRM: components have the same version."
)
_NVML = "Failed to initialize NVML: Driver/library version mismatch\nNVML library version: {v}"


def _nvrm(client: str = "535.129.03", module: str = "525.147.05") -> str:
    return _NVRM.format(client=client, module=module)


@pytest.mark.parametrize(
    ("texts", "module", "libraries"),
    [
        ([_nvrm()], "525.147.05", "535.129.03"),
        ([_DMESG.format(client="515.48.07", module="510.73.05")], "510.73.05", "515.48.07"),
        (  # syslog escapes the line breaks
            [
                "Jun 30 11:07:05 gpu-0 kernel: NVRM: API mismatch: the client has the version"
                " 535.54.03, but#012NVRM: this kernel module has the version 530.30.02.  Please"
                "#012NVRM: make sure that this kernel module and all NVIDIA driver"
            ],
            "530.30.02",
            "535.54.03",
        ),
        (  # a named client, a two-part version
            [
                "[    9.424670] NVRM: API mismatch: the client 'kwin_wayland' (pid 1005)\n"
                "               NVRM: has the version 595.84, but this kernel module has\n"
                "               NVRM: the version 595.80.  Please make sure that this"
            ],
            "595.80",
            "595.84",
        ),
        (  # each dmesg line a log entry of its own
            [
                "NVRM: API mismatch: the client has the version 570.153.02, but",
                "NVRM: this kernel module has the version 570.144.  Please",
                "NVRM: make sure that this kernel module and all NVIDIA driver",
            ],
            "570.144",
            "570.153.02",
        ),
        (  # the X driver's older wording, module first
            [
                "API mismatch: the NVIDIA kernel module has version 304.88, but this NVIDIA"
                " driver component has version 310.44.  Please make sure"
            ],
            "304.88",
            "310.44",
        ),
        (  # odd spacing: tabs, CRLF, doubled spaces
            [
                "NVRM:  API mismatch:\tthe client  has the version\t535.129.03 ,  but\r\n"
                "NVRM:   this kernel module has the version   525.147.05 .  Please"
            ],
            "525.147.05",
            "535.129.03",
        ),
        ([_NVML.format(v="535.129")], "", "535.129"),
        # truncated: the client's version only, or none when the line is cut inside it
        (["NVRM: API mismatch: the client has the version 535.129.03, but"], "", "535.129.03"),
        (["NVRM: API mismatch: the client has the version 535.1"], "", ""),
        (["Failed to initialize NVML: Driver/library version mismatch"], "", ""),
        (
            [
                "nvidia-container-cli: initialization error: nvml error: driver/library version"
                " mismatch: unknown."
            ],
            "",
            "",
        ),
        (
            ["pynvml.nvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version"],
            "",
            "",
        ),
    ],
)
def test_the_module_and_library_versions_are_read_from_the_reports(
    texts: list[str], module: str, libraries: str
) -> None:
    assert driver_mismatch(texts) == DriverMismatch(module, libraries)
    assert "driver-library-mismatch" in component_facts(texts)


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked"
        " against 7605",
        "RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xe",
        "C API mismatch: the client library is newer",
        "RuntimeError: CUDA driver version is insufficient for CUDA runtime version",
        "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |",
    ],
)
def test_other_mismatches_are_no_driver_library_mismatch(text: str) -> None:
    assert driver_mismatch([text]) is None
    assert "driver-library-mismatch" not in component_facts([text])


def test_the_versions_fill_the_step_placeholders() -> None:
    values = component_values([_nvrm()])
    assert values["kernel-module-version"] == "525.147.05"
    assert values["driver-library-version"] == "535.129.03"
    assert "kernel-module-version" not in component_values([_NVML.format(v="535.129")])


@pytest.mark.parametrize(
    ("client", "module"), [("535.129.03", "525.147.05"), ("570.133.07", "575.51.02")]
)
def test_the_loaded_module_is_the_installed_driver_never_the_client(
    client: str, module: str
) -> None:
    driver = installed_driver([_nvrm(client, module)])
    assert driver is not None
    assert (driver.shown, driver.libraries, driver.exact) == (module, client, True)
    assert f"the user-space driver libraries installed are {client}" in driver.as_line()


def test_no_installed_driver_from_the_libraries_alone() -> None:
    # nvidia-smi prints only its own library's version: the loaded driver is not shown
    assert installed_driver([_NVML.format(v="535.129")]) is None


@pytest.mark.parametrize(
    ("action", "older"),
    [
        # newer than the loaded module, older than the client's libraries: no move backwards
        ("Install NVIDIA driver 530 for the running kernel.", False),
        ("Install NVIDIA driver 535.129.03 so both halves match.", False),
        ("Install NVIDIA driver 470 for the running kernel.", True),
    ],
)
def test_the_driver_direction_is_held_to_the_loaded_module(action: str, older: bool) -> None:
    driver = installed_driver([_nvrm()])
    assert bool(moved_older(action, driver, set())) is older
    ctx = message_context(_nvrm(), (_SLUG, 0.9))
    assert validate(draft(action, _SLUG), ctx).premises_ok is not older


@pytest.mark.parametrize(
    ("action", "older"),
    [
        # the libraries are older than the loaded module (mostly ones a container image
        # bundles): moving the host's driver down to them still moves it older (reviewer,
        # issue 16); removing them from the image is the fix
        ("Reinstall the NVIDIA driver 570.133.07 so the module matches the libraries.", True),
        ("Install NVIDIA driver 560 for the running kernel.", True),
        ("Install NVIDIA driver 580 for the running kernel.", False),
    ],
)
def test_matching_older_libraries_still_moves_the_driver_older(action: str, older: bool) -> None:
    driver = installed_driver([_nvrm("570.133.07", "575.51.02")])
    assert bool(moved_older(action, driver, set())) is older


@pytest.mark.parametrize(
    "action",
    [
        "Remove the nvidia-driver-570 packages from the image and use the host's driver.",
        "Uninstall the NVIDIA 570 driver libraries (`apt-get purge libnvidia-compute-570`) from"
        " the image.",
        "Rebuild the image without the 570 driver packages.",
        "Stop installing NVIDIA driver 570 in the Dockerfile.",
        "Delete the bundled driver 570.133.07 libraries.",
    ],
)
def test_removing_the_older_bundled_libraries_is_no_driver_move(action: str) -> None:
    # reviewer (issue 16): the libraries the answer takes out are no driver it moves to
    message = _nvrm("570.133.07", "575.51.02")
    assert not moved_older(action, installed_driver([message]), set())
    assert validate(draft(action, _SLUG), message_context(message, (_SLUG, 0.9))).premises_ok


@pytest.mark.parametrize(
    "action",
    [
        "Remove the nvidia-driver-575 packages and install nvidia-driver-570.",
        "Purge the 575 driver, then install NVIDIA driver 570.133.07.",
    ],
)
def test_a_removal_governs_only_its_own_verb_phrase(action: str) -> None:
    message = _nvrm("570.133.07", "575.51.02")
    assert moved_older(action, installed_driver([message]), set())


@pytest.mark.parametrize(
    "message", [_nvrm(), _DMESG.format(client="535.129.03", module="525.147.05")]
)
def test_the_offline_answer_reloads_the_module_naming_both_versions(message: str) -> None:
    found, ctx, answer = route_message("none (dmesg)", message)
    assert found[0].slug == _SLUG
    assert answer.runbook == _SLUG
    assert answer.action.startswith("Reboot, or reload the NVIDIA kernel modules")
    assert "modprobe nvidia" in answer.action
    assert "loaded module (525.147.05)" in answer.action, answer.action
    assert "libraries (535.129.03)" in answer.action, answer.action
    assert validate(answer, ctx).ok


def test_the_kernel_lines_in_the_logs_name_the_versions_of_nvidia_smis_failure() -> None:
    payload = {
        "exception_type": "none (nvidia-smi)",
        "message": _NVML.format(v="550.127"),
        "logs": _DMESG.format(client="550.127.05", module="550.90.07").splitlines(),
    }
    found, ctx, answer = route_incident(payload)
    assert found[0].slug == answer.runbook == _SLUG
    assert "loaded module (550.90.07)" in answer.action, answer.action
    assert "libraries (550.127" in answer.action, answer.action
    assert validate(answer, ctx).ok


_BRANCH = st.integers(390, 599).map(str)
_PART = st.integers(1, 199).map(lambda n: f"{n:02d}")


@settings(max_examples=40, deadline=None)
@given(
    client=st.tuples(_BRANCH, _PART, _PART).map(".".join),
    module=st.tuples(_BRANCH, _PART).map(".".join) | st.tuples(_BRANCH, _PART, _PART).map(".".join),
    shape=st.sampled_from([_NVRM, _DMESG]),
)
def test_metamorphic_the_answer_follows_the_versions(client: str, module: str, shape: str) -> None:
    message = shape.format(client=client, module=module)
    assert driver_mismatch([message]) == DriverMismatch(module, client)
    _, _, answer = route_message("none (dmesg)", message)
    assert answer.runbook == _SLUG
    if parse_version(client) < parse_version(module):  # libraries an image bundles
        assert answer.action.startswith("Remove NVIDIA driver packages"), answer.action
    else:
        assert f"({module})" in answer.action and f"({client})" in answer.action, answer.action


@given(
    st.text(
        alphabet=st.sampled_from(list("NVRM: API mismatch the client has version 535.12, but\n#'")),
        max_size=3000,
    )
)
def test_arbitrary_text_never_raises(text: str) -> None:
    driver_mismatch([text])
    installed_driver([text])


def test_long_adversarial_text_is_read_in_linear_time() -> None:
    def read(n: int) -> None:
        texts = [
            "API mismatch: the client has the version 535." * n,
            "NVRM: " * (2 * n) + "\n" * (2 * n),
            "Driver/library version mismatch NVML library version: 5" * n,
            "API mismatch: the client '" + "x" * (10 * n),
        ]
        for text in texts:
            driver_mismatch([text])
            installed_driver([text, text])
        driver_mismatch(texts * 5)

    assert_linear(read, 500, 20_000)


def test_libraries_older_than_the_module_are_removed_from_the_image_not_reloaded() -> None:
    # reviewer (issue 16): a reboot or reload cannot replace libraries a container bundles
    message = _nvrm(client="470.82.01", module="535.104.05")
    assert "driver-libraries-older" in component_facts([message])
    assert "driver-libraries-older" not in component_facts([_nvrm()])
    found, ctx, answer = route_message("none (dmesg)", message)
    assert found[0].slug == answer.runbook == _SLUG
    assert answer.action.startswith("Remove NVIDIA driver packages installed inside the image")
    assert validate(answer, ctx).ok
    reload = "Reboot, or reload the NVIDIA kernel modules so the loaded module matches."
    assert not validate(draft(reload, _SLUG), ctx).premises_ok


@pytest.mark.parametrize(
    "action",
    [
        "Reboot so the loaded kernel module matches the libraries.",
        "Reload the NVIDIA kernel modules (`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset"
        " nvidia && sudo modprobe nvidia`).",
    ],
)
@pytest.mark.parametrize(
    ("client", "module", "ok"),
    [("570.133.07", "575.51.02", False), ("575.51.02", "570.133.07", True)],
)
def test_a_reload_and_a_reboot_follow_the_same_fact(
    action: str, client: str, module: str, ok: bool
) -> None:
    # reviewer (issue 16): neither replaces older libraries an image bundles; both load the
    # module that belongs to newer libraries a package upgrade installed
    ctx = message_context(_nvrm(client, module), (_SLUG, 0.9))
    assert validate(draft(action, _SLUG), ctx).premises_ok is ok


def test_the_loaded_module_wins_over_an_older_libcuda_report() -> None:
    # reviewer (issue 16): TF's "libcuda reported version" is the client, not the installed driver
    texts = [
        _nvrm(client="570.133.07", module="575.51.02"),
        "cuda_diagnostics.cc:199] libcuda reported version is: 570.133.7",
        "cuda_diagnostics.cc:203] kernel reported version is: 575.51.2",
    ]
    driver = installed_driver(texts)
    assert driver is not None and driver.version == (575, 51, 2), driver
    assert moved_older("Install NVIDIA driver 572 for the running kernel.", driver, set())
