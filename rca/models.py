"""The runbook corpus as stored: runbooks, their chunks (with embeddings) and the corpus version."""

from __future__ import annotations

from django.db import models
from pgvector.django import HnswIndex, VectorField

EMBEDDING_DIM = 384  # all-MiniLM-L6-v2


class Runbook(models.Model):
    slug = models.SlugField(max_length=120, unique=True)
    title = models.CharField(max_length=255)
    failure_class = models.CharField(max_length=64, db_index=True)
    frameworks = models.JSONField(default=list)
    signals = models.JSONField(default=list)
    tags = models.JSONField(default=list)
    body = models.TextField()
    checksum = models.CharField(max_length=64)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.slug


class RunbookChunk(models.Model):
    """A heading-aware piece of a runbook; the unit of BM25 and vector retrieval."""

    runbook = models.ForeignKey(Runbook, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveIntegerField()
    section = models.CharField(max_length=120)
    text = models.TextField()
    # Filled by a worker (the web process never loads the model); null until then.
    embedding = VectorField(dimensions=EMBEDDING_DIM, null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["runbook", "ordinal"], name="chunk_ordinal")]
        indexes = [
            HnswIndex(
                name="chunk_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            )
        ]

    def __str__(self) -> str:
        return f"{self.runbook_id}#{self.ordinal}"


class CorpusState(models.Model):
    """Singleton: the version of the stored corpus; workers rebuild BM25 when it changes."""

    version = models.CharField(max_length=64)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.version[:12]
