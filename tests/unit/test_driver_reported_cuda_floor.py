"""A driver known only by the CUDA release it reports is at least the driver NVIDIA packages
with that release (CUDA Toolkit Release Notes, Table 3, as
``rca/knowledge/cuda-toolkit-drivers.toml``).

A read-only review (issue 16, finding 3) found that on "found version 11060" (a driver
reporting CUDA 11.6, so an R510 or newer) answers installing or reinstalling an R470 or R460
driver passed validation, because the installed driver was bounded only by the 11.x family's
minimum (450). Each sentence here is one the review wrote; the harmful ones must fail the
premise check, the right ones still pass.
"""

from __future__ import annotations

import pytest

from rca.suggestion.driver_floors import driver_floor, load_rows
from rca.suggestion.driver_targets import driver_harms, driver_targets, installed_driver
from rca.suggestion.validation import validate
from tests.support.driver_texts import FOUND_11040, FOUND_11060, FOUND_12020, SMI, TOO_OLD
from tests.support.evidence import draft, message_context


@pytest.mark.parametrize(
    ("text", "branch"),
    [
        (FOUND_11040, 470),
        (FOUND_11060, 510),
        (FOUND_12020, 535),
        (
            "The NVIDIA driver's CUDA version is 12.4 which is older than the ptxas CUDA version",
            550,
        ),
        ("requires CUDA runtime 13.1 or newer, but cudaDriverGetVersion returned 13010", 580),
        ("CUDA Driver Version / Runtime Version          10.1 / 10.0", 418),
    ],
)
def test_a_driver_reporting_a_cuda_release_is_at_least_its_toolkits_driver(
    text: str, branch: int
) -> None:
    driver = installed_driver([text])
    assert driver is not None and (driver.version, driver.exact) == ((branch,), False)
    assert f"so a {branch} or newer" in driver.as_line()


def test_the_toolkit_driver_table_rises_with_the_cuda_release() -> None:
    rows = load_rows()
    assert len(rows) >= 20
    drivers = [driver for _, driver in rows]  # newest release first
    assert drivers == sorted(drivers, reverse=True)
    assert driver_floor("12.7") == driver_floor("12.6") == (560, 28, 3)  # no 12.7 exists
    assert driver_floor("6.5") == () and driver_floor("") == ()


_HARMFUL_11060 = [
    (
        "Install `nvidia-driver-470` (`sudo apt-get install nvidia-driver-470`) so the driver"
        " matches your CUDA 11.4 toolkit.",
        [(470,)],
    ),
    ("Reinstall `nvidia-driver-460` and reboot.", [(460,)]),
    ("Install NVIDIA driver 495.29.05, which matches CUDA 11.5.", [(495, 29, 5)]),
    ("Pin the NVIDIA driver to **470.199.02** and reboot.", [(470, 199, 2)]),
    ("Install NVIDIA driver version 450 or lower.", [(450,)]),
    ("Switch to an older NVIDIA driver (<= 470) and reboot.", [(470,)]),
    ("Roll back to the R470 driver branch and reboot.", [(470,)]),
    ("Install `cuda-drivers-470` and reboot.", [(470,)]),
    ("Reinstall driver 460 and reboot.", [(460,)]),
]
_HARMFUL_12020 = [
    ("Install `nvidia-driver-530` to match CUDA 12.1.", [(530,)]),
    ("Use driver 530.30.02, the one CUDA 12.1 shipped with.", [(530, 30, 2)]),
    ("Reinstall the NVIDIA driver from the 525 branch and reboot.", [(525,)]),
]


@pytest.mark.parametrize(
    ("message", "action", "targets"),
    [(FOUND_11060, *case) for case in _HARMFUL_11060]
    + [(FOUND_12020, *case) for case in _HARMFUL_12020],
)
def test_a_branch_older_than_the_reported_release_is_an_older_driver(
    message: str, action: str, targets: list[tuple[int, ...]]
) -> None:
    # reviewer (issue 16, finding 3): these passed; only the verb "downgrade" was caught
    assert driver_targets(action) == targets
    ctx = message_context(message, TOO_OLD)
    assert not validate(draft(action, TOO_OLD[0]), ctx).premises_ok, action
    why = driver_harms(action, installed_driver([message]))
    assert why and "older than the one installed" in why[0]


@pytest.mark.parametrize("message", [FOUND_11060, FOUND_12020])
@pytest.mark.parametrize(
    "action",
    [
        "Upgrade the driver to 535 or newer.",
        "Install nvidia-driver-550 and reboot.",
        "Install the cu118 build of torch, which the installed driver supports.",
        "Install the cu118 build of torch, which any NVIDIA driver 450.80.02 or newer supports.",
        "Install the cu118 build of torch instead of downgrading the NVIDIA driver to 470.",
        "Keep the installed driver rather than installing NVIDIA driver 470; install torch cu118.",
    ],
)
def test_a_newer_driver_a_requirement_or_a_refusal_still_passes(message: str, action: str) -> None:
    ctx = message_context(message, TOO_OLD)
    assert validate(draft(action, TOO_OLD[0]), ctx).premises_ok, action


def test_a_printed_driver_version_still_wins_over_the_reported_release() -> None:
    # nvidia-smi's own "Driver Version" is the installed driver, exact, whatever the floor says
    driver = installed_driver([FOUND_11060, SMI.format(v="511.65", cuda="11.6")])
    assert driver is not None and (driver.version, driver.exact) == ((511, 65), True)
