"""Build data the way users do: through our own functions and API."""

from __future__ import annotations

from dataclasses import dataclass

from ingest.keys import create_key
from ingest.models import Project


@dataclass
class ProjectWithKey:
    project: Project
    key: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


def project_with_key(slug: str = "ml-platform") -> ProjectWithKey:
    project = Project.objects.create(name=slug.title(), slug=slug)
    _, key = create_key(project)
    return ProjectWithKey(project, key)


def shape_error(batch: int, in_features: int = 256, weight_in: int = 512) -> dict:
    """A real PyTorch linear-layer error, as a service would report it."""
    message = (
        f"mat1 and mat2 shapes cannot be multiplied ({batch}x{in_features} and {weight_in}x10)"
    )
    return {
        "service": "ranker",
        "environment": "prod",
        "error_type": "RuntimeError",
        "message": message,
        "stacktrace": (
            "Traceback (most recent call last):\n"
            '  File "/srv/ranker/serve.py", line 88, in predict\n'
            "    scores = self.model(batch)\n"
            '  File "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1751, '
            "in _call_impl\n"
            "    return forward_call(*args, **kwargs)\n"
            '  File "/srv/ranker/model.py", line 41, in forward\n'
            "    return self.head(x)\n"
            '  File "/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 125, '
            "in forward\n"
            "    return F.linear(input, self.weight, self.bias)\n"
            f"RuntimeError: {message}"
        ),
        "inference_context": {"model_id": "ranker-v3", "batch_size": batch, "device": "cuda:0"},
    }
