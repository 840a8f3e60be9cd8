"""A suggestion never moves a package towards the release the incident names as the cause.

Wordings are generic kinds of line (rca/suggestion/cause_releases.py); the cases below are
written for these tests, in the shapes real messages take, not copied from the eval set.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.cause_releases import (
    away_from,
    incident_causes,
    moves,
    moves_towards,
    named_causes,
)
from rca.suggestion.premises import read_premises
from rca.suggestion.providers import Draft, OfflineProvider
from rca.suggestion.suggest import write_suggestion
from rca.suggestion.validation import validate
from rca.suggestion.version_pairs import version_change, version_facts
from tests.support.evidence import message_context
from tests.support.scripted_llm import scripted_llm


def _causes(text: str):
    return named_causes([text])


@pytest.mark.parametrize(
    ("line", "package", "release", "side"),
    [
        ("AttributeError: foo.core.thing was removed in Foo v1.6.0.", "foo", (1, 6, 0), "from"),
        ("np.NaN was removed in the NumPy 2.0 release.", "numpy", (2, 0), "from"),
        (
            "The bar.sub.mod module is deprecated in 0.3 and will be removed in 0.5.",
            "bar",
            (0, 5),
            "from",
        ),
        ("this is broken since numpy 2.0", "numpy", (2, 0), "from"),
        ("a regression introduced in transformers 4.40", "transformers", (4, 40), "from"),
        ("the extension is incompatible with torch>=2.3", "torch", (2, 3), "from"),
        ("plugin is not compatible with numpy > 1.26", "numpy", (1, 27), "from"),
        ("this module requires protobuf<4", "protobuf", (4,), "from"),
        ("this module requires protobuf<=3.20", "protobuf", (3, 21), "from"),
        (
            "Disabling PyTorch because PyTorch >= 2.1 is required but found 2.0.1",
            "torch",
            (2, 1),
            "below",
        ),
        ("`x.legacy` is not supported in Keras 3.", "keras", (3,), "from"),
        (
            "installed version of Keras is Keras 3, but this is not yet supported",
            "keras",
            (3,),
            "from",
        ),
        ("downgrade to 'numpy<2' or try to upgrade the affected module", "numpy", (2,), "from"),
        ("Downgrade the protobuf package to 3.20.x or lower.", "protobuf", (3, 21), "from"),
    ],
)
def test_a_named_cause_is_read_with_its_bad_side(line, package, release, side):
    causes = _causes(line)
    assert (causes[0].package, causes[0].release, causes[0].side) == (package, release, side)


def test_a_supported_range_names_both_ends():
    causes = _causes(
        "Addons supports Foolib versions above or equal to 2.5.0 and strictly below 2.8.0"
    )
    assert {(c.package, c.release, c.side) for c in causes} == {
        ("foolib", (2, 5, 0), "below"),
        ("foolib", (2, 8, 0), "from"),
    }


@pytest.mark.parametrize(
    "line",
    [
        "jaxlib version 0.4.31 is newer than and incompatible with jax version 0.4.20.",
        "RuntimeError: CUDA error: out of memory",
        "`resume_download` is deprecated and will be removed in version 1.0.0.",
        "",
    ],
)
def test_lines_that_name_no_cause_give_none(line):
    assert _causes(line) == ()


@pytest.mark.parametrize(
    ("action", "harmful"),
    [
        ("Upgrade foo to a newer release", True),
        ("Upgrade foo to 1.6.0", True),
        ("Pin foo==1.7.2 in the requirements", True),
        ("pip install -U foo", True),
        ("Install foo>=1.2", True),
        ("Pin foo<1.7", True),
        ("Downgrade foo to < 1.6.0 (installed: 1.6.0) and pin it", False),
        ("Downgrade foo to 1.5.3", False),
        ("Pin foo<=1.5.9", False),
        ("Upgrade foo-extras, which imports the removed name", False),
        ("Upgrade the package whose code imports it", False),
    ],
)
def test_a_move_onto_a_release_named_as_the_cause_is_harmful(action, harmful):
    causes = _causes("AttributeError: foo.core.thing was removed in Foo v1.6.0.")
    assert bool(moves_towards(action, causes)) is harmful


@pytest.mark.parametrize(
    ("action", "harmful"),
    [
        ("Downgrade torch to 2.0.0", True),
        ("Pin torch<2.1", True),
        ("Downgrade PyTorch", True),
        ("Upgrade torch to >= 2.1", False),
        ("Downgrade transformers to a release that supports torch 2.0.1", False),
    ],
)
def test_a_move_below_a_stated_floor_is_harmful(action, harmful):
    causes = _causes("Disabling PyTorch because PyTorch >= 2.1 is required but found 2.0.1")
    assert bool(moves_towards(action, causes)) is harmful


def test_another_package_of_a_longer_name_is_not_the_cause():
    causes = _causes("`x.legacy` is not supported in Keras 3.")
    assert moves_towards("Install tf-keras and upgrade tf_keras", causes) == []
    assert moves_towards("Upgrade keras to 3.4", causes)


def test_a_bounded_specifier_is_read_by_its_ceiling():
    causes = _causes("this module requires protobuf<4")
    assert not moves_towards("pip install 'protobuf>=3.20,<4'", causes)
    assert moves_towards("pip install 'protobuf>=3.20'", causes)


def test_moves_read_direction_and_bounds():
    read = {
        (m.package, m.kind, m.version) for m in moves("pip install 'numpy<2' and upgrade torch")
    }
    assert read == {("numpy", "ceiling", (2,)), ("torch", "up", ())}


def test_away_from_a_cause_is_the_opposite_move():
    (cause,) = _causes("this is broken since numpy 2.0")
    assert away_from(cause) == ("numpy", "downgrade", "< 2.0")


def test_a_release_named_as_the_cause_turns_the_change_away_from_it():
    """A removal the message dates gives the downgrade below it (and its fact), never the
    upgrade a missing name would otherwise suggest."""
    message = "AttributeError: foo.core.thing was removed in Foo v1.6.0."
    change = version_change(message, [], {})
    assert change is not None
    assert (change.package, change.direction, change.target) == ("foo", "downgrade", "< 1.6.0")
    assert "version-above-supported" in version_facts(message, [])


def test_a_supported_range_without_the_installed_version_names_no_direction():
    """Both ends of "a <= X < b" are causes for the premise check, but with no version shown
    the change cannot say which end the install crossed."""
    message = "Addons supports Foolib versions above or equal to 2.5.0 and strictly below 2.8.0"
    assert version_change(message, [], {}) is None
    assert version_change(message, [], {"foolib": (2, 9)}).direction == "downgrade"


def test_a_reading_towards_the_cause_gives_way():
    """ "latest version of X" asks for a newer release; the same message dating X's breaking
    release wins: the change moves away from it."""
    message = "make sure you have the latest version of foo. Broken since foo 1.6.0"
    change = version_change(message, [], {})
    assert change is not None and change.direction == "downgrade"


def test_validation_rejects_a_suggestion_towards_the_cause_from_any_author():
    ctx = message_context(
        "ImportError: this module requires protobuf<4", ("version-named-package-mismatch", 0.9)
    )
    premises = read_premises(ctx)
    assert any(line.startswith("named cause: protobuf") for line in premises.as_lines())
    harmful = Draft(
        "Upgrade protobuf to 4.25.",
        "Newer is better.",
        "version-named-package-mismatch",
        0.5,
        "test",
        "test",
    )
    check = validate(harmful, ctx)
    assert not check.ok and not check.premises_ok
    assert any("protobuf" in complaint for complaint in check.complaints)


def test_the_offline_action_moves_away_from_a_dated_removal():
    ctx = message_context(
        "AttributeError: foo.core.thing was removed in Foo v1.6.0.",
        ("version-named-package-mismatch", 0.9),
    )
    draft = OfflineProvider().suggest(ctx)
    assert "downgrade foo" in draft.action.lower() and "1.6.0" in draft.action
    assert not moves_towards(draft.action, read_premises(ctx).causes)
    assert validate(draft, ctx).ok


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=3000))
def test_any_text_reads_without_error(text):
    causes = named_causes([text, text[::-1]])
    moves_towards(text, causes)
    for cause in causes:
        away_from(cause)


@pytest.mark.parametrize(
    "text",
    [
        "removed in " * 20000,
        "requires " + "a" * 100000 + "<2",
        "Upgrade " * 30000,
        "broken since " + "numpy " * 20000 + "2.0",
        ("x." * 50000) + " will be removed in 1.0",
    ],
)
def test_long_adversarial_input_stays_bounded(text):
    started = time.process_time()
    causes = named_causes([text] * 3)
    moves_towards(text, causes)
    assert time.process_time() - started < 5.0


def test_a_removal_the_release_notes_date_is_a_cause_too():
    """A qualified class name (``tensorrt_bindings.tensorrt.Builder``) is read by its last part;
    the TensorRT table dates the removal, so upgrading TensorRT is moving towards it."""
    message = (
        "AttributeError: 'tensorrt_bindings.tensorrt.Builder' object has no attribute"
        " 'build_engine'"
    )
    causes = incident_causes(message, [])
    assert [(c.package, c.release, c.side) for c in causes] == [("tensorrt", (10, 0), "from")]
    assert moves_towards("Upgrade tensorrt to 10.1", causes)
    assert not moves_towards("Pin tensorrt<10", causes)


_TOWARDS = {
    "action": "Upgrade foo to the latest release.",
    "reason": "Newer releases fix more bugs.",
    "runbook": "version-named-package-mismatch",
    "confidence": 0.9,
}
_AWAY = {
    "action": "Pin foo below 1.6.0 until the caller stops using foo.core.thing.",
    "reason": "Foo 1.6.0 removed the name the code uses.",
    "runbook": "version-named-package-mismatch",
    "confidence": 0.7,
}


def test_an_llm_answer_towards_the_cause_is_reasked_and_never_kept(httpserver):
    """The LLM path gets the same premise: the prompt names the cause, an answer moving
    towards it is re-asked with the complaint, and the corrected one is kept."""
    answers = (_TOWARDS, _AWAY)
    provider, requests = scripted_llm(httpserver, *answers)
    ctx = message_context(
        "AttributeError: foo.core.thing was removed in Foo v1.6.0.",
        ("version-named-package-mismatch", 0.9),
    )
    outcome = write_suggestion(ctx, provider)
    user = "\n".join(m["content"] for m in requests[0]["messages"] if m["role"] == "user")
    assert "named cause: foo 1.6.0 and later" in user
    assert len(requests) == 2 and not outcome.attempts[0]["ok"]
    assert any("towards" in complaint for complaint in outcome.attempts[0]["complaints"])
    assert outcome.draft.action == _AWAY["action"] and outcome.validation.ok
