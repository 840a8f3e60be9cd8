"""YAML mappings of runbook text (front matter, step metadata), parsed by libyaml.

PyYAML's pure-Python SafeLoader was half the time of loading the bundled corpus (~3 s of
~6 s for 318 runbooks, 1,090 small documents) on every `runbooks load`, i.e. every start of
a fresh instance. The C loader builds the same safe types; PyYAML without libyaml
falls back to the Python one.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["YAMLError", "load_yaml"]

YAMLError = yaml.YAMLError
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``: plain data only, no tags that build objects."""
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader, C or Python
