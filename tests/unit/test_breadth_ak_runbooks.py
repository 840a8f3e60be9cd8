"""Failure kinds of the eighth breadth batch (eval/realworld/cases-ak.jsonl) route to the steps
written for them from their libraries' documentation (issue 16).

cases-ak found that the corpus already had a runbook for almost every kind; one kind lacked its
step: PEFT releases before 0.8.0 read `target_modules="all-linear"` as the name of one module
and report it as not found, where upgrading peft (or listing the names) is the fix, not
renaming LLaMA's projections. The wordings are PEFT's own message as other scripts print it;
the step that renames LLaMA's projections still answers the messages that name them. Each is
sent as a bare incident through lexical retrieval and the offline provider: the runbook comes
first and its action names the documented fix. The PEFT message of another kind (a module
type LoRA cannot wrap) must not match the runbook's signals.
"""

from __future__ import annotations

from tests.support.vendor_checks import Wording, batch_tests

WORDINGS: tuple[Wording, ...] = (
    Wording(
        "peft-target-modules-not-found",
        "ValueError",
        "ValueError: Target modules all-linear not found in the base model. Please check the"
        " target modules and try again.",
        ("Upgrade peft",),
    ),
    Wording(
        "peft-target-modules-not-found",
        "ValueError",
        '  File "/opt/conda/lib/python3.10/site-packages/peft/tuners/lora/model.py", line 111,'
        " in __init__\nValueError: Target modules all-linear not found in the base model."
        " Please check the target modules and try again.",
        ("Upgrade peft",),
    ),
    Wording(
        "peft-target-modules-not-found",
        "ValueError",
        "ValueError: Target modules {'k_proj', 'o_proj', 'q_proj', 'v_proj'} not found in the"
        " base model. Please check the target modules and try again.",
        # no printed model: the layout is not shown, so no fused name is guessed
        ("target_modules", "own attention projections"),
    ),
)

#: slug -> errors of other kinds that the runbook's signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "peft-target-modules-not-found": (
        "ValueError: Target module Dropout(p=0.1, inplace=False) is not supported. Currently,"
        " only the following modules are supported: `torch.nn.Linear`, `torch.nn.Embedding`,"
        " `torch.nn.Conv2d`, `transformers.pytorch_utils.Conv1D`.",
    ),
}


(
    test_the_library_message_routes_to_its_documented_fix,
    test_errors_of_other_kinds_do_not_match_the_new_signals,
    test_each_runbook_cites_public_sources_and_has_signals,
) = batch_tests(WORDINGS, LOOK_ALIKES)
