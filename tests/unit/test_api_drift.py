"""API drift without a version in the text names the package from the traceback (issue 16).

`X() got an unexpected keyword argument 'a'` raised inside an installed package, `module
'numpy' has no attribute 'float'`, and `undefined symbol` from an extension under
site-packages: the step names the package the frames or the message point at, and the
direction only when the wording says a release removed the name; otherwise its reason names
both directions. Look-alikes (the user's own function or module, frames only in user code)
read nothing, and renamed packages get the same step with their own names.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.parsing.frames import make_frame
from rca.suggestion.api_drift import drift_facts, installed_package, read_drift
from rca.suggestion.context import AnalysisContext
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.validation import validate
from tests.support.evidence import evidence

API = "version-api-changed-signature"
ABI = "version-torch-abi-undefined-symbol"


def _frame(path: str, line: str = "x = call()") -> Any:
    return make_frame(filename=path, function="f", lineno=1, context_line=line)


def _ctx(message: str, *ranked: tuple[str, float], frames: Any = (), logs: Any = ()) -> Any:
    return AnalysisContext(
        error_type=message.split(":", 1)[0],
        message=message,
        logs=[{"message": line} for line in logs],
        frames=list(frames),
        evidence=evidence(*ranked),
    )


def _suggest(ctx: Any) -> Draft:
    return OfflineProvider().suggest(ctx)


def _lib(package: str, venv: str = "/opt/venv/lib/python3.10/site-packages") -> str:
    return f"{venv}/{package}/core/module.py"


@settings(max_examples=150, deadline=None)
@given(message=st.text(max_size=400), paths=st.lists(st.text(max_size=80), max_size=3))
def test_any_text_is_read_without_raising(message: str, paths: list[str]) -> None:
    drift_facts(read_drift(message, [_frame(p) for p in paths], [message]))


@pytest.mark.parametrize(
    ("path", "package"),
    [
        ("/usr/lib/python3/dist-packages/peft/utils/config.py", "peft"),
        ("C:\\env\\Lib\\site-packages\\transformers\\trainer.py", "transformers"),
        ("/x/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so", "flash_attn_2_cuda"),
        ("/home/me/project/train.py", ""),
        ("site-packages", ""),
    ],
)
def test_the_package_is_the_folder_under_site_packages(path: str, package: str) -> None:
    assert installed_package(path) == package


@pytest.mark.parametrize(
    ("caller", "callee", "argument"),
    [
        ("transformers", "Accelerator.__init__", "shard_mode"),  # no release notes row
        ("peft", "PeftConfig.__init__", "dtype"),
        ("widgetkit", "__init__", "spin_rate"),  # the bare form Python 3.9 prints
    ],
)
def test_a_keyword_rejected_inside_a_library_names_that_library_both_ways(
    caller: str, callee: str, argument: str
) -> None:
    message = f"TypeError: {callee}() got an unexpected keyword argument '{argument}'"
    frames = [_frame("/home/me/train.py"), _frame(_lib(caller))]
    ctx = _ctx(message, (API, 0.9), frames=frames)
    assert "library-call-rejects-argument" in read_premises(ctx).facts
    draft = _suggest(ctx)
    assert draft.action.startswith(f"Upgrade the library that {caller} calls")
    assert f"`{argument}`" in draft.action and f"install the {caller}" in draft.action
    assert "newer release" in draft.reason and "older than" in draft.reason  # both directions
    assert "{" not in draft.action + draft.reason
    assert validate(draft, ctx).ok


def test_a_removed_argument_pins_the_called_library_below_that_release() -> None:
    message = "TypeError: Accelerator.__init__() got an unexpected keyword argument 'split_x'"
    logs = ["FutureWarning: `split_x` is deprecated and will be removed in accelerate 1.0"]
    frames = [_frame(_lib("transformers"))]
    ctx = _ctx(message, (API, 0.9), frames=frames, logs=logs)
    assert "argument-removed-by-release" in read_premises(ctx).facts
    draft = _suggest(ctx)
    # The log names the package and the removing release: the action says both, and
    # moves away from that release (never towards it).
    assert draft.action.startswith("Downgrade accelerate to < 1.0"), draft.action
    assert "upgrade accelerate" not in draft.action.lower()
    assert validate(draft, ctx).ok


@pytest.mark.parametrize(
    "frames",
    [
        [_frame("/home/me/train.py"), _frame("/home/me/utils/helpers.py")],  # user code only
        [],  # no traceback: the callee may be the user's own function
        [_frame(_lib("torch")), _frame("/home/me/model.py")],  # innermost frame is the user's
    ],
)
def test_a_keyword_rejected_in_user_code_reads_nothing(frames: list[Any]) -> None:
    message = "TypeError: build_model() got an unexpected keyword argument 'depth'"
    ctx = _ctx(message, (API, 0.9), frames=frames)
    facts = read_premises(ctx).facts
    assert "library-call-rejects-argument" not in facts
    assert "{" not in _suggest(ctx).action


# Names no release-notes table covers (:mod:`rca.suggestion.api_changes`): those take the
# documented direction instead (tests/unit/test_api_changes.py).
@pytest.mark.parametrize(
    ("package", "name"),
    [("numpy", "fancy_alias"), ("tensorflow", "OldSession"), ("quuxlib", "Widget")],
)
def test_a_name_a_release_removed_pins_the_package_below_it_or_ports_the_code(
    package: str, name: str
) -> None:
    message = (
        f"AttributeError: module '{package}' has no attribute '{name}'.\n"
        f"`{package}.{name}` was a deprecated alias; it was removed."
    )
    frames = [_frame("/home/me/main.py", f"x = {package}.{name}(1)")]
    ctx = _ctx(message, (API, 0.9), frames=frames)
    draft = _suggest(ctx)
    assert draft.action.startswith(f"Pin {package} below the release that removed `{name}`")
    assert validate(draft, ctx).ok


@pytest.mark.parametrize(
    ("package", "name"), [("torch", "shiny_new_op"), ("tensorflow", "FutureThing")]
)
def test_without_removal_wording_the_reason_names_both_directions(package: str, name: str) -> None:
    message = f"AttributeError: module '{package}' has no attribute '{name}'"
    ctx = _ctx(message, (API, 0.9))
    draft = _suggest(ctx)
    assert draft.action.startswith(f"Upgrade {package} if `{name}` came in a release newer")
    assert f"pin {package} below" in draft.action
    assert "older than" in draft.reason and "newer release removed" in draft.reason
    assert validate(draft, ctx).ok


def test_a_name_used_inside_another_package_upgrades_that_package() -> None:
    message = "AttributeError: module 'numpy' has no attribute 'old_alias'"
    frames = [
        _frame("/home/me/run.py"),
        _frame(_lib("comic_text_detector"), "xmin = box.astype(np.int)"),
        _frame("/opt/venv/lib/python3.10/site-packages/numpy/__init__.py", "raise AttributeError"),
    ]
    ctx = _ctx(message, (API, 0.9), frames=frames)
    assert "name-used-by-other-package" in read_premises(ctx).facts
    draft = _suggest(ctx)
    assert draft.action.startswith("Upgrade comic_text_detector, whose own code still uses")
    assert "`numpy.old_alias`" in draft.action


def test_a_documented_removal_used_inside_another_package_names_the_release() -> None:
    """numpy 1.24 removed ``np.int`` (release notes): the action pins numpy below 1.24."""
    message = "AttributeError: module 'numpy' has no attribute 'int'"
    frames = [
        _frame("/home/me/run.py"),
        _frame(_lib("comic_text_detector"), "xmin = box.astype(np.int)"),
        _frame("/opt/venv/lib/python3.10/site-packages/numpy/__init__.py", "raise AttributeError"),
    ]
    ctx = _ctx(message, (API, 0.9), frames=frames)
    draft = _suggest(ctx)
    assert draft.action.startswith("Downgrade numpy to < 1.24")
    assert "comic_text_detector" in draft.reason  # the other fix, as the alternative


def test_the_users_own_module_is_not_a_package() -> None:
    message = "AttributeError: module 'helpers' has no attribute 'load_all'"
    frames = [_frame("/home/me/train.py"), _frame("/home/me/helpers.py")]
    facts = read_premises(_ctx(message, (API, 0.9), frames=frames)).facts
    assert "module-name-missing" not in facts


@pytest.mark.parametrize("extension", ["torch_cluster", "my_ops"])
def test_an_undefined_symbol_names_the_extension_to_rebuild(extension: str) -> None:
    """A binary inside a package's folder names that package (a module file directly under
    site-packages does not: tests/unit/test_extension_and_import_facts.py)."""
    path = f"/env/lib/python3.10/site-packages/{extension}/_grid.so"
    message = f"ImportError: {path}: undefined symbol: _ZN3c104cuda9SetDeviceEi"
    ctx = _ctx(message, (ABI, 0.9))
    draft = _suggest(ctx)
    assert draft.action.startswith(f"Reinstall {extension} built against the torch")
    assert validate(draft, ctx).ok


def test_an_undefined_symbol_outside_site_packages_keeps_the_generic_step() -> None:
    message = "ImportError: /home/me/build/libops.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"
    draft = _suggest(_ctx(message, (ABI, 0.9)))
    assert "{" not in draft.action
    assert draft.action.startswith("Reinstall the extension built")
