"""NCCL's last warning under ``Last error:`` is the debug output a rerun would show (issue 16).

PyTorch appends ``ncclGetLastError`` to an NCCL error ("Last error:" and, on the next line,
the text of NCCL's last ``NCCL WARN``: ``getNcclErrorDetailStr`` in NCCLUtils.cpp). An
incident that carries it already has what "rerun with ``NCCL_DEBUG=INFO``" would print, so
only that rerun is ruled out (``nccl-debug-shown``); the step that fixes what the warning
names (``--shm-size`` for ``/dev/shm``, ``NCCL_SOCKET_IFNAME`` for a socket) stays.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rca.suggestion.premises import read_premises
from rca.suggestion.providers import OfflineProvider
from rca.suggestion.shown_diagnostics import NCCL_DEBUG_SHOWN, shown_diagnostic_facts
from rca.suggestion.validation import validate
from tests.support.evidence import draft, message_context
from tests.support.linear_time import assert_linear

_NCCL = ("nccl-version-network-ib", 0.9)
_HEAD = (
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
    "ProcessGroupNCCL.cpp:{line}, unhandled system error (run with NCCL_DEBUG=INFO for"
    " details), NCCL version {version}\n{rank}ncclSystemError: System call (e.g. socket,"
    " malloc) or external library call failed or device error."
)
_SHM = "Error while creating shared memory segment /dev/shm/nccl-{tag} (size {size})"
_SOCKET = (
    "socketStartConnect: Connect to {address}<{port}> failed : Software caused connection abort"
)
_RERUN = "Rerun with `NCCL_DEBUG=INFO`"
_FIX_NAMED = "Fix what NCCL's last warning names"


def _error(last: str, *, line: int = 1970, version: str = "2.20.5", rank: str = "[rank0]: ") -> str:
    head = _HEAD.format(line=line, version=version, rank=rank)
    return f"{head}\n{rank}Last error:\n{rank}{last}"


@pytest.mark.parametrize(
    ("texts", "shown"),
    [
        ([_error(_SHM.format(tag="eQz2sT", size=5767520))], True),
        (
            [
                _error(
                    "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 2000", rank=""
                )
            ],
            True,
        ),
        # the warning on the same line, and each line of the error logged on its own
        (["NCCL error in: x.cpp:10, remote process exited\nLast error: socket closed"], True),
        (["ncclSystemError: System call failed.", "[rank3]: Last error:", "[rank3]: oops"], True),
        # nothing under "Last error:": NCCL recorded no warning
        (["NCCL error in: x.cpp:10, unhandled system error\nLast error:\n"], False),
        (["NCCL error in: x.cpp:10, unhandled system error\nLast error:"], False),
        # PyTorch's text for an empty ncclGetLastError, and next lines that are no warning
        ([_error("Unknown NCCL Error")], False),
        (
            ["NCCL error in: x.cpp:10, unhandled system error\nLast error: Unknown NCCL Error"],
            False,
        ),
        (
            [_error("Exception raised from checkForNCCLErrorsInternal at x.cpp:1 (most recent")],
            False,
        ),
        ([_error("Traceback (most recent call last):", rank="")], False),
        ([_error("[W1207 14:02:11.123 ProcessGroupNCCL.cpp:1168] Warning: ...")], False),
        ([_error("2024-12-07 14:02:11,123 ERROR worker exited", rank="")], False),
        # not an NCCL error: a gRPC client's "last error"
        (
            [
                "InferenceServerException: [StatusCode.UNAVAILABLE] failed to connect to all"
                " addresses; last error: INTERNAL: ipv4:10.0.0.5:443: Trying to connect an http1.x"
                " server"
            ],
            False,
        ),
        (["Last error:\nsomething failed"], False),
        ([_HEAD.format(line=1, version="2.18.1", rank="")], False),
    ],
)
def test_nccl_last_error_text_is_its_debug_output(texts: list[str], shown: bool) -> None:
    assert (NCCL_DEBUG_SHOWN in shown_diagnostic_facts(texts)) is shown


def test_a_last_error_rules_out_only_the_rerun() -> None:
    ctx = message_context(_error(_SHM.format(tag="eQz2sT", size=5767520)), _NCCL)
    action = OfflineProvider().suggest(ctx).action
    assert action.startswith(_FIX_NAMED), action
    assert "--shm-size" in action
    rerun = (
        "Rerun with `NCCL_DEBUG=INFO` and fix what its `NCCL WARN` line names: `--ipc=host` /"
        " `--shm-size` for a `/dev/shm` failure, `NCCL_SOCKET_IFNAME` or the firewall for a"
        " socket one."
    )
    assert not validate(draft(rerun, _NCCL[0]), ctx).premises_ok


def test_without_the_warning_the_rerun_comes_first() -> None:
    ctx = message_context(_HEAD.format(line=1970, version="2.20.5", rank=""), _NCCL)
    assert NCCL_DEBUG_SHOWN not in read_premises(ctx).facts
    assert OfflineProvider().suggest(ctx).action.startswith(_RERUN)


@settings(max_examples=25, deadline=None)
@given(
    tag=st.text(alphabet="abcdefXYZ0123456789", min_size=4, max_size=8),
    size=st.integers(1, 10**9),
    line=st.integers(1, 9999),
    version=st.sampled_from(["2.14.3", "2.18.1", "2.20.5", "2.21.5", "2.23.4"]),
    rank=st.sampled_from(["", "[rank0]: ", "[rank7]: "]),
    shm=st.booleans(),
    address=st.sampled_from(["10.0.0.2", "192.168.1.17", "172.31.4.250"]),
    port=st.integers(1024, 65535),
)
def test_metamorphic_renamed_segments_and_numbers_keep_the_choice(
    tag: str,
    size: int,
    line: int,
    version: str,
    rank: str,
    shm: bool,
    address: str,
    port: int,
) -> None:
    last = _SHM.format(tag=tag, size=size) if shm else _SOCKET.format(address=address, port=port)
    ctx = message_context(_error(last, line=line, version=version, rank=rank), _NCCL)
    assert NCCL_DEBUG_SHOWN in read_premises(ctx).facts
    action = OfflineProvider().suggest(ctx).action
    assert not action.startswith(_RERUN), action
    if shm:
        assert action.startswith(_FIX_NAMED), action


@given(st.lists(st.text(alphabet=st.sampled_from(list("Last error:NCCL errorncl\n[rank0] ")))))
def test_arbitrary_text_never_raises(texts: list[str]) -> None:
    shown_diagnostic_facts(texts)


def test_long_text_is_read_in_linear_time() -> None:
    def read(n: int) -> None:
        text = "NCCL error " + "Last error: " * (2 * n) + "\n" + "[rank0]:" * (2 * n)
        shown_diagnostic_facts([text, text])

    assert_linear(read, 500, 20_000)
