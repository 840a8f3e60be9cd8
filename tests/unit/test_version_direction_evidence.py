"""Which way a version fix goes, settled by what the incident shows, and never the other way.

Issue 16, version pairings: ``pip install -U a b c`` moves every listed package up, so a
listed package the incident says must not go up (a release that removed the argument the
code passes, :mod:`rca.suggestion.api_changes`) fails the premise check
(:func:`rca.suggestion.cause_releases.moves`); "upgrade X to a release below R" is a move
bounded by R, clear of a cause from R on.
The texts are written for these tests in the shapes real messages and actions take.
"""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.linear_regex import LinearPattern
from rca.suggestion import cause_releases, package_moves
from rca.suggestion.api_changes import documented_change
from rca.suggestion.cause_releases import Move, incident_causes, moves, moves_towards
from rca.suggestion.environment_facts import environment_facts, installed_versions
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.validation import validate
from rca.suggestion.version_pairs import version_change, version_facts, version_values
from tests.support.evidence import incident_context, message_context

#: accelerate 1.0 removed these ``Accelerator`` arguments (api-changes/accelerate.toml).
_REJECTED = "TypeError: Accelerator.__init__() got an unexpected keyword argument 'split_batches'"


def test_an_install_below_a_removal_only_row_contradicts_it_and_gives_nothing():
    # The row does not say when the argument came: 0.20.3 may predate it, or the version
    # shown may not be the one running, so nothing is concluded (an ``added`` would date it).
    assert documented_change(_REJECTED, ["accelerate==0.20.3"]) is None


@pytest.mark.parametrize("logs", [[], ["accelerate 1.2.0"], ["accelerate==1.0.1"]])
def test_the_same_argument_at_or_without_an_installed_release_past_the_removal_is_a_downgrade(
    logs,
):
    change = documented_change(_REJECTED, logs)
    assert change is not None
    assert (change.direction, change.target) == ("downgrade", "< 1.0")
    assert (change.bad_side, change.bad_release) == ("from", (1, 0))


def test_a_move_to_a_release_below_the_removal_is_read_as_a_ceiling_clear_of_the_cause():
    causes = incident_causes(_REJECTED, [])
    assert [(c.package, c.release, c.side) for c in causes] == [("accelerate", (1, 0), "from")]
    action = "Upgrade accelerate to a release below 1.0 that still takes `split_batches`."
    assert moves(action) == [Move("accelerate", "ceiling", (1, 0), inclusive=False)]
    assert moves_towards(action, causes) == []
    assert moves_towards("pip install -U accelerate", causes)  # the newest release removed it
    assert "version-above-supported" in version_facts(_REJECTED, [])
    assert version_values(_REJECTED, [])["target-version"] == "< 1.0"


def test_an_added_name_still_dates_the_cause_below_the_addition():
    message = "AttributeError: module 'torch' has no attribute 'no_grad'"
    causes = incident_causes(message, [])
    assert [(c.package, c.release, c.side) for c in causes] == [("torch", (0, 4), "below")]


@pytest.mark.parametrize(
    ("action", "expected"),
    [
        (
            "Move them together (`pip install -U transformers accelerate peft`).",
            {"transformers": "up", "accelerate": "up", "peft": "up"},
        ),
        ('pip install --upgrade "jax[cuda12]" jaxlib', {"jax": "up", "jaxlib": "up"}),
        ("pip install -U numpy==1.26.4 scipy", {"numpy": "exact", "scipy": "up"}),
        ("pip3 install -U 'numpy<2' pandas", {"numpy": "ceiling", "pandas": "up"}),
        ("pip install -U --no-cache-dir vllm", {"vllm": "up"}),
        ("pip install -U pip && pip install torch==2.1.0", {"pip": "up", "torch": "exact"}),
        ("pip install transformers accelerate", {}),  # no -U: the resolver may keep either
        ("Upgrade it (`pip install transformers --upgrade`).", {"transformers": "up"}),
        ("Install the latest bitsandbytes.", {"bitsandbytes": "up"}),
        ("Install an older torch release.", {"torch": "down"}),
    ],
)
def test_every_package_of_an_upgrade_list_moves_up(action, expected):
    assert {m.package: m.kind for m in moves(action)} == expected


def test_a_listed_package_the_incident_says_must_not_go_up_fails_validation():
    logs = ("accelerate 1.1.0",)
    ctx = message_context(_REJECTED, ("accelerate-transformers-version-pair", 0.9), logs=logs)
    listed = Draft(
        "Upgrade the stack together (`pip install -U transformers accelerate peft`).",
        "Out of step.",
        "accelerate-transformers-version-pair",
        0.5,
        "test",
        "test",
    )
    check = validate(listed, ctx)
    assert not check.ok and not check.premises_ok
    assert any("accelerate" in complaint for complaint in check.complaints)


