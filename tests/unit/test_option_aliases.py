"""A framework's spelling of an option is the option (issue 16, review finding 7).

Hugging Face's Trainer passes ``ddp_find_unused_parameters`` on to DistributedDataParallel,
and Lightning's ``strategy="ddp_find_unused_parameters_true"`` turns the same switch on. When
PyTorch says "Since `find_unused_parameters=True` is enabled", an answer setting it in any of
these spellings, inside a strategy's constructor or in markdown bold, repeats what is done.
The aliases are data (``rca/knowledge/option-aliases.toml``), each with its public source.
"""

from __future__ import annotations

import pytest

from rca.suggestion.option_aliases import aliases, canonical
from rca.suggestion.step_options import option_key, options_set_by
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context

ALREADY_ON = (
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting"
    " a new one. This error indicates that your module has parameters that were not used in"
    " producing loss. Since `find_unused_parameters=True` is enabled, this likely  means that"
    " not all `forward` outputs participate in computing loss."
)
ADVISED = (
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting"
    " a new one. This error indicates that your module has parameters that were not used in"
    " producing loss. You can enable unused parameter detection by passing the keyword"
    " argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`."
)
SLUG = "ddp-unused-parameters"
SPELLINGS = [
    "Set `ddp_find_unused_parameters=True` in the `TrainingArguments`.",
    "Pass `--ddp_find_unused_parameters True` to the Trainer script.",
    "Use `strategy=DDPStrategy(find_unused_parameters=True)` in the Lightning Trainer.",
    'Use `strategy="ddp_find_unused_parameters_true"` in the Lightning Trainer.',
    "Enable **find_unused_parameters=True** when wrapping the model with DDP.",
]


def _premises_ok(message: str, action: str, logs: tuple[str, ...] = ()) -> bool:
    ctx = message_context(message, (SLUG, 0.9), logs=logs)
    return validate(draft(action, SLUG, "DDP waits for every parameter."), ctx).premises_ok


@pytest.mark.parametrize("action", SPELLINGS)
def test_any_spelling_of_the_option_already_on_is_a_repeat(action: str) -> None:
    assert not _premises_ok(ALREADY_ON, action)


@pytest.mark.parametrize("action", SPELLINGS)
def test_the_same_spellings_stay_right_when_the_message_only_advises_it(action: str) -> None:
    assert _premises_ok(ADVISED, action)


@pytest.mark.parametrize(
    "shown",
    [
        "$ python train.py --ddp_find_unused_parameters True --fp16",
        'trainer = Trainer(strategy="ddp_find_unused_parameters_true", devices=4)',
    ],
)
def test_an_alias_shown_set_makes_the_option_set(shown: str) -> None:
    action = "Pass `find_unused_parameters=True` to `DistributedDataParallel`."
    assert not _premises_ok(ADVISED, action, logs=(shown,))
    assert _premises_ok(ADVISED, action, logs=('trainer = Trainer(strategy="ddp", devices=4)',))


def test_an_alias_value_outside_its_table_is_no_setting_of_the_option() -> None:
    assert canonical("strategy", "ddp") == ("strategy", "ddp")
    assert canonical("strategy", "ddp_find_unused_parameters_false") == (
        "find_unused_parameters",
        "False",
    )
    found = options_set_by('Use `strategy="ddp_spawn"` in the Trainer.')
    assert [(o.key, o.value) for o in found] == [("strategy", "ddp_spawn")]


def test_every_alias_is_a_compared_name_with_a_public_source() -> None:
    assert aliases()
    for alias in aliases():
        assert alias.name == option_key(alias.name) and alias.option == option_key(alias.option)
        assert alias.source.startswith("https://")
