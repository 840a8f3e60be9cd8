"""How far a negation reaches over coordinated verbs (issue 16: a premise rules out wrong
answers, never right ones). A verb joined by "and" in the governed verb's own form continues
the turned-down construction after "rather than", "instead of", "without" or "avoid" ("rather
than purge 535 and install 470", "instead of purging and reinstalling"); a verb a comma,
"but" or "instead" introduces, or one of another form, is a new one ("don't upgrade, and
downgrade"). A comma list of bare verbs closed by "or" under one negation ("never reboot,
reload or rmmod nvidia") is turned down whole.
"""

from __future__ import annotations

import pytest

from rca.suggestion.context import AnalysisContext
from rca.suggestion.driver_targets import driver_targets
from rca.suggestion.negated_clauses import said_parts
from rca.suggestion.validation import validate
from tests.support.driver_texts import TOO_OLD as _TOO_OLD
from tests.support.driver_texts import installed_535
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear


@pytest.mark.parametrize(
    ("action", "said"),
    [
        # "and" + a verb of the governed verb's form continues the negated construction
        (
            "Keep the 535 driver rather than purge 535 and install driver 470",
            ["Keep the 535 driver"],
        ),
        ("Install torch instead of purging and reinstalling the driver", ["Install torch"]),
        # a comma or "or" list of bare verbs under one negation
        ("Never reboot, reload or rmmod nvidia", []),
        ("Never reboot, reload, or rmmod nvidia", []),
        ("Do not upgrade, downgrade or reinstall the driver; install torch", ["install torch"]),
        ("Install torch without rebooting, reloading or removing the module", ["Install torch"]),
        (
            "Never reboot, reload or rmmod nvidia but remove the image's libraries",
            ["but remove the image's libraries"],
        ),
    ],
)
def test_coordinated_verbs_under_one_negation_are_all_turned_down(
    action: str, said: list[str]
) -> None:
    assert said_parts(action) == said


@pytest.mark.parametrize(
    ("action", "said"),
    [
        # a comma before "and", a verb of another form, "instead": a new clause
        ("Don't upgrade, and downgrade the driver", ["and downgrade the driver"]),
        ("Avoid upgrading and roll back the driver", ["and roll back the driver"]),
        (
            "Do not upgrade torch and instead downgrade the driver",
            ["and instead downgrade the driver"],
        ),
        # a comma without a closing "or", or an item with an object: a new clause
        ("Do not upgrade, downgrade the driver to 470", ["downgrade the driver to 470"]),
        (
            "Do not upgrade, downgrade the driver to 470 or 460",
            ["downgrade the driver to 470 or 460"],
        ),
        ("Don't reboot, reload the nvidia module", ["reload the nvidia module"]),
        (
            "Do not upgrade torch, downgrade or reinstall the driver",
            ["downgrade or reinstall the driver"],
        ),
        # the turned-down part is after what is said
        (
            "Purge 535 and install driver 470 rather than keeping 535",
            ["Purge 535 and install driver 470"],
        ),
        # a removal governs its object, not a verb: "and" + a verb is a new one
        ("Remove torch and downgrade the driver", ["Remove torch and downgrade the driver"]),
    ],
)
def test_a_verb_that_does_not_continue_the_negation_is_said(action: str, said: list[str]) -> None:
    assert said_parts(action) == said


def _installed_535() -> AnalysisContext:
    return installed_535()


@pytest.mark.parametrize(
    "action",
    [
        "Keep the 535 driver rather than purge 535 and install driver 470; install torch cu121.",
        "Install torch cu118; never upgrade, reinstall or downgrade the NVIDIA driver.",
    ],
)
def test_a_right_answer_turning_down_coordinated_driver_moves_passes(action: str) -> None:
    assert (470,) not in driver_targets(action)
    assert validate(draft(action, _TOO_OLD[0]), _installed_535()).premises_ok, action


@pytest.mark.parametrize(
    "action",
    [
        "Purge 535 and install driver 470 rather than keeping 535.",
        "Don't upgrade, and downgrade the NVIDIA driver to 470.",
        "Do not upgrade, downgrade the NVIDIA driver to 470.",
        "Avoid upgrading and roll back the NVIDIA driver to 470.",
    ],
)
def test_a_downgrade_the_negation_does_not_reach_is_still_a_harm(action: str) -> None:
    assert not validate(draft(action, _TOO_OLD[0]), _installed_535()).premises_ok, action


_SLUG = "nvidia-driver-kernel-module-mismatch"
#: The libraries (570) older than the loaded module (575): bundled in the image, so no reboot
#: or reload fixes it (the runbook's step 1 is ruled out by driver-libraries-older).
_OLDER_LIBRARIES = (
    "NVRM: API mismatch: the client has the version 570.133.07, but this kernel module has the"
    " version 575.51.02.  Please make sure that the kernel module and all NVIDIA driver"
    " components have the same version."
)


def test_a_listed_refusal_of_reboot_and_reload_is_no_reload() -> None:
    action = "Remove the 570 driver libraries from the image; never reboot, reload or rmmod nvidia."
    ctx = message_context(_OLDER_LIBRARIES, (_SLUG, 0.9))
    assert validate(draft(action, _SLUG), ctx).premises_ok, action


@pytest.mark.parametrize(
    "action",
    [
        "Don't reboot, reload the nvidia module (rmmod nvidia && modprobe nvidia).",
        "Do not reboot; reload or rmmod nvidia.",
    ],
)
def test_a_reload_the_negation_does_not_reach_is_still_ruled_out(action: str) -> None:
    ctx = message_context(_OLDER_LIBRARIES, (_SLUG, 0.9))
    assert not validate(draft(action, _SLUG), ctx).premises_ok, action


def test_coordinated_and_listed_verbs_are_read_in_linear_time() -> None:
    def read(n: int) -> None:
        said_parts("never reboot" + ", reload" * (n // 8) + " or rmmod nvidia")
        said_parts("rather than purge" + " and install" * (n // 12))
        said_parts("do not x, " * (n // 10))

    assert_linear(read, 100, 4000)