def test_a_cause_the_frames_date_is_a_premise_as_it_is_a_version_fact():
    # The callee is named only by the frame that makes the call: the version facts read the
    # frames' code lines, and so does the premise check, so both see accelerate 1.0's removal.
    message = "TypeError: __init__() got an unexpected keyword argument 'split_batches'"
    frames = [
        {
            "filename": "/venv/lib/python3.10/site-packages/sometrainer/trainer.py",
            "function": "create_accelerator",
            "context_line": "self.accelerator = Accelerator(split_batches=True)",
        }
    ]
    logs = ("accelerate                1.0.1",)
    ctx = incident_context(
        message, ("accelerate-transformers-version-pair", 0.9), logs=logs, frames=frames
    )
    assert [c.package for c in read_premises(ctx).causes] == ["accelerate"]
    listed = Draft(
        "Upgrade them together (`pip install -U transformers accelerate`).",
        "Out of step.",
        "accelerate-transformers-version-pair",
        0.5,
        "test",
        "test",
    )
    assert not validate(listed, ctx).premises_ok
    assert not read_premises(incident_context(message, logs=logs)).causes  # nothing names it


def test_the_offline_action_moves_below_the_removal_and_validates():
    ctx = message_context(_REJECTED, ("version-api-changed-signature", 0.9))
    draft = OfflineProvider().suggest(ctx)
    assert "downgrade accelerate" in draft.action.lower() and "< 1.0" in draft.action
    assert not moves_towards(draft.action, read_premises(ctx).causes)
    assert validate(draft, ctx).ok


@pytest.mark.parametrize(
    ("line", "package", "version"),
    [
        ("torch                     2.1.2+cu121", "torch", (2, 1, 2)),  # pip list, local build
        ("accelerate==0.23.0", "accelerate", (0, 23, 0)),  # pip freeze
        ("  peft == 0.5.0 ", "peft", (0, 5, 0)),
        ('  File "/usr/lib/python3/dist-packages/numpy-1.21.5.egg-info/PKG"', "numpy", (1, 21, 5)),
        (
            "/opt/conda/lib/python3.10/site-packages/torch_npu-2.1.0.post3.dist-info",
            "torch-npu",
            (2, 1, 0),
        ),
        (
            r"C:\env\Lib\site-packages\transformers-4.40.0.dist-info\METADATA",
            "transformers",
            (4, 40, 0),
        ),
        (
            "The versions of Foo you are currently using is 2.8.0 and is not supported.",
            "foo",
            (2, 8, 0),
        ),
        ("Your currently installed version of Bar is Bar 3, but it is not supported", "bar", (3,)),
        (
            "WARNING: You are using pip version 21.2.4; however, version 23.0 is available.",
            "pip",
            (21, 2, 4),
        ),
        ("Your triton version is 3.1.0", "triton", (3, 1, 0)),
    ],
)
def test_installed_versions_as_logs_and_messages_show_them(line, package, version):
    assert installed_versions([line]) == {package: version}


@pytest.mark.parametrize(
    "line",
    [
        "pip install torch==2.1.0",  # a command: what it asks for, not what is there
        "requires: foo==1.2 and bar>=2",
        "the site-packages/foo-bar folder",
        "torch 2.1.0 is the release that added it",
    ],
)
def test_commands_and_prose_are_not_installed_versions(line):
    assert installed_versions([line]) == {}


def test_a_freeze_line_shows_what_is_installed_and_states_no_requirement():
    message = "TypeError: Foo.__init__() got an unexpected keyword argument 'bar'"
    assert "required-version-installed" not in environment_facts([message, "foo==0.23.0"])
    stated = "ImportError: this needs foo>=0.20.1"
    assert "required-version-installed" in environment_facts([stated, "foo==0.23.0"])


def test_an_installed_version_in_the_message_picks_the_end_of_a_range_it_crossed():
    message = (
        "UserWarning: Foo Addons supports foo versions above or equal to 2.5.0 and strictly "
        "below 2.8.0. The versions of foo you are currently using is 2.8.0 and is not supported."
    )
    installed = installed_versions(message.splitlines())
    change = version_change(message, [], installed)
    assert change is not None and (change.package, change.direction) == ("foo", "downgrade")
    assert version_change(message.split(" The versions")[0], [], {}) is None  # not shown: hedge


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000), st.lists(st.text(max_size=300), max_size=4))
def test_any_text_reads_without_error(text, logs):
    documented_change(text, logs)
    moves(text)
    moves("pip install -U " + text)


@pytest.mark.parametrize(
    "text",
    [
        "pip install -U " + "a " * 100000,
        "pip install -U " * 30000,
        "pip install --upgrade " + "x[" * 50000,
        "got an unexpected keyword argument 'a' " * 20000,
    ],
)
def test_long_adversarial_input_stays_bounded(text):
    started = time.process_time()
    moves(text)
    documented_change(text, [text])
    assert time.process_time() - started < 5.0


@pytest.mark.parametrize("module", [package_moves, cause_releases])
def test_the_action_and_cause_readers_compile_every_pattern_with_re2(module):
    patterns = [v for v in vars(module).values() if isinstance(v, (re.Pattern, LinearPattern))]
    assert patterns and not any(isinstance(p, re.Pattern) for p in patterns)
