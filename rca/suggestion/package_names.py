"""What counts as a package's name in an answer or a message: the pip name an import alias or
display name stands for (``np`` is numpy), and the words a package slot may catch that name
no package. Both the prose reading (:mod:`.package_moves`) and the command reading
(:mod:`.command_moves`) use it, so neither imports the other for it.
"""

from __future__ import annotations

__all__ = ["NOT_PACKAGES", "package_name"]

#: Import aliases and display names that are not pip names.
_ALIASES = {
    "pytorch": "torch",
    "np": "numpy",
    "tf": "tensorflow",
    "pd": "pandas",
    "jnp": "jax",
    "pil": "pillow",
    "sklearn": "scikit-learn",
}
#: Words a package slot may catch that name no package.
_NON_PACKAGE_WORDS = (
    "a an the it its this that your version versions release releases package "
    "packages library libraries is are was be to in of and or with using latest newer "
    "older new old previous requirements requirement environment one module code any "
    "all"
)
NOT_PACKAGES = frozenset(_NON_PACKAGE_WORDS.split())


def package_name(name: str) -> str:
    """The pip name a package slot of a message or action spells (``np`` is numpy)."""
    name = name.strip("`'\"*").lower().replace("_", "-")
    return _ALIASES.get(name, name)
