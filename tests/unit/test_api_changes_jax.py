"""JAX's removed APIs, from its release notes (rca/knowledge/compatibility/api-changes/jax.toml)."""

from __future__ import annotations

import pytest

from rca.suggestion.api_changes import documented_change


@pytest.mark.parametrize(
    ("message", "target", "page"),
    [
        ("AttributeError: module 'jax' has no attribute 'tree_multimap'", "< 0.3.16", "v0.3.16"),
        (
            "AttributeError: module 'jax.tree_util' has no attribute 'tree_multimap'",
            "< 0.3.16",
            "v0.3.16",
        ),
        ("ImportError: cannot import name 'stax' from 'jax.experimental'", "< 0.3.16", "v0.3.16"),
        ("AttributeError: module 'jax.ops' has no attribute 'index_update'", "< 0.3.2", "page=9"),
        ("AttributeError: module 'jax' has no attribute 'partial'", "< 0.2.21", "v0.2.21"),
        ("AttributeError: module 'jax' has no attribute 'soft_pmap'", "< 0.3.18", "v0.3.18"),
        ("ImportError: cannot import name 'xmap' from 'jax.experimental.maps'", "< 0.4.31", "632"),
        (
            "AttributeError: module 'jax.numpy' has no attribute 'DeviceArray'",
            "< 0.4.14",
            "CHANGELOG",
        ),
        (
            "AttributeError: module 'jax.random' has no attribute 'KeyArray'",
            "< 0.4.24",
            "CHANGELOG",
        ),
        ("AttributeError: module 'jax' has no attribute 'tree_map'", "< 0.6.0", "CHANGELOG"),
        ("AttributeError: module 'jax.core' has no attribute 'Primitive'", "< 0.6.0", "CHANGELOG"),
        (
            "AttributeError: 'Config' object has no attribute 'jax_experimental_name_stack'",
            "< 0.3.25",
            "CHANGELOG",
        ),
    ],
)
def test_removed_jax_names_get_the_release_and_cite_the_page_that_states_it(
    message: str, target: str, page: str
) -> None:
    change = documented_change(message, [])
    assert change is not None
    assert (change.package, change.direction, change.target) == ("jax", "downgrade", target)
    assert change.source.startswith("https://") and page in change.source


def test_the_replacement_is_named_and_an_install_before_the_removal_gives_nothing() -> None:
    change = documented_change("AttributeError: module 'jax' has no attribute 'tree_multimap'", [])
    assert change is not None and "jax.tree_util.tree_map" in change.note
    message = "AttributeError: module 'jax' has no attribute 'tree_multimap'"
    assert documented_change(message, ["jax==0.3.4"]) is None


def test_names_other_packages_own_are_not_jax_rows() -> None:
    assert documented_change("AttributeError: module 'torch' has no attribute 'mask'", []) is None


def test_jax_array_is_an_addition_so_its_absence_asks_for_the_upgrade() -> None:
    change = documented_change("AttributeError: module 'jax' has no attribute 'Array'", [])
    assert change is not None
    assert (change.direction, change.target) == ("upgrade", ">= 0.4.1")
    assert "jax-v0.4.1" in change.source
    assert (
        documented_change("AttributeError: module 'jax' has no attribute 'Array'", ["jax==0.4.13"])
        is None
    )


def test_a_jax_core_name_later_releases_added_is_not_read_as_removed() -> None:
    # CallPrimitive was missing from old jax (upgrade) and removed again in 0.11: no row.
    message = "AttributeError: module 'jax.core' has no attribute 'CallPrimitive'"
    assert documented_change(message, []) is None
