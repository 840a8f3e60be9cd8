"""The failure class each page of a corpus folder was written for, as data for ``rca eval``.

A team's plain Markdown page has no front matter, so no ``failure_class``, and a case
(hit = a runbook of the case's class) could never hit it. A corpus folder may carry
``classes.json``, ``{"<slug>": "<failure class>", ...}``: the class of each such page, for
scoring only. Retrieval never sees it (the loader and ``runbooks import`` read ``*.md``
only), and a page's own ``failure_class`` wins: a label that contradicts it is an error,
as is a label for a slug the folder lacks or a class outside the taxonomy.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path

from rca.corpus.runbook import FAILURE_CLASSES, Runbook

__all__ = ["LABELS_FILE", "read_labels", "with_labels"]

LABELS_FILE = "classes.json"


def read_labels(directory: Path) -> dict[str, str]:
    """Slug -> failure class from ``directory/classes.json`` ({} when absent)."""
    path = directory / LABELS_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in data.items()
    ):
        raise ValueError(f"{path}: expected an object of slug -> failure class")
    unknown = sorted(v for v in data.values() if v not in FAILURE_CLASSES)
    if unknown:
        raise ValueError(f"{path}: unknown failure class {unknown[0]!r}")
    return dict(data)


def with_labels(runbooks: Iterable[Runbook], directory: Path) -> list[Runbook]:
    """``runbooks`` with the folder's labels filled in where a page names no class."""
    labels = read_labels(directory)
    out = []
    for rb in runbooks:
        label = labels.pop(rb.slug, None)
        if label is None or label == rb.failure_class:
            out.append(rb)
        elif rb.failure_class:
            raise ValueError(
                f"{directory / LABELS_FILE}: {rb.slug} is labelled {label!r} but its front "
                f"matter says {rb.failure_class!r}"
            )
        else:
            out.append(dataclasses.replace(rb, failure_class=label))
    if labels:
        raise ValueError(f"{directory / LABELS_FILE}: no page {sorted(labels)[0]!r}")
    return out
