"""A name or argument a release added or removed gives the package and the direction (issue 16).

``module 'numpy' has no attribute 'float'`` (removed in 1.24: downgrade or port) and
``module 'torch' has no attribute 'no_grad'`` (added in 0.4: upgrade) read alike; which way
is in the packages' release notes, kept as data under
``rca/knowledge/compatibility/api-changes``. Requirements worded in the other common ways
("X 1.0 is installed, but 2.0 or higher is required", "requires numpy<2", "is too old") name
the package and the direction as well.
"""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.api_changes import TABLES_DIR, documented_change, load_changes
from rca.suggestion.named_directions import stated_requirement
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.version_pairs import version_change, version_facts, version_values
from tests.support.evidence import incident_context


def test_every_api_change_table_cites_its_page_and_date() -> None:
    paths = sorted(TABLES_DIR.glob("*.toml"))
    assert len(paths) >= 8
    for path in paths:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        assert str(data["source"]).startswith("https://"), path.name
        assert data["retrieved"] and data["package"] and data["changes"], path.name
    assert len(load_changes()) >= 20


@pytest.mark.parametrize(
    ("message", "texts", "package", "direction", "target"),
    [
        (
            "AttributeError: module 'numpy' has no attribute 'float'.",
            [],
            "numpy",
            "downgrade",
            "< 1.24",
        ),
        (
            "AttributeError: module 'numpy' has no attribute 'NaN'",
            [],
            "numpy",
            "downgrade",
            "< 2.0",
        ),
        (
            "AttributeError: module 'torch' has no attribute 'no_grad'",
            [],
            "torch",
            "upgrade",
            ">= 0.4",
        ),
        (
            "AttributeError: module 'tensorflow' has no attribute 'placeholder'",
            [],
            "tensorflow",
            "downgrade",
            "< 2.0",
        ),
        (
            "AttributeError: module 'PIL.Image' has no attribute 'ANTIALIAS'",
            [],
            "pillow",
            "downgrade",
            "< 10.0",
        ),
        (
            "ImportError: cannot import name 'soft_unicode' from 'markupsafe'",
            [],
            "markupsafe",
            "downgrade",
            "< 2.1",
        ),
        (
            "AttributeError: 'DataFrame' object has no attribute 'append'",
            [],
            "pandas",
            "downgrade",
            "< 2.0",
        ),
        (
            "TypeError: __init__() got an unexpected keyword argument 'dispatch_batches'",
            ["accelerate                1.0.1", "self.accelerator = Accelerator("],
            "accelerate",
            "downgrade",
            "< 1.0",
        ),
    ],
)
def test_documented_change_names_package_and_direction(
    message: str, texts: list[str], package: str, direction: str, target: str
) -> None:
    change = documented_change(message, texts)
    assert change is not None
    assert (change.package, change.direction, change.target) == (package, direction, target)
    assert change.source.startswith("https://")


def test_installed_version_that_contradicts_the_row_gives_nothing() -> None:
    message = "AttributeError: module 'numpy' has no attribute 'float'"
    assert documented_change(message, ["numpy 1.21.0"]) is None  # removed in 1.24: not this
    message = "Accelerator.__init__() got an unexpected keyword argument 'use_seedable_sampler'"
    assert documented_change(message, ["accelerate==0.23.0"]) is None


def test_prose_that_dates_a_release_is_not_an_installed_version() -> None:
    message = (
        "AttributeError: module 'numpy' has no attribute 'float'.\n"
        "The aliases was originally deprecated in NumPy 1.20; for more details see the notes"
    )
    change = documented_change(message, [])
    assert change is not None and change.target == "< 1.24"


@pytest.mark.parametrize(
    "message",
    [
        "AttributeError: module 'mylib' has no attribute 'float'",  # not a table's module
        "AttributeError: 'Config' object has no attribute 'float'",  # an object, no owner row
        "TypeError: forward() got an unexpected keyword argument 'dispatch_batches'",
        "TypeError: __init__() got an unexpected keyword argument 'dispatch_batches'",  # no package
    ],
)
def test_names_no_row_is_about_give_nothing(message: str) -> None:
    assert documented_change(message, []) is None


