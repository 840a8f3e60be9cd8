"""A bare file name the cited runbook writes itself (``llama.cpp``, a project) is not a code
location the author made up; a file:line or a path still has to be in the frames."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from ingest.parsing.frames import make_frame
from rca.suggestion.checks.code_locations import unmatched_locations
from rca.suggestion.context import AnalysisContext, Evidence
from rca.suggestion.validation import validate

FRAMES = [make_frame("/srv/app/serve.py", "main", 12, in_app=True)]
STEP = (
    "**Upgrade the serving engine (vLLM, Ollama, llama.cpp, TGI image) to the release that"
    " added the architecture.** Reason: engines add architectures release by release."
)
RUNBOOK = "serving-engine-unsupported-architecture"


@dataclass
class _Answer:
    action: str
    reason: str
    runbook: str


def _ctx() -> AnalysisContext:
    evidence = Evidence(
        RUNBOOK, "Serving engine", "serving", "Engines: llama.cpp, vLLM.", remediation=(STEP,)
    )
    return AnalysisContext(
        error_type="ValueError",
        message="Model architectures ['Qwen3ForCausalLM'] are not supported for now.",
        frames=FRAMES,
        evidence=[evidence],
    )


def test_a_project_name_the_runbook_writes_is_not_a_missing_location() -> None:
    text = "Upgrade the serving engine (vLLM, Ollama, llama.cpp, TGI image)."
    assert unmatched_locations(text, FRAMES) == (["llama.cpp"], ["llama.cpp"])
    assert unmatched_locations(text, FRAMES, [STEP]) == (["llama.cpp"], [])


def test_the_runbook_step_validates() -> None:
    answer = _Answer(
        "Upgrade the serving engine (vLLM, Ollama, llama.cpp, TGI image) to the release that"
        " added the architecture.",
        "Engines add architectures release by release.",
        RUNBOOK,
    )
    result = validate(answer, _ctx())
    assert result.stack_path_match == 1.0
    assert result.ok, result.complaints


def test_lines_paths_and_unwritten_files_still_need_the_frames() -> None:
    sources = ["Edit trainer.py or net.py when the loader fails."]
    text = "Fix trainer.py:301, src/net.py and loader.py; see mynet.py."
    named, missing = unmatched_locations(text, FRAMES, sources)
    assert missing == ["trainer.py:301", "src/net.py", "loader.py", "mynet.py"]
    assert named == missing


def test_a_fabricated_location_fails_validation_beside_a_sourced_name() -> None:
    answer = _Answer(
        "Upgrade llama.cpp and patch engine.py:88.",
        "The loader in engine.py:88 lacks the architecture.",
        RUNBOOK,
    )
    result = validate(answer, _ctx())
    assert not result.ok
    assert any("engine.py:88" in complaint for complaint in result.complaints)
    assert not any("llama.cpp" in complaint for complaint in result.complaints)


_STEM = st.from_regex(r"[a-z][a-z_]{0,8}", fullmatch=True)
_EXT = st.sampled_from(["py", "cpp", "cu", "go"])


@given(_STEM, _EXT, st.integers(min_value=1, max_value=9999), st.text(max_size=200))
def test_property_only_bare_names_the_source_writes_are_excused(
    stem: str, ext: str, line: int, noise: str
) -> None:
    name = f"{stem}.{ext}"
    source = f"{noise} {name} "
    bare = unmatched_locations(f"Check {name} first.", [], [source])
    assert bare == ([name], [])
    with_line = unmatched_locations(f"Check {name}:{line} first.", [], [source])
    assert with_line == ([f"{name}:{line}"], [f"{name}:{line}"])
    other = unmatched_locations(f"Check x{name} first.", [], [source])
    assert other[1] == other[0]
