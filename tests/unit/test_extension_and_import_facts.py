"""What an incident shows of a missing import's direction and of a broken extension's
package, and nothing more (issue 16).

``cannot import name 'X' from 'P'`` is fixed by upgrading P when X came in a later release
and by pinning P older (or updating the code that imports X) when a release removed it. The
suggestion follows the evidence the text holds: a line of the message or logs that names X
as removed or deprecated, or a release-notes row; without either, the step names both ways.
A compiled module directly under site-packages (``selective_scan_cuda....so``) is not a
pip package: it is named as a package only when a frame shows the package that owns it.
"""

from __future__ import annotations

from typing import Any

import pytest

from ingest.parsing.frames import make_frame
from rca.suggestion.api_drift import drift_values, read_drift
from rca.suggestion.context import AnalysisContext
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.validation import validate
from tests.support.evidence import evidence

NAMED = "version-named-package-mismatch"
ABI = "version-torch-abi-undefined-symbol"
SITE = "/opt/venv/lib/python3.10/site-packages"
IMPORT = "ImportError: cannot import name 'FooBar' from 'widgetlib'"


def _frame(path: str, line: str = "x = call()") -> Any:
    return make_frame(filename=path, function="f", lineno=1, context_line=line)


def _ctx(message: str, slug: str, frames: Any = (), logs: Any = ()) -> AnalysisContext:
    return AnalysisContext(
        error_type=message.split(":", 1)[0],
        message=message,
        logs=[{"message": line} for line in logs],
        frames=list(frames),
        evidence=evidence((slug, 0.9)),
    )


def _suggest(ctx: AnalysisContext) -> Draft:
    return OfflineProvider().suggest(ctx)


_IMPORTERS = {
    "user": [_frame("/home/me/app/train.py", "from widgetlib import FooBar")],
    "package": [
        _frame("/home/me/app/train.py", "import gadgetkit"),
        _frame(f"{SITE}/gadgetkit/core.py", "from widgetlib import FooBar"),
    ],
}


@pytest.mark.parametrize("importer", sorted(_IMPORTERS))
def test_without_removal_evidence_a_public_name_is_upgraded_to(importer: str) -> None:
    ctx = _ctx(IMPORT, NAMED, frames=_IMPORTERS[importer])
    assert "name-removed-by-release" not in read_premises(ctx).facts
    draft = _suggest(ctx)
    assert draft.action.startswith("Upgrade widgetlib to a release that has FooBar")
    # a third-party importer is the other way out, named as the aside
    assert ("downgrade gadgetkit" in draft.action) == (importer == "package")
    assert validate(draft, ctx).ok


@pytest.mark.parametrize(
    "log",
    [
        "FutureWarning: `FooBar` is deprecated; use `BazQux`.",
        "widgetlib: FooBar has been removed, use BazQux",
        "FooBar is no longer available in this release",
    ],
)
@pytest.mark.parametrize("importer", sorted(_IMPORTERS))
def test_a_line_naming_the_removal_turns_the_step_away_from_upgrading(
    log: str, importer: str
) -> None:
    ctx = _ctx(IMPORT, NAMED, frames=_IMPORTERS[importer], logs=[log])
    assert "name-removed-by-release" in read_premises(ctx).facts
    draft = _suggest(ctx)
    assert "release that has FooBar" not in draft.action, draft.action
    assert draft.action.startswith("Upgrade the package whose code imports FooBar from widgetlib")
    assert "pin widgetlib" in draft.action
    assert ("(gadgetkit)" in draft.action) == (importer == "package")
    assert validate(draft, ctx).ok
    # the upgrade an LLM might still write is refused by the same premise
    upgrade = Draft("Upgrade widgetlib to a release that has FooBar.", "r", NAMED, 0.5, "x", "x")
    assert not validate(upgrade, ctx).ok


def test_a_removal_with_its_release_moves_below_that_release() -> None:
    logs = ["widgetlib 3.1.0", "FooBar was removed in widgetlib 3.0"]
    draft = _suggest(_ctx(IMPORT, NAMED, frames=_IMPORTERS["user"], logs=logs))
    assert draft.action.startswith("Downgrade widgetlib to < 3.0")


@pytest.mark.parametrize(
    "log",
    [
        "UserWarning: the `verbose` argument is deprecated",  # another name's deprecation
        "FooBarBaz was removed in 2.0",  # a longer name that contains it
    ],
)
def test_a_removal_of_something_else_says_nothing_of_the_import(log: str) -> None:
    ctx = _ctx(IMPORT, NAMED, frames=_IMPORTERS["user"], logs=[log])
    assert "name-removed-by-release" not in read_premises(ctx).facts
    assert _suggest(ctx).action.startswith("Upgrade widgetlib to a release that has FooBar")


def test_release_notes_say_removed_for_an_import() -> None:
    message = "ImportError: cannot import name 'cached_download' from 'huggingface_hub'"
    drift = read_drift(message, [], [])
    assert drift.imported_name == "cached_download" and drift.removed


_SYMBOL = "undefined symbol: _ZN3c104cuda9SetDeviceEi"
_MODULE = f"{SITE}/selective_scan_cuda.cpython-310-x86_64-linux-gnu.so"


def test_a_module_file_without_its_package_is_named_as_a_module() -> None:
    message = f"ImportError: {_MODULE}: {_SYMBOL}"
    ctx = _ctx(message, ABI)
    assert "extension-symbol-missing" in read_premises(ctx).facts
    draft = _suggest(ctx)
    assert draft.action.startswith("Reinstall the package that ships `selective_scan_cuda` built")
    assert "Reinstall selective_scan_cuda" not in draft.action
    assert validate(draft, ctx).ok


@pytest.mark.parametrize(
    ("frame", "package"),
    [
        # the frame's package imports the module
        (_frame(f"{SITE}/mamba_ssm/ops/interface.py", "import selective_scan_cuda"), "mamba_ssm"),
        # the module's name starts with the frame's package
        (_frame(f"{SITE}/selective/ops.py", "from . import ops"), "selective"),
    ],
)
def test_a_frame_that_owns_the_module_names_its_package(frame: Any, package: str) -> None:
    message = f"ImportError: {_MODULE}: {_SYMBOL}"
    frames = [_frame("/home/me/run.py", "import model"), frame]
    ctx = _ctx(message, ABI, frames=frames)
    assert _suggest(ctx).action.startswith(f"Reinstall {package} built against the torch")


def test_a_frame_of_an_unrelated_package_is_not_the_owner() -> None:
    message = f"ImportError: {_MODULE}: {_SYMBOL}"
    frames = [_frame(f"{SITE}/transformers/modeling_utils.py", "import importlib")]
    values = drift_values(read_drift(message, frames, []))
    assert values["extension-package"] == "the package that ships `selective_scan_cuda`"
