"""The shipped Prometheus alerting rules load, and carry what the webhook maps to an incident."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

RULES = sorted((Path(__file__).resolve().parents[2] / "docs" / "prometheus").glob("*.rules.yml"))
GOLDEN = {"ModelP99LatencyHigh", "TokenRateLow", "KVCacheHitRatioLow", "ModelAUCDrop"}


def _rules() -> list[dict]:
    return [
        rule
        for path in RULES
        for group in yaml.safe_load(path.read_text())["groups"]
        for rule in group["rules"]
    ]


def test_every_rule_says_what_the_webhook_needs() -> None:
    rules = _rules()
    assert {rule["alert"] for rule in rules} >= GOLDEN
    for rule in rules:
        assert rule["expr"].strip() and isinstance(rule["for"], str), rule["alert"]
        assert rule["labels"]["severity"] in {"page", "warning", "info"}, rule["alert"]
        assert rule["labels"]["service"], rule["alert"]  # becomes the incident's service
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]


def test_the_golden_signal_thresholds_are_the_seeds() -> None:
    by_name = {rule["alert"]: rule for rule in _rules()}
    assert "> 2" in by_name["ModelP99LatencyHigh"]["expr"]
    assert by_name["ModelP99LatencyHigh"]["for"] == "15s"
    assert "< 5" in by_name["TokenRateLow"]["expr"] and by_name["TokenRateLow"]["for"] == "3m"
    assert "< 0.75" in by_name["KVCacheHitRatioLow"]["expr"]
    assert (
        ">= 0.03" in by_name["ModelAUCDrop"]["expr"] and "[5m]" in by_name["ModelAUCDrop"]["expr"]
    )


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool (Debian: prometheus) absent")
def test_promtool_accepts_the_rules() -> None:
    done = subprocess.run(
        ["promtool", "check", "rules", *map(str, RULES)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
