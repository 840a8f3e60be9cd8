"""Rows added to the pairing tables on 2026-12-07 from the vendors' own tables: ONNX
1.19-1.22 (IR 12 and 13, onnx/onnx docs/Versioning.md) and torch 2.9 (pytorch.org's
previous-versions commands). A runtime that reads IR 12 is told which ONNX release writes it."""

from __future__ import annotations

from rca.suggestion.compatibility import documented_pairing


def test_onnx_ir_12_and_13_name_the_onnx_releases_that_write_them() -> None:
    text = "Unsupported model IR version: 13, max supported IR version: 12"
    pairing = documented_pairing([text], {"onnxruntime"})
    assert pairing.startswith("downgrade onnx to 1.19")
    assert "IR version 12" in pairing


def test_torch_2_9_pairs_with_torchvision_0_24() -> None:
    lines = ["torch                     2.9.0", "torchvision               0.23.0"]
    pairing = documented_pairing(["\n".join(lines)], set())
    assert pairing.startswith("upgrade torchvision to 0.24.x, the release paired with torch 2.9.0")
    paired = ["torch                     2.9.1", "torchvision               0.24.1"]
    assert documented_pairing(["\n".join(paired)], set()) == ""
