"""A linker that ran and cannot find a library shows the compiler is installed: installing
build tools is no fix, making the library findable is (``linker-library-missing``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.context import AnalysisContext
from rca.suggestion.platform_facts import platform_facts
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.validation import validate
from tests.support.evidence import draft, evidence, message_context

_INDUCTOR = ("torch-inductor-build-toolchain", 0.9)
_TRITON_LINK = (
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    "CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmp0/main.c', '-lcuda']' returned"
    " non-zero exit status 1.\n{tail}"
)


@pytest.mark.parametrize(
    ("line", "missing"),
    [
        ("/usr/bin/ld: cannot find -lcuda", True),
        ("/usr/bin/ld: cannot find -lcurand: No such file or directory", True),
        ("x86_64-conda-linux-gnu-ld: cannot find -lcudart", True),
        ("ld.lld: error: unable to find library -lomp", True),
        ("ld: library not found for -lomp", True),
        ("LINK : fatal error LNK1181: cannot open input file 'cuda.lib'", True),
        # the linker's summary alone, a start file, a compiler that is missing, prose
        ("collect2: error: ld returned 1 exit status", False),
        ("/usr/bin/ld: cannot find crt1.o: No such file or directory", False),
        ("error: command 'gcc' failed: No such file or directory", False),
        ("fatal error: Python.h: No such file or directory", False),
        ("the build cannot find -lcuda, it seems", False),
    ],
)
def test_the_fact_needs_the_linker_naming_a_library(line: str, missing: bool) -> None:
    assert ("linker-library-missing" in platform_facts([line])) is missing


def test_a_library_the_linker_lacks_gets_the_library_not_a_compiler() -> None:
    ctx = message_context(_TRITON_LINK.format(tail="/usr/bin/ld: cannot find -lcuda"), _INDUCTOR)
    suggestion = OfflineProvider().suggest(ctx)
    assert "libcuda" in suggestion.action
    assert "build-essential" not in suggestion.action


def test_a_missing_header_still_gets_the_build_tools() -> None:
    ctx = message_context(
        _TRITON_LINK.format(tail="/tmp/tmp0/main.c:2:10: fatal error: Python.h: No such file"),
        _INDUCTOR,
    )
    assert "build-essential" in OfflineProvider().suggest(ctx).action


@pytest.mark.parametrize(
    ("tail", "contradicted"),
    [("/usr/bin/ld: cannot find -lcuda", True), ("fatal error: Python.h: No such file", False)],
)
def test_a_suggestion_to_install_build_tools_fails_validation_after_a_link_error(
    tail: str, contradicted: bool
) -> None:
    ctx = AnalysisContext(
        error_type="BackendCompilerFailed",
        message=_TRITON_LINK.format(tail=tail),
        evidence=evidence(_INDUCTOR),
    )
    answer = draft(
        "Install `build-essential` and `python3-dev` (a C/C++ compiler and the headers with"
        " `Python.h`) in the environment that runs the compiled code.",
        "torch-inductor-build-toolchain",
        "Without a compiler the first compiled call fails.",
    )
    assert validate(answer, ctx).premises_ok is not contradicted


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=300), max_size=4))
def test_any_text_gives_an_answer(texts: list[str]) -> None:
    assert platform_facts(texts) <= {
        "cpu-instruction-missing",
        "custom-operator-unregistered",
        "node-opset-implemented",
        "gpu-libraries-not-loaded",
        "linker-library-missing",
    }
