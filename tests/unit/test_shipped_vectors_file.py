"""The shipped-vectors file answers only for the exact model and texts it was made with,
and never serves a vector that is not unit length and finite."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rca.corpus.shipped_vectors import lookup, write

DIM = 4


def unit(*values: float) -> list[float]:
    vector = np.asarray(values, dtype=np.float32)
    return (vector / np.linalg.norm(vector)).tolist()


def test_vectors_come_back_for_their_texts_and_model(tmp_path) -> None:
    path = tmp_path / "v.npz"
    write([("alpha", unit(1, 0, 0, 0)), ("beta", unit(1, 1, 0, 0))], "model-a", path)
    found = lookup(["beta", "gamma", "alpha"], "model-a", DIM, path)
    assert set(found) == {"alpha", "beta"}
    assert np.allclose(found["beta"], unit(1, 1, 0, 0))


def test_another_model_or_dimension_gets_nothing(tmp_path) -> None:
    path = tmp_path / "v.npz"
    write([("alpha", unit(1, 0, 0, 0))], "model-a", path)
    assert lookup(["alpha"], "model-a ", DIM, path) == {}
    assert lookup(["alpha"], "model-b", DIM, path) == {}
    assert lookup(["alpha"], "model-a", DIM + 1, path) == {}


def test_a_bad_vector_or_file_is_a_miss(tmp_path) -> None:
    path = tmp_path / "v.npz"
    keys = np.zeros((1, 32), np.uint8)
    np.savez(path, model=np.array("m"), keys=keys, vectors=np.ones((1, DIM), np.float32))
    assert lookup(["x"], "m", DIM, path) == {}  # not unit length (and another text)
    (tmp_path / "garbage.npz").write_bytes(b"not a zip")
    assert lookup(["x"], "m", DIM, tmp_path / "garbage.npz") == {}
    assert lookup(["x"], "m", DIM, tmp_path / "absent.npz") == {}


@given(st.lists(st.text(max_size=40), min_size=1, max_size=8, unique=True))
def test_any_texts_round_trip(tmp_path_factory, texts: list[str]) -> None:
    path = tmp_path_factory.mktemp("v") / "v.npz"
    vectors = [unit(i + 1, 1, 2, 3) for i in range(len(texts))]
    assert write(zip(texts, vectors, strict=True), "m", path) == len(texts)
    found = lookup(texts, "m", DIM, path)
    assert [np.allclose(found[t], v) for t, v in zip(texts, vectors, strict=True)] == [True] * len(
        texts
    )
