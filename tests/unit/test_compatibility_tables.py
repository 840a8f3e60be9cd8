"""The vendors' compatibility tables (rca/knowledge/compatibility) and their reader: real
rows give the documented pairing with its direction, versions no row covers give nothing,
and garbage version strings neither crash the reader nor cost more than linear time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rca.suggestion.compatibility import (
    TABLES_DIR,
    documented_pairing,
    load_tables,
    parse_release,
    parse_version,
    release_matches,
)
from rca.suggestion.step_values import VALUE_NAMES, fill_values

ORT_SONAME = (
    "Failed to load library libonnxruntime_providers_cuda.so with error: "
    "libcublasLt.so.11: cannot open shared object file: No such file or directory"
)


def test_every_table_cites_its_page_and_date() -> None:
    tables = load_tables()
    assert {t.subject for t in tables} >= {"onnxruntime-gpu", "tensorflow", "onnx", "torch", "cuda"}
    for table in tables:
        assert table.source.startswith("https://"), table.subject
        assert table.rows and table.columns
    for path in TABLES_DIR.glob("*.toml"):
        assert "retrieved = " in path.read_text(encoding="utf-8"), path.name


def test_onnxruntime_gpu_built_for_cuda_11_upgrades_to_the_cuda_12_default() -> None:
    pairing = documented_pairing([ORT_SONAME, "onnxruntime-gpu==1.17.0"], set())
    assert pairing.startswith("upgrade onnxruntime-gpu to 1.19 or newer")
    assert "CUDA 12.x and cuDNN 9.x" in pairing
    assert "(" not in pairing and len(pairing) < 100


def test_onnxruntime_gpu_missing_cudnn_9_goes_back_to_the_cudnn_8_build() -> None:
    text = "libcudnn.so.9: cannot open shared object file: No such file or directory"
    pairing = documented_pairing([text, "onnxruntime-gpu    1.19.2"], set())
    assert pairing.startswith("downgrade onnxruntime-gpu to 1.18,")
    assert "cuDNN 8.x" in pairing


def test_soname_the_table_does_not_pair_with_the_installed_release_gives_nothing() -> None:
    # onnxruntime-gpu 1.17 is built for CUDA 11, not 12: the table cannot explain .so.12.
    text = "libcublasLt.so.12: cannot open shared object file"
    assert documented_pairing([text, "onnxruntime-gpu==1.17.0"], set()) == ""
    assert documented_pairing([ORT_SONAME, "onnxruntime-gpu==0.4.0"], set()) == ""
    assert documented_pairing([ORT_SONAME], set()) == ""


def test_tensorflow_cudnn_build_pairs_by_tested_configurations() -> None:
    text = (
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: 6021"
        " (compatibility version 6000) but source was compiled with 5105"
    )
    pairing = documented_pairing([text], {"tensorflow"})
    assert pairing.startswith("upgrade tensorflow-gpu to 1.3.0 or 1.4.0,")
    assert "cuDNN 6 and CUDA 8" in pairing
    # The TensorFlow table says nothing about another framework's build.
    assert documented_pairing([text], {"pytorch"}) == ""


def test_tensorflow_missing_cuda_library_names_the_installed_releases_tested_configuration() -> (
    None
):
    text = (
        "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot"
        " open shared object file: No such file or directory"
    )
    pairing = documented_pairing([text, "tensorflow==2.5.0"], {"tensorflow"})
    # One tested configuration per release: install it, no guess at the host's other CUDA.
    assert pairing == "install cuDNN 8.1 and CUDA 11.2, what tensorflow 2.5.0 is tested with"
    cudnn = "dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory"
    pairing = documented_pairing([cudnn, "tensorflow                2.15.0"], {"tensorflow"})
    assert pairing.startswith("install cuDNN 8.9 and CUDA 12.2, what tensorflow 2.15.0")
    # A release the page does not list (2.16.2: the page names 2.16.1) gives nothing.
    assert documented_pairing([text, "tensorflow==2.16.2"], {"tensorflow"}) == ""


def test_torch_2_4_to_2_7_pair_with_their_domain_libraries() -> None:
    lines = ["torch                     2.5.1", "torchvision               0.21.0"]
    pairing = documented_pairing(["\n".join(lines)], set())
    assert pairing.startswith(
        "downgrade torchvision to 0.20.x, the release paired with torch 2.5.1"
    )
    paired = ["torch                     2.7.0", "torchvision               0.22.0"]
    assert documented_pairing(["\n".join(paired)], set()) == ""


def test_one_row_holding_both_versions_gives_nothing() -> None:
    text = "Loaded runtime CuDNN library: 7.3.1 but source was compiled with: 7.5.0."
    assert documented_pairing([text], {"tensorflow"}) == ""


def test_onnx_ir_version_names_the_onnx_release_that_writes_it() -> None:
    text = "Unsupported model IR version: 10, max supported IR version: 9"
    pairing = documented_pairing([text], {"onnxruntime"})
    assert pairing.startswith("downgrade onnx to 1.15.0")
    assert "IR version 9" in pairing


def test_torchvision_out_of_pair_with_torch() -> None:
    lines = ["torch                     2.1.0", "torchvision               0.17.1"]
    pairing = documented_pairing(["\n".join(lines)], set())
    assert pairing.startswith(
        "downgrade torchvision to 0.16.x, the release paired with torch 2.1.0"
    )
    paired = ["torch                     2.1.2", "torchvision               0.16.2"]
    assert documented_pairing(["\n".join(paired)], set()) == ""


def test_driver_minimum_for_the_builds_cuda() -> None:
    text = "The NVIDIA driver on your system is too old (found version 11040)."
    pairing = documented_pairing([text, "torch==2.1.0+cu121"], set())
    assert pairing.startswith("driver 525 or newer, the minimum for the build's CUDA 12.1")
    assert documented_pairing([text], set()) == ""  # the build's CUDA is not named


def test_step_placeholder_is_filled_or_its_aside_dropped() -> None:
    assert "documented-pairing" in VALUE_NAMES
    step = "Install the matching build (documented pairing: {documented-pairing})."
    assert fill_values(step, {}) == "Install the matching build."
    filled = fill_values(step, {"documented-pairing": "upgrade x to 2"})
    assert filled == "Install the matching build (documented pairing: upgrade x to 2)."


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8.2.4 (Linux)", (8, 2, 4)),
        ("12.x", (12,)),
        ("v1.17.0rc1", (1, 17, 0)),
        ("", ()),
        ("....", ()),
        ("x.1", ()),
        ("-1", ()),
        ("１２.３", ()),  # full-width digits are not version numbers
        ("1.2.3.4.5.6.7.8.9", (1, 2, 3, 4, 5, 6)),
        ("9" * 5000, (999999999,)),
        ("\x00\ud800.1", ()),
    ],
)
def test_parse_version_garbage(text: str, expected: tuple[int, ...]) -> None:
    assert parse_version(text) == expected


def test_release_specs() -> None:
    assert parse_release("1.15-1.17") == ((1, 15), (1, 17))
    assert parse_release("1.19-") == ((1, 19), None)
    assert release_matches("1.15-1.17", (1, 17, 3))
    assert not release_matches("1.15-1.17", (1, 18, 0))
    assert release_matches("1.19-", (1, 23, 2))
    assert not release_matches("1.18.1", (1, 18, 0))
    for garbage in ("", "-", "--", "a-b", "1.2-x", "-" * 10000, "1." * 5000):
        release_matches(garbage, (1, 2))  # never raises
        assert not release_matches(garbage, ())


def test_malformed_table_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("this is [not toml", encoding="utf-8")
    (tmp_path / "empty.toml").write_text('subject = "x"\n', encoding="utf-8")
    (tmp_path / "rows.toml").write_text(
        'subject = "x"\ncolumns = ["cuda"]\n'
        'rows = [{releases = 1}, {releases = "1.0", cuda = 5}]\n',
        encoding="utf-8",
    )
    tables = load_tables(tmp_path)
    assert [t.subject for t in tables] == ["x"]
    assert tables[0].rows[0].values == {}


def test_adversarial_incident_text_is_linear() -> None:
    unit = "onnxruntime-gpu==1.17.0 libcublasLt.so.11: cannot open shared object file ==1. "

    def run(n: int) -> float:
        texts = [
            unit * n,
            "Loaded runtime CuDNN library: " + "6." * n,
            "\n".join(["torch  2.1"] * n),
        ]
        start = time.perf_counter()
        documented_pairing(texts, {"tensorflow", "onnxruntime"})
        return time.perf_counter() - start

    small, large = run(200), run(2000)
    assert large < 2.0
    assert large < max(small, 0.01) * 40
