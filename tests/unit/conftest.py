"""Fixtures shared by the unit tests of more than one module."""

from __future__ import annotations

import pytest

from rca.corpus.files import Runbook, bundled_runbook_dir, load_directory


@pytest.fixture(scope="module")
def runbooks() -> list[Runbook]:
    """The bundled runbooks, parsed once per test module."""
    return load_directory(bundled_runbook_dir())
