"""The on-disk embedding cache: a vector comes back only for the same model and exact text,
and a damaged entry is a miss (recomputed), never a wrong vector."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rca.corpus.embedding_cache import EmbeddingCache, cache_dir

DIM = 8


def unit(seed: int) -> list[float]:
    vector = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return (vector / np.linalg.norm(vector)).tolist()


@pytest.fixture
def cache(tmp_path: Path) -> EmbeddingCache:
    return EmbeddingCache(tmp_path, "sentence-transformers/all-MiniLM-L6-v2", DIM)


def entry(cache: EmbeddingCache, text: str) -> Path:
    [path] = cache.directory.glob(f"*/{cache.key(text)}.npy")
    return path


def test_a_stored_vector_comes_back_exactly_for_the_same_text(cache):
    vector = unit(1)
    cache.put("CUDA error: device-side assert triggered", vector)
    assert cache.get("CUDA error: device-side assert triggered") == vector
    assert cache.get_many(["CUDA error: device-side assert triggered", "other"]) == {
        "CUDA error: device-side assert triggered": vector
    }


def test_other_text_even_by_whitespace_is_a_miss(cache):
    cache.put("shape mismatch", unit(1))
    assert cache.get("shape mismatch ") is None
    assert cache.get("never stored") is None


def test_another_model_or_dimension_does_not_see_the_vector(cache, tmp_path):
    cache.put("shape mismatch", unit(1))
    assert (
        EmbeddingCache(tmp_path, "/models/my-finetuned-minilm", DIM).get("shape mismatch") is None
    )
    assert EmbeddingCache(tmp_path, cache.model, 2 * DIM).get("shape mismatch") is None


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.write_bytes(path.read_bytes()[:-5]),  # torn write
        lambda path: path.write_bytes(b""),  # crash before the data reached the disk
        lambda path: path.write_bytes(b"not a numpy file at all"),
        lambda path: np.save(path, np.ones(DIM // 2, dtype=np.float32) / np.sqrt(DIM / 2)),
        lambda path: np.save(path, np.full(DIM, 3.0, dtype=np.float32)),  # not unit length
        lambda path: np.save(path, np.full(DIM, np.nan, dtype=np.float32)),
        lambda path: np.save(path, np.asarray(unit(1), dtype=np.float64)),
    ],
    ids=["truncated", "empty", "garbage", "wrong-dimension", "not-normalised", "nan", "float64"],
)
def test_a_damaged_entry_is_a_miss_and_a_new_put_repairs_it(cache, damage):
    cache.put("shape mismatch", unit(1))
    damage(entry(cache, "shape mismatch"))
    assert cache.get("shape mismatch") is None
    cache.put("shape mismatch", unit(2))
    assert cache.get("shape mismatch") == unit(2)


def test_a_vector_of_the_wrong_shape_is_not_stored(cache):
    cache.put("shape mismatch", [1.0])
    assert cache.get("shape mismatch") is None
    assert list(cache.directory.rglob("*.npy")) == []


def test_writes_leave_no_temporary_files(cache):
    cache.put_many((f"text {i}", unit(i)) for i in range(20))
    assert len(list(cache.directory.rglob("*.npy"))) == 20
    assert list(cache.directory.rglob("*.tmp")) == []


def test_an_unwritable_directory_only_disables_caching(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache directory should be")
    cache = EmbeddingCache(blocker, "m", DIM)
    cache.put("shape mismatch", unit(1))  # no exception: embedding goes on without it
    assert cache.get("shape mismatch") is None


def test_the_directory_follows_the_setting_and_off_disables_it(settings, monkeypatch, tmp_path):
    settings.RCA_EMBEDDING_CACHE = str(tmp_path / "vectors")
    assert cache_dir() == tmp_path / "vectors"
    settings.RCA_EMBEDDING_CACHE = "off"
    assert cache_dir() is None
    settings.RCA_EMBEDDING_CACHE = ""
    monkeypatch.delenv("RCA_EMBEDDING_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "rootcause" / "embeddings"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "rootcause" / "embeddings"
