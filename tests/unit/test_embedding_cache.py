"""The on-disk embedding cache: a vector comes back only for the same model and exact text,
and a damaged entry is a miss (recomputed), never a wrong vector."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
import pytest

from rca.corpus.embedding_backends import fingerprint
from rca.corpus.embedding_cache import EmbeddingCache, cache_dir
from rca.corpus.embeddings import cache_model_id

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


def test_entries_beyond_the_bound_go_least_recently_used_first(tmp_path):
    cache = EmbeddingCache(tmp_path, "m", DIM, max_entries=3)
    for i in range(5):
        cache.put(f"text {i}", unit(i))
        os.utime(entry(cache, f"text {i}"), ns=(10**18 + i * 10**9,) * 2)
    assert cache.get("text 0") == unit(0)  # read: now the most recently used
    assert cache.prune() == 2
    assert [t for t in (f"text {i}" for i in range(5)) if cache.get(t)] == [
        "text 0",
        "text 3",
        "text 4",
    ]
    assert cache.prune() == 0


def test_a_crashed_writers_old_temporary_file_is_removed(cache):
    cache.put("shape mismatch", unit(1))
    stray = entry(cache, "shape mismatch").with_suffix(".tmp")
    stray.write_bytes(b"half a vector")
    fresh = stray.with_name("another.tmp")
    fresh.write_bytes(b"being written now")
    os.utime(stray, (0, 0))
    assert cache.prune() == 1
    assert not stray.exists() and fresh.exists()
    assert cache.get("shape mismatch") == unit(1)


def test_a_second_filler_waits_until_the_first_has_stored_its_vectors(tmp_path):
    """Two processes (here threads, each with its own lock handle) missing the same text:
    the second takes the fill lock only after the first released it, and then finds the
    vector instead of embedding it again."""
    first = EmbeddingCache(tmp_path, "m", DIM)
    second = EmbeddingCache(tmp_path, "m", DIM)
    events: list[str] = []
    holding = threading.Event()

    def other_process() -> None:
        holding.wait()
        with second.filling():
            events.append("second filling")
            events.append("found" if second.get("text") == unit(1) else "missed")

    thread = threading.Thread(target=other_process)
    thread.start()
    with first.filling():
        holding.set()
        thread.join(timeout=0.5)
        assert thread.is_alive()  # waiting on the lock
        first.put("text", unit(1))
        events.append("first stored")
    thread.join(timeout=10)
    assert events == ["first stored", "second filling", "found"]


def test_another_models_fill_does_not_wait(tmp_path):
    with EmbeddingCache(tmp_path, "m", DIM).filling():
        done = threading.Event()

        def other_model() -> None:
            with EmbeddingCache(tmp_path, "other", DIM).filling():
                done.set()

        threading.Thread(target=other_model).start()
        assert done.wait(timeout=10)


def test_the_cache_key_changes_with_the_weights_of_a_model_directory(tmp_path):
    model = tmp_path / "my-minilm"
    model.mkdir()
    (model / "config.json").write_text('{"hidden_size": 384}')
    (model / "model.safetensors").write_bytes(b"weights after epoch 1")
    before = fingerprint(str(model), "")
    assert fingerprint(str(model), "") == before
    (model / "model.safetensors").write_bytes(b"weights after epoch 2")  # same size
    assert fingerprint(str(model), "") != before
    assert fingerprint("", str(model)) == fingerprint(str(model), "")


def test_the_configured_model_and_its_weights_key_the_worker_cache(settings, tmp_path):
    settings.RCA_EMBEDDING_MODEL = ""
    bundled = cache_model_id()
    assert bundled.startswith("sentence-transformers/all-MiniLM-L6-v2#sha256:")
    settings.RCA_EMBEDDING_MODEL = str(tmp_path)
    assert cache_model_id() != bundled and cache_model_id().startswith(f"{tmp_path}#")
