"""Enable pgvector: runbook chunks and incidents store embeddings (rca)."""

from django.db import migrations
from pgvector.django import VectorExtension


class Migration(migrations.Migration):
    dependencies = [("webapp", "0001_initial")]
    operations = [VectorExtension()]