@settings(max_examples=150, deadline=None)
@given(message=st.text(max_size=400), logs=st.lists(st.text(max_size=200), max_size=3))
def test_any_text_reads_without_error(message: str, logs: list[str]) -> None:
    documented_change(message, logs)
    stated_requirement(message)


def test_documented_removal_is_a_fact_and_a_value() -> None:
    message = "AttributeError: module 'tensorflow' has no attribute 'Session'"
    assert "version-above-supported" in version_facts(message, [])
    values = version_values(message, [])
    assert values["package"] == "tensorflow" and values["target-version"] == "< 2.0"
    assert "tf.compat.v1" in values["documented-change"]


def test_removed_name_suggests_the_downgrade_with_the_replacement() -> None:
    ctx = incident_context(
        "AttributeError: module 'numpy' has no attribute 'int'",
        ("version-numpy2-abi", 0.9),
        ("version-api-changed-signature", 0.85),
    )
    draft = OfflineProvider().suggest(ctx)
    assert draft.action.startswith("Downgrade numpy to < 1.24")
    assert "builtin" in draft.action


def test_added_name_suggests_the_upgrade() -> None:
    ctx = incident_context(
        "AttributeError: module 'torch' has no attribute 'compile'",
        ("version-api-changed-signature", 0.9),
    )
    assert OfflineProvider().suggest(ctx).action.startswith("Upgrade torch to >= 2.0")


@pytest.mark.parametrize(
    ("message", "package", "direction", "target"),
    [
        (
            "ImportError: transformers 4.30.0 is installed, but 4.36.0 or higher is required",
            "transformers",
            "upgrade",
            ">= 4.36.0",
        ),
        (
            "peft 0.4.0 has requirement torch>=1.13.0, but you'll have torch 1.12.1 which is"
            " incompatible.",
            "torch",
            "upgrade",
            ">= 1.13.0",
        ),
        ("RuntimeError: Expected torch version >= 2.1, got 2.0.1", "torch", "upgrade", ">= 2.1"),
        (
            "ImportError: flash_attn>=2.1.0 is required for this model",
            "flash_attn",
            "upgrade",
            ">= 2.1.0",
        ),
        ("RuntimeError: this build requires numpy<2", "numpy", "downgrade", "< 2"),
        (
            "ValueError: torch 2.0 or higher is required to use this feature",
            "torch",
            "upgrade",
            ">= 2.0",
        ),
        ("the minimum required version of peft is 0.6.0", "peft", "upgrade", ">= 0.6.0"),
        (
            "RuntimeError: Your triton version is too old",
            "triton",
            "upgrade",
            "a release newer than the installed one",
        ),
    ],
)
def test_requirement_wordings_name_package_and_direction(
    message: str, package: str, direction: str, target: str
) -> None:
    change = version_change(message, [], {})
    assert change is not None
    assert (change.package, change.direction, change.target) == (package, direction, target)


@pytest.mark.parametrize(
    "message",
    [
        "Please update your GPU driver",
        "The NVIDIA driver on your system is too old (found version 11000).",
        "transformers 4.40.0 is installed, but 4.36.0 or higher is required",  # already met
    ],
)
def test_look_alikes_name_no_package_change(message: str) -> None:
    assert version_change(message, [], {}) is None


def test_requirement_met_by_the_installed_version_asks_nothing() -> None:
    message = "ImportError: flash_attn>=2.1.0 is required for this model"
    assert version_change(message, [], {"flash-attn": (2, 5, 7)}) is None
    assert version_change(message, [], {"flash-attn": (2, 0, 4)}) is not None


def test_a_top_level_extension_belongs_to_the_package_whose_frames_load_it() -> None:
    from rca.suggestion.api_drift import read_drift

    site = "/env/lib/python3.10/site-packages"
    binary = f"{site}/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so"
    message = f"ImportError: {binary}: undefined symbol: _ZN3c10"
    frames = [
        {"filename": "/home/me/run.py"},
        {"filename": f"{site}/flash_attn/flash_attn_interface.py"},
    ]
    assert read_drift(message, frames, []).extension_package == "flash_attn"
    # Without such a frame the module's name is no package pip knows: none is named.
    alone = read_drift(message, frames[:1], [])
    assert (alone.extension_package, alone.extension_module) == ("", "flash_attn_2_cuda")
