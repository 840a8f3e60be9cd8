"""A fine-tuned checkpoint whose vocabulary grew by four added tokens, loaded into the
base model's architecture (the embedding was never resized to match)."""

import io

import torch
from torch import nn

BASE_VOCAB, ADDED_TOKENS, DIM = 32000, 4, 32

REPORT = {
    "service": "chat",
    "inference_context": {"model_id": "chat-ft-0412", "device": "cpu"},
    "shape_diff": [
        {
            "tensor": "embed.weight",
            "op": "load_state_dict",
            "expected": [BASE_VOCAB, DIM],
            "actual": [BASE_VOCAB + ADDED_TOKENS, DIM],
        }
    ],
}


class TinyLM(nn.Module):
    def __init__(self, vocab: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, DIM)
        self.out = nn.Linear(DIM, 2)


def fine_tuned_checkpoint() -> io.BytesIO:
    buffer = io.BytesIO()
    torch.save(TinyLM(BASE_VOCAB + ADDED_TOKENS).state_dict(), buffer)
    buffer.seek(0)
    return buffer


def main() -> None:
    model = TinyLM(BASE_VOCAB)
    state = torch.load(fine_tuned_checkpoint(), weights_only=True)
    model.load_state_dict(state)
