"""Whether the incident says its setup worked with an earlier release: a regression, not a size.

"It works well in vllm 0.2.6 but runs out of memory using 0.2.7", "worked with 2.1.0,
fails with 2.2.0": the same model, data and hardware ran under the earlier release, so
what changed is the software, not whether the model fits the GPU. Steps whose premise is
that the weights do not fit (shard them over more GPUs, load a quantized or a smaller
model) are then no fix, while what the new release turned on (a default, a kernel, CUDA
graph capture) and pinning the release that worked are. ``earlier-release-worked`` holds
when one line says it worked (runs, ran) in, with or on a version and then, after "but",
"while", "whereas", "however" or ", fails", names a later one.

Linear time: one RE2 pattern with bounded gaps over the first lines of each text.
"""

from __future__ import annotations

from collections.abc import Sequence

from ingest.linear_regex import compile as linear
from rca.suggestion.text_lines import first_lines
from rca.suggestion.version_numbers import padded, parse_version

__all__ = ["EARLIER_RELEASE_WORKED", "release_regression_facts"]

EARLIER_RELEASE_WORKED = "earlier-release-worked"
_NUM = r"v?(\d+\.\d+(?:\.\d+)*)"
_REGRESSION = linear(
    r"\b(?:works?|worked|working|runs?|ran|running)\b"
    r"(?:\s+(?:well|fine|ok|okay|correctly|perfectly|as\s+expected))?"
    r"\s+(?:in|with|on|under|using)\s+(?:[A-Za-z][\w.-]{0,40}\s+)?"
    rf"{_NUM}"
    r"[^\n]{0,120}?(?:\b(?:but|while|whereas|however)\b|[,;]\s*(?:fails|breaks|crashes|errors))"
    r"[^\n]{0,80}?\b"
    rf"{_NUM}",
    ignore_case=True,
)


def release_regression_facts(texts: Sequence[str]) -> set[str]:
    """``{EARLIER_RELEASE_WORKED}`` when a line says an earlier release worked and a later
    one fails (see the module)."""
    for line in first_lines(texts):
        for match in _REGRESSION.finditer(line):
            good, bad = parse_version(match.group(1)), parse_version(match.group(2))
            if good and bad and padded(bad) > padded(good):
                return {EARLIER_RELEASE_WORKED}
    return set()
