"""Removed submodules and classes named by pattern in the release-notes tables (issue 16).

``No module named 'torch._six'`` is a submodule a release removed (downgrade below it or port),
``No module named 'numpy._core'`` one an older NumPy lacks (upgrade); a bare ``No module named
'keras'`` is a package that is not installed and says nothing of a release. Rows may name the
classes they belong to by pattern (``*Config``: transformers 5 took ``rope_theta`` off every
config class); a row for any callee (``*``) needs the texts to name the package.
"""

from __future__ import annotations

import pytest

from rca.suggestion import api_changes
from rca.suggestion.api_changes import Change, documented_change, load_changes
from rca.suggestion.validation import MAX_ACTION_CHARS

_FRAME = 'File "/env/lib/python3.11/site-packages/transformers/modeling_utils.py", line 3'


@pytest.mark.parametrize(
    ("message", "texts", "package", "direction", "target"),
    [
        ("ModuleNotFoundError: No module named 'torch._six'", [], "torch", "downgrade", "< 2.0"),
        ("No module named torch._six", [], "torch", "downgrade", "< 2.0"),
        (
            "ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'",
            [],
            "torchvision",
            "downgrade",
            "< 0.17",
        ),
        ("ModuleNotFoundError: No module named 'numpy._core'", [], "numpy", "upgrade", ">= 1.26"),
        # A module below a removed one is gone with it.
        (
            "ModuleNotFoundError: No module named 'numpy.linalg.linalg.lapack_lite'",
            [],
            "numpy",
            "downgrade",
            "< 2.4",
        ),
    ],
)
def test_a_missing_submodule_gives_the_release_that_removed_or_added_it(
    message: str, texts: list[str], package: str, direction: str, target: str
) -> None:
    change = documented_change(message, texts)
    assert change is not None
    assert (change.package, change.direction, change.target) == (package, direction, target)
    assert "(a module)" in change.note


def test_a_missing_package_or_an_unlisted_submodule_gives_nothing() -> None:
    assert documented_change("ModuleNotFoundError: No module named 'keras'", []) is None
    assert documented_change("No module named 'torch.distributed.elastic'", []) is None
    # torch 1.13 shown installed: torch 2.0's removal is not the cause.
    assert documented_change("No module named 'torch._six'", ["torch==1.13.1"]) is None
    # numpy 1.26 shown installed already has numpy._core.
    assert documented_change("No module named 'numpy._core'", ["numpy==1.26.4"]) is None


def test_a_class_matched_by_pattern_gives_the_rows_release() -> None:
    message = "AttributeError: 'LlamaConfig' object has no attribute 'rope_theta'"
    change = documented_change(message, [])
    assert change is not None
    assert (change.package, change.direction) == ("transformers", "downgrade")
    assert change.target == "< 5.0" and "rope_parameters" in change.note
    assert documented_change(message, ["transformers==4.44.2"]) is None  # not the cause
    other = "AttributeError: 'LlamaModel' object has no attribute 'rope_theta'"
    assert documented_change(other, []) is None  # not a config class


def test_a_row_for_any_callee_needs_the_package_named() -> None:
    row = Change(
        "transformers",
        ("transformers",),
        "argument",
        frozenset({"use_auth_token"}),
        frozenset({"*"}),
        (),
        (5, 0),
        "token=",
        "",
    )
    use = api_changes._Use("argument", "use_auth_token", owner="Anything")
    assert api_changes._matches(row, use, {"transformers"})
    assert not api_changes._matches(row, use, {"sentence_transformers"})


def test_an_argument_any_loader_class_rejects_is_read_through_its_pattern() -> None:
    rejected = "() got an unexpected keyword argument 'use_auth_token'"
    change = documented_change(f"TypeError: LlamaForCausalLM.__init__{rejected}", [])
    assert change is not None and change.target == "< 5.0" and "token=" in change.note
    assert documented_change(f"TypeError: SentenceTransformer.__init__{rejected}", [_FRAME]) is None


def test_an_exact_owner_matches_without_the_package_named() -> None:
    change = documented_change(
        "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'no_cuda'", []
    )
    assert change is not None and (change.package, change.target) == ("transformers", "< 5.0")
    assert "use_cpu=" in change.note
    ndarray = documented_change("AttributeError: 'numpy.ndarray' object has no attribute 'ptp'", [])
    assert ndarray is not None and (ndarray.package, ndarray.target) == ("numpy", "< 2.0")


def test_a_name_pattern_matches_the_names_it_covers_only() -> None:
    message = "ImportError: cannot import name '{}' from 'transformers'"
    change = documented_change(message.format("TFAutoModel"), [])
    assert change is not None and change.target == "< 5.0"
    assert documented_change(message.format("AutoModel"), []) is None


@pytest.mark.parametrize(
    ("pattern", "value", "fits"),
    [
        ("*Config", "LlamaConfig", True),
        ("*Config", "Config", False),
        ("TF*", "TFAutoModel", True),
        ("TF*", "TF", False),
        ("*", "anything", True),
        ("*", "", False),
        ("ndarray", "ndarray", True),
        ("ndarray", "ndarrays", False),
    ],
)
def test_patterns_match_by_prefix_or_suffix_only(pattern: str, value: str, fits: bool) -> None:
    assert api_changes._fits(pattern, value) is fits


def test_a_module_row_needs_the_module_to_be_the_packages() -> None:
    names = frozenset({"torch._six"})
    row = Change("torch", ("torch",), "module", names, frozenset(), (), (2, 0), "", "")
    use = api_changes._Use("module", "torch._six", module="torch")
    assert api_changes._matches(row, use, set())
    elsewhere = api_changes._Use("module", "mylib.torch._six", module="mylib")
    assert not api_changes._matches(row, elsewhere, set())


def test_the_submodule_pattern_is_linear_on_long_lines() -> None:
    line = "No module named '" + "a." * 5000 + "'"
    assert api_changes._NO_SUBMODULE.search(line) is not None


def test_every_row_fits_the_action_it_is_written_into() -> None:
    """The version steps put the note in an aside ("Downgrade numpy to < 2.0 and pin it in the
    requirements (<note>)."), and an action over the limit loses its asides: a replacement
    too long to fit would never be shown."""
    for row in load_changes():
        release = ".".join(str(p) for p in (row.removed or row.added))
        kind = {"argument": " (an argument)", "module": " (a module)"}.get(row.kind, "")
        for name in row.names:
            if row.removed:
                port = f"; use {row.replacement} instead" if row.replacement else ""
                note = f"{row.package} {release} removed `{name}`{kind}{port}"
                action = f"Downgrade {row.package} to < {release} and pin it in the requirements"
            else:
                note = f"{row.package} {release} added `{name}`{kind}"
                action = f"Upgrade {row.package} to >= {release}"
            assert len(f"{action} ({note}).") <= MAX_ACTION_CHARS, (row.package, name)
