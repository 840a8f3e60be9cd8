"""An answer's driver versions against the installed driver, as an LLM words them.

Three read-only reviews (issue 16) probed the driver-direction premise
(:mod:`rca.suggestion.driver_targets`) with the sentences an LLM writes: a build's minimum
driver quoted back, a refused or turned-down downgrade, a removal of bundled libraries, an
older driver named without any runbook step's words. Right answers must pass validation and
harmful ones fail; each sentence here is one a review found wrongly judged.
"""

from __future__ import annotations

import pytest

from rca.suggestion.context import AnalysisContext
from rca.suggestion.cuda_components import forward_compat
from rca.suggestion.driver_targets import (
    driver_harms,
    driver_targets,
    installed_driver,
    moved_older,
)
from rca.suggestion.premises import read_premises, shown_harms
from rca.suggestion.validation import validate
from tests.support.driver_texts import FOUND_11040 as _FOUND_11040
from tests.support.driver_texts import INSUFFICIENT as _INSUFFICIENT
from tests.support.driver_texts import SMI as _SMI
from tests.support.driver_texts import TOO_OLD as _TOO_OLD
from tests.support.driver_texts import installed_535
from tests.support.evidence import draft, message_context


def _installed_535() -> AnalysisContext:
    return installed_535()


@pytest.mark.parametrize(
    "action",
    [
        "Install the cu118 build of torch, which any NVIDIA driver 450.80.02 or newer supports.",
        "Install the PyTorch cu121 wheels, which need NVIDIA driver 530 or newer, so the"
        " installed 535 driver runs them.",
    ],
)
def test_a_driver_a_build_requires_is_no_target(action: str) -> None:
    # reviewer (issue 16): a minimum the answer quotes is a requirement, not where it moves
    assert not driver_targets(action)
    assert validate(draft(action, _TOO_OLD[0]), _installed_535()).premises_ok, action


@pytest.mark.parametrize(
    "action",
    [
        "Install the PyTorch cu121 wheels and do not downgrade the driver to 470.",
        "Install the cu121 build of torch instead of downgrading the NVIDIA driver to 470.",
        "Keep the installed 535 driver rather than installing NVIDIA driver 470; install torch"
        " cu121.",
    ],
)
def test_a_refused_downgrade_names_no_target(action: str) -> None:
    # reviewer (issue 16): a refusal in the clause governs the number, not only the word before
    assert not driver_targets(action)
    assert validate(draft(action, _TOO_OLD[0]), _installed_535()).premises_ok, action


@pytest.mark.parametrize(
    "action",
    [
        "Don't upgrade but downgrade the NVIDIA driver to 460.",
        "Do not upgrade torch and instead downgrade the NVIDIA driver to 460.",
        "Avoid upgrading and roll back the NVIDIA driver to 460.",
        "Rather than upgrade downgrade the NVIDIA driver to 460.",
        "Install nvidia-driver-460 because the 535 one is not required.",
    ],
)
def test_a_negation_governs_only_its_own_verb_phrase(action: str) -> None:
    # reviewer (issue 16): a refusal ends where a new verb starts ("but downgrade"), and a
    # number a postposed negation's subject names ("the 535 one is not required") is none
    assert driver_targets(action) == [(460,)]
    assert not validate(draft(action, _TOO_OLD[0]), _installed_535()).premises_ok, action


@pytest.mark.parametrize(
    "action",
    [
        "Downgrade the NVIDIA driver to 460 if upgrading does not help.",
        "Downgrade the NVIDIA driver to 460 because the new one doesn't work.",
        "Downgrade the NVIDIA driver to 460 - a newer one is not needed.",
    ],
)
def test_a_trailing_negated_remark_does_not_turn_down_the_main_verb(action: str) -> None:
    # reviewer (issue 16): "does not help" negates "upgrading", not "downgrade"; with only
    # the message, the driver-too-old fact still rules the downgrade out
    assert moved_older(action, None, {"driver-older-than-runtime"})
    ctx = message_context(_INSUFFICIENT, _TOO_OLD)
    assert not validate(draft(action, _TOO_OLD[0]), ctx).premises_ok, action


