"""A release-notes row that matches the incident: its step competes, and its direction binds.

Issue 16 (API-change rows): a row only reached an answer when the runbook with the
``{documented-change}`` step was among the runbooks lending steps, and a step moving "the
library" without naming it escaped the removal premise. Every case here is varied over other
packages, names and versions of the tables (metamorphic): nothing is keyed to one incident.
"""

from __future__ import annotations

import pytest

from rca.suggestion.cause_releases import incident_causes, moves_towards
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.providers.step_ranking import rank_steps
from rca.suggestion.suggest import write_suggestion
from rca.suggestion.validation import validate
from tests.support.evidence import draft, incident_context
from tests.support.scripted_llm import scripted_llm

#: (message, installed-version log line, action the row's step gives) over several tables.
ROWS = [
    (
        "AttributeError: 'Sequential' object has no attribute 'predict_classes'",
        "tensorflow==2.9.1",
        "Downgrade tensorflow to < 2.6",
    ),
    (
        "AttributeError: module 'numpy' has no attribute 'float'",
        "numpy==1.26.4",
        "Downgrade numpy to < 1.24",
    ),
    (
        "ImportError: cannot import name 'cached_download' from 'huggingface_hub'",
        "huggingface_hub==0.27.0",
        "Downgrade huggingface_hub to < 0.26",
    ),
    (
        "AttributeError: module 'torch' has no attribute 'compile'",
        "torch==1.13.1",
        "Upgrade torch to >= 2.0",
    ),
]
#: A top runbook about another failure, and the version runbook far below it.
FAR = (("dataparallel-wrapped-module-attribute", 0.9), ("version-api-changed-signature", 0.45))


@pytest.mark.parametrize(("message", "log", "action"), ROWS)
def test_the_rows_step_competes_from_a_runbook_far_below_the_top(message, log, action):
    ctx = incident_context(message, *FAR, logs=[log])
    ranked = rank_steps(ctx)
    documented = [c for c in ranked if c.documented]
    assert documented and documented[0].action.startswith(action)
    assert documented[0].evidence.slug == "version-api-changed-signature"
    # Scored as a sibling runbook at worst (max_score_gap 0.25 below the top): 3 * 0.75.
    assert documented[0].parts["runbook"] == pytest.approx(2.25)
    draft_ = OfflineProvider().suggest(ctx)
    assert draft_.action.startswith(action) and draft_.runbook == "version-api-changed-signature"


@pytest.mark.parametrize(("message", "log", "action"), ROWS)
def test_no_row_no_new_candidate(message, log, action):
    """The same evidence without a row (a name no table has) lends only the top runbook."""
    name = message.rsplit("'", 2)[-2]
    ctx = incident_context(message.replace(name, "zz_not_in_any_table"), *FAR, logs=[log])
    assert all(c.evidence.slug != "version-api-changed-signature" for c in rank_steps(ctx))


@pytest.mark.parametrize(
    ("message", "ranked"),
    [
        # The lending runbook names the removed module: its own fix comes first.
        (
            "ModuleNotFoundError: No module named 'torch._six'",
            (("torch-private-module-removed", 0.9), ("version-api-changed-signature", 0.5)),
        ),
        (
            "ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'",
            (("torch-private-module-removed", 0.9), ("version-api-changed-signature", 0.4)),
        ),
        # A step written for another package ("Pin `jax` and `jaxlib`") is not a TF row's.
        (
            "AttributeError: 'Sequential' object has no attribute 'predict_classes'",
            (
                ("dataparallel-wrapped-module-attribute", 0.9),
                ("jax-ecosystem-library-version-pairing", 0.5),
            ),
        ),
    ],
)
def test_no_row_step_joins_when_covered_or_about_another_package(message, ranked):
    ctx = incident_context(message, *ranked)
    lent = {ranked[0][0]}
    assert {c.evidence.slug for c in rank_steps(ctx)} <= lent


# --------------------------------------------------------------------------- premise


@pytest.mark.parametrize(
    ("message", "log", "bad", "good"),
    [
        (
            "ImportError: cannot import name 'TFAutoModel' from 'transformers'",
            "transformers==5.0.0",
            "Upgrade the library to the release that introduced the class.",
            "Downgrade the library to a release before the class was removed.",
        ),
        (
            "ImportError: cannot import name 'cached_download' from 'huggingface_hub'",
            "huggingface_hub==0.30.1",
            "Upgrade the library to its latest release.",
            "Downgrade the library below the release that removed it.",
        ),
        (
            "AttributeError: module 'torch' has no attribute 'compile'",
            "torch==1.12.0",
            "Downgrade the framework to an older release.",
            "Upgrade the framework to the release that added it.",
        ),
    ],
)
def test_an_unnamed_library_move_against_the_row_is_contradicted(message, log, bad, good):
    causes = incident_causes(message, [log])
    assert moves_towards(bad, causes) and not moves_towards(good, causes)
    ctx = incident_context(message, ("version-api-changed-signature", 0.9), logs=[log])
    premises = read_premises(ctx)
    assert not validate(draft(bad, "version-api-changed-signature"), ctx, premises).ok


@pytest.mark.parametrize(
    "action",
    [
        "Upgrade the library, or hold jax below the release.",  # another package named
        "Upgrade the package whose file imports the removed module.",  # the caller
        "Upgrade the library that accelerate calls.",
    ],
)
def test_an_unnamed_move_that_may_mean_another_package_is_not_the_rows(action):
    causes = incident_causes("AttributeError: module 'numpy' has no attribute 'float'", [])
    assert not moves_towards(action, causes)


def test_an_unnamed_move_needs_a_row_not_only_a_named_cause():
    """A cause the text names ("removed in foo 2.0") says nothing of which library "the
    library" is: only the release-notes row of the name the code uses does."""
    causes = incident_causes("foo.bar was removed in foo 2.0", [])
    assert causes and not moves_towards("Upgrade the library.", causes)


def test_the_offline_answer_for_a_v5_removed_class_is_not_the_upgrade():
    ctx = incident_context(
        "ImportError: cannot import name 'TFAutoModel' from 'transformers'",
        ("version-transformers-import-error", 0.9),
        ("version-api-changed-signature", 0.8),
        logs=["transformers==5.0.0"],
    )
    action = OfflineProvider().suggest(ctx).action
    assert not action.startswith("Upgrade the library")
    assert all(not c.action.startswith("Upgrade the library") for c in rank_steps(ctx))


def test_an_llm_answer_moving_the_library_against_the_row_is_reasked(httpserver):
    bad = {
        "action": "Upgrade the library to the release that introduced the class.",
        "reason": "New classes come with new releases.",
        "runbook": "version-transformers-import-error",
        "confidence": 0.8,
    }
    good = {
        "action": "Downgrade transformers to < 5.0, or use the PyTorch class (AutoModel).",
        "reason": "transformers 5.0 removed the TensorFlow classes.",
        "runbook": "version-transformers-import-error",
        "confidence": 0.8,
    }
    provider, requests = scripted_llm(httpserver, bad, good)
    ctx = incident_context(
        "ImportError: cannot import name 'TFAutoModel' from 'transformers'",
        ("version-transformers-import-error", 0.9),
        logs=["transformers==5.0.0"],
    )
    outcome = write_suggestion(ctx, provider)
    assert len(requests) == 2 and not outcome.attempts[0]["ok"]
    assert any("transformers" in c for c in outcome.attempts[0]["complaints"])
    assert outcome.draft.action == good["action"] and outcome.validation.ok
