"""TensorRT's ONNX parser naming an operator it has no importer for is read like ONNX
Runtime's "not a registered function/op": a custom operator (outside the standard ONNX
domains) is the ``custom-operator-unregistered`` fact, which rules constant folding out
(the folder evaluates a subgraph with an ONNX runtime, which has no kernel for the op
either) and fits the plugin step. A standard operator the parser lacks is not that fact.
"""

from __future__ import annotations

import pytest

from rca.suggestion.platform_facts import platform_facts, unregistered_operators
from rca.suggestion.providers.step_ranking import rank_steps
from tests.support.evidence import incident_context

_RANKED = (("tensorrt-onnx-parser-unsupported-op", 0.9),)


def _parser_error(op: str) -> str:
    return (
        f'While parsing node number 70 [{op} -> "250"]:\n'
        "ERROR: /src/onnx-tensorrt/ModelImporter.cpp:134 In function parseGraph:\n"
        f"[8] No importer registered for op: {op}"
    )


@pytest.mark.parametrize(
    ("line", "op"),
    [
        ("[8] No importer registered for op: DCN", "DCN"),
        ("No importer registered for op: DCNv2. Attempting to import as plugin.", "DCNv2"),
        ("UNSUPPORTED_NODE: No importer registered for op: Round", "Round"),
    ],
)
def test_the_parser_names_the_operator_it_has_no_importer_for(line: str, op: str) -> None:
    assert unregistered_operators([line]) == [op]


def test_a_custom_operator_is_the_fact_and_a_standard_one_is_not() -> None:
    assert "custom-operator-unregistered" in platform_facts([_parser_error("DCN")])
    assert "custom-operator-unregistered" not in platform_facts([_parser_error("Round")])
    assert "custom-operator-unregistered" not in platform_facts(
        ["No importer registered for op: Round. Attempting to import as plugin."]
    )


def test_a_custom_operator_gets_the_plugin_step_not_constant_folding() -> None:
    ranked = rank_steps(incident_context(_parser_error("DCN"), *_RANKED))
    assert "plugin" in ranked[0].action
    assert all("fold-constants" not in candidate.action for candidate in ranked)


def test_a_standard_operator_keeps_constant_folding_among_the_steps() -> None:
    ranked = rank_steps(incident_context(_parser_error("Round"), *_RANKED))
    assert any("fold-constants" in candidate.action for candidate in ranked)
    assert "plugin" not in ranked[0].action