_OLDER_ANSWERS = [
    "Use the 470 driver.",
    "Switch to driver 470.82.01.",
    "Roll back to the 470 branch.",
    "Downgrade NVIDIA to 470.82.01 so it matches CUDA 11.4.",
    "apt-get install cuda-drivers-470",
    "sudo apt install nvidia-utils-470 nvidia-kernel-common-470 nvidia-dkms-470",
    "Reinstall the driver from the 470 series.",
    "Replace driver 535 with 470.",
]


@pytest.mark.parametrize("runbook", [_TOO_OLD[0], "nvidia-driver-kernel-module-mismatch"])
@pytest.mark.parametrize("action", _OLDER_ANSWERS)
def test_an_older_driver_is_a_harm_whatever_step_the_answer_restates(
    action: str, runbook: str
) -> None:
    # reviewer (issue 16): read only through a restated step, these passed validation
    ctx = message_context(
        _INSUFFICIENT,
        _TOO_OLD,
        ("nvidia-driver-kernel-module-mismatch", 0.5),
        logs=(_SMI.format(v="535.104.05", cuda="12.2"),),
    )
    assert not validate(draft(action, runbook), ctx).premises_ok, action


@pytest.mark.parametrize(
    "action",
    [
        "Install a newer driver (550).",
        "Install NVIDIA driver 550 or newer; older drivers like 470 cannot run CUDA 12.4.",
        "Install the cu118 build of torch, which any NVIDIA driver 450.80.02 or newer supports.",
        "Install the cu121 build of torch instead of downgrading the NVIDIA driver to 470.",
    ],
)
def test_a_newer_driver_or_a_floor_met_is_no_harm(action: str) -> None:
    ctx = _installed_535()
    assert validate(draft(action, "nvidia-driver-kernel-module-mismatch"), ctx).premises_ok, action
    assert not driver_harms(action, installed_driver([_SMI.format(v="535.104.05", cuda="12.2")]))


def test_a_floor_the_installed_driver_meets_is_no_harm() -> None:
    # the step-relative check still rules out a step whose floor is met (it does not apply)
    driver = installed_driver([_INSUFFICIENT, _SMI.format(v="535.104.05", cuda="12.2")])
    assert not driver_harms("Update the NVIDIA driver to 525 or newer.", driver)
    assert driver_harms("Update the NVIDIA driver to 525.", driver)


def test_an_older_driver_is_no_harm_without_a_cuda_version_problem() -> None:
    # a GPU only a legacy branch supports, an NCCL hang after an update: rolling back may fix it
    driver = installed_driver([_SMI.format(v="535.104.05", cuda="12.2")])
    assert driver is not None and not driver_harms("Install the 470 legacy driver.", driver)


def test_the_prompt_line_states_only_what_cuda_compatibility_says() -> None:
    # reviewer (issue 16): minor-version and forward compatibility run newer runtimes
    driver = installed_driver([_SMI.format(v="535.104.05", cuda="12.2")])
    assert driver is not None
    line = driver.as_line()
    assert "never a newer" not in line and "every older" not in line
    assert "up to the CUDA version it reports" in line and "cuda-compat" in line


@pytest.mark.parametrize(
    "text",
    [
        "libcuda.so.1 (libc6,x86-64) => /usr/local/cuda-12.4/compat/libcuda.so.1",
        "/usr/local/cuda-12.2/compat/libcuda.so.1",  # find / -name libcuda.so.1
        "FutureWarning: pass use_reentrant explicitly for forward compatibility",
        "See https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html",
    ],
)
def test_a_compat_directory_or_the_words_alone_show_no_forward_compatibility(text: str) -> None:
    # reviewer (issue 16): nvidia/cuda images ship the compat directory; it is not in use
    assert not forward_compat([text, _FOUND_11040])
    driver = installed_driver([text, _FOUND_11040])
    assert driver is not None and (driver.version, driver.exact) == ((470,), False)


