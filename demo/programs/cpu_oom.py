"""Full attention over an 8k-token batch on the CPU: the score matrix needs 32 GiB.

The process runs under an address-space limit (RLIMIT_AS, the way a container's memory
limit bounds a service), so the allocation fails at once in torch's own CPU allocator
(`DefaultCPUAllocator: can't allocate memory`, a RuntimeError) instead of swapping. Only
the CUDA, MPS and XPU allocators raise torch.OutOfMemoryError; on a CPU this is the error.
"""

import resource

import torch

BATCH, HEADS, TOKENS, HEAD_DIM = 8, 16, 8192, 64
HEADROOM = 2 * 2**30  # bytes the process may still map: the inputs fit, the scores do not

REPORT = {
    "service": "long-context",
    "inference_context": {
        "model_id": "doc-qa-8k",
        "batch_size": BATCH,
        "seq_len": TOKENS,
        "device": "cpu",
    },
}


def _mapped_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


def attention_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return q @ k.transpose(-1, -2) / HEAD_DIM**0.5


def main() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _mapped_bytes() + HEADROOM
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        q = torch.randn(BATCH, HEADS, TOKENS, HEAD_DIM)
        attention_scores(q, q)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
