"""Accelerate's and Transformers' renamed arguments, from their own pages
(rca/knowledge/compatibility/api-changes/accelerate.toml, transformers.toml)."""

from __future__ import annotations

from rca.suggestion.api_changes import documented_change

REJECTED = "TypeError: {owner}.__init__() got an unexpected keyword argument '{name}'"


def test_accelerator_fp16_flag_removed_in_0_16_names_mixed_precision() -> None:
    message = "TypeError: __init__() got an unexpected keyword argument 'fp16'"
    change = documented_change(message, ["----> 4 accelerator = accelerate.Accelerator(fp16=True)"])
    assert change is not None
    assert (change.package, change.direction, change.target) == (
        "accelerate",
        "downgrade",
        "< 0.16",
    )
    assert 'mixed_precision="fp16"' in change.note
    # Another class's fp16 argument is not accelerate's row.
    other = "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'fp16'"
    assert documented_change(other, ["import accelerate"]) is None


def test_evaluation_strategy_removed_and_eval_strategy_added() -> None:
    removed = REJECTED.format(owner="TrainingArguments", name="evaluation_strategy")
    change = documented_change(removed, [])
    assert change is not None
    assert (change.package, change.direction, change.target) == (
        "transformers",
        "downgrade",
        "< 4.46",
    )
    assert "eval_strategy" in change.note
    added = REJECTED.format(owner="Seq2SeqTrainingArguments", name="eval_strategy")
    change = documented_change(added, ["transformers==4.38.2"])
    assert change is not None and (change.direction, change.target) == ("upgrade", ">= 4.41")


def test_an_install_older_than_the_removal_gives_nothing() -> None:
    # transformers 3.3.1 lacked evaluation_strategy because it predates it (no 4.46 removal).
    removed = REJECTED.format(owner="TrainingArguments", name="evaluation_strategy")
    assert documented_change(removed, ["transformers==3.3.1"]) is None


def test_huggingface_hub_1_0_removals_from_its_migration_guide() -> None:
    message = "ImportError: cannot import name 'HfFolder' from 'huggingface_hub'"
    change = documented_change(message, [])
    assert change is not None
    assert (change.package, change.direction, change.target) == (
        "huggingface_hub",
        "downgrade",
        "< 1.0",
    )
    assert "get_token" in change.note and "migration" in change.source
    rejected = "TypeError: hf_hub_download() got an unexpected keyword argument 'use_auth_token'"
    change = documented_change(rejected, [])
    assert change is not None and change.target == "< 1.0" and "token=" in change.note
    # A 0.x install shown in the incident contradicts the removal: nothing.
    assert documented_change(message, ["huggingface_hub==0.20.3"]) is None