@pytest.mark.parametrize(
    "action",
    [
        # "drop" is how people say downgrade, not a removal
        "Drop the NVIDIA driver to 470.",
        "Drop back to NVIDIA driver 470.",
        "Drop down to driver 470.",
        # a removal or refusal earlier in the clause governs its own verb only
        "Uninstall the cu121 wheel and downgrade the NVIDIA driver to 470.",
        "Remove torch and downgrade the driver to 470.",
        "Don't upgrade torch but downgrade the driver to 470.",
        # a postposed negation turns down its subject through its verb, not what follows
        "A newer driver won't fix it so install NVIDIA driver 470.",
        "Upgrading torch won't help - install NVIDIA driver 470.",
        "Upgrading does not help so downgrade the driver to 470.",
    ],
)
def test_a_downgrade_after_a_refused_or_removed_other_thing_is_a_harm(action: str) -> None:
    # third review (issue 16): each passed validation after the negation-scope change
    ctx = message_context(_INSUFFICIENT, _TOO_OLD, logs=(_SMI.format(v="535.104.05", cuda="12.2"),))
    assert not validate(draft(action, _TOO_OLD[0]), ctx).premises_ok, action


@pytest.mark.parametrize(
    "action",
    [
        "Uninstall the cu121 wheel and downgrade the NVIDIA driver.",
        "Remove the cuda 12.1 toolkit and downgrade the driver.",
        "Don't upgrade torch but downgrade the driver.",
        "Avoid pip and downgrade the driver.",
        "If upgrading doesn't work downgrade the driver.",
    ],
)
def test_a_downgrade_without_a_number_after_another_refused_thing_is_one(action: str) -> None:
    assert moved_older(action, None, {"driver-older-than-runtime"}), action


@pytest.mark.parametrize(
    "action",
    [
        "Upgrade the NVIDIA driver (550 or newer).",
        "Upgrade the NVIDIA driver (at least 550).",
        "Upgrade the NVIDIA driver (>= 550).",
        "Upgrade the NVIDIA driver (min. 550).",
        "Upgrade the NVIDIA driver (e.g. 550 or newer).",
    ],
)
def test_a_driver_in_parentheses_after_the_driver_is_the_answers_own(action: str) -> None:
    # review (issue 16): the parenthesis is the driver's own version, a floor the answer sets,
    # so a restated step's older driver does not speak for it
    assert driver_targets(action) == [(550,)]
    premises = read_premises(_installed_535())
    assert shown_harms("Install NVIDIA driver 470.", premises, answer=action) == []


@pytest.mark.parametrize(
    "action",
    [
        "Install the cu124 wheels, which need the NVIDIA driver (at least 550).",
        "Do not install an older NVIDIA driver (e.g. 470); install torch cu121.",
    ],
)
def test_a_parenthesised_requirement_or_refused_driver_is_no_target(action: str) -> None:
    assert not driver_targets(action)
    assert validate(draft(action, _TOO_OLD[0]), _installed_535()).premises_ok, action


@pytest.mark.parametrize(
    "action",
    [
        "Install an older NVIDIA driver (e.g. 470.82).",
        "Use the legacy NVIDIA driver (i.e. 470.82.01).",
    ],
)
def test_an_older_driver_in_parentheses_is_still_a_harm(action: str) -> None:
    assert driver_targets(action) and driver_targets(action)[0][0] == 470
    assert not validate(draft(action, _TOO_OLD[0]), _installed_535()).premises_ok, action


def test_no_action_names_no_driver() -> None:
    assert driver_targets(None) == []
    assert driver_targets("Install NVIDIA driver 470.") == [(470,)]
