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
