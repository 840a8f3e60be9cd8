"""Where a user keeps their code must not steer which runbook step wins: a frame's file name
counts as evidence only for whose code it is (an installed library's own tree, the standard
library's, else the file's basename), never for the user's directories (``/home/<user>``
says ``home``, which a ``CUDA_HOME`` step shares)."""

from __future__ import annotations

import pytest

from ingest.parsing.frames import make_frame
from ingest.parsing.logs import parse_logs
from rca.evaluation.suite import realworld_dev_cases
from rca.retrieval.frame_paths import compiled_sources, evidence_path, evidence_text
from rca.suggestion.context import AnalysisContext
from rca.suggestion.incident_setting import read_setting
from rca.suggestion.providers.incident_view import evidence_words, read_incident
from tests.support.linear_time import assert_linear


@pytest.mark.parametrize(
    ("filename", "kept"),
    [
        ("/home/alice/projects/llm-finetune/train.py", "train.py"),
        (
            "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py",
            "torch/nn/modules/module.py",
        ),
        (
            "/home/bob/miniconda3/envs/vision-exp/lib/python3.11/site-packages/"
            "transformers/modeling_utils.py",
            "transformers/modeling_utils.py",
        ),
        ("/home/bob/miniconda3/envs/vision-exp/lib/python3.11/site-packages/six.py", "six.py"),
        (
            "/home/carol/work/.venv/lib/python3.12/site-packages/accelerate/accelerator.py",
            "accelerate/accelerator.py",
        ),
        (
            "/usr/local/lib/python3.10/dist-packages/torch/utils/data/dataloader.py",
            "torch/utils/data/dataloader.py",
        ),  # Colab's and Debian's installs
        ("/usr/lib/python3.10/multiprocessing/pool.py", "multiprocessing/pool.py"),
        (
            r"C:\Users\Dave Smith\Documents\GitHub\seg-model\venv\Lib\site-packages"
            r"\torch\nn\functional.py",
            "torch/nn/functional.py",
        ),
        (r"C:\Users\Dave Smith\Documents\GitHub\seg-model\train_seg.py", "train_seg.py"),
        (r"C:\Python310\lib\json\decoder.py", "json/decoder.py"),
        ("/workspace/src/serve/handler.py", "handler.py"),  # containers' mount points
        ("/content/drive/MyDrive/Colab Notebooks/cuda_home/run.py", "run.py"),  # Colab
        ("/kaggle/working/train.py", "train.py"),
        ("/tmp/ipykernel_4242/3112742349.py", "3112742349.py"),
        ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap>"),
        ("train.py", "train.py"),
        ("", ""),
    ],
)
def test_a_frame_file_keeps_the_library_tree_or_its_basename(filename: str, kept: str) -> None:
    assert evidence_path(filename) == kept


def _ctx(root: str) -> AnalysisContext:
    return AnalysisContext(
        error_type="RuntimeError",
        message="CUDA error: no kernel image is available for execution on the device",
        frames=[
            make_frame(filename=f"{root}/train.py", function="main", context_line="fit(model)"),
            make_frame(
                filename="/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py",
                function="_call_impl",
                module="torch.nn.modules.module",
                context_line="return forward_call(*args, **kwargs)",
            ),
        ],
    )


def test_the_users_directories_say_nothing_to_the_step_ranker() -> None:
    home, mount = _ctx("/home/alice/cuda_projects"), _ctx("/mnt/team-b/jobs")
    words = evidence_words(home)
    assert "home" not in words and "alice" not in words and "cuda_project" not in words
    assert words.keys() == evidence_words(mount).keys()
    assert read_incident(home) == read_incident(mount)
    # What the frames do say stays: the library, its modules, the user's file and code.
    assert {"torch", "nn", "module", "train", "fit"} <= words.keys()


def test_a_framework_is_read_from_a_librarys_tree_not_from_a_users_folder() -> None:
    users_folder = [make_frame(filename="/home/me/jax/experiments/train.py", function="main")]
    assert read_setting("RuntimeError", "boom", users_folder).frameworks == frozenset()
    installed = [
        make_frame(filename="/opt/conda/lib/python3.10/site-packages/jax/_src/api.py"),
    ]
    assert read_setting("RuntimeError", "boom", installed).frameworks == {"jax"}


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "docker run -v /Users/darren/Desktop/Nvidia/Triton/model_repository:/models"
            " nvcr.io/nvidia/tritonserver:22.09-py3 tritonserver --model-repository=/models",
            "docker run -v model_repository:/models tritonserver:22.09-py3 tritonserver"
            " --model-repository=/models",
        ),
        ("failed to stat file /models/yolox_onnx/1/model.onnx", "failed to stat file model.onnx"),
        (  # a library's file keeps its name, an installed package its tree
            "OSError: /usr/local/cuda/lib64/libcudnn.so.8: cannot open shared object file",
            "OSError: libcudnn.so.8: cannot open shared object file",
        ),
        (
            'File "/home/alice/.venv/lib/python3.11/site-packages/torch/cuda/__init__.py"',
            'File "torch/cuda/__init__.py"',
        ),
        (r"saved to C:\Users\Dave\runs\exp3\last.pt", "saved to last.pt"),
        ("../c10/cuda/CUDACachingAllocator.cpp:1024", "CUDACachingAllocator.cpp:1024"),
        (  # a URL is the library's address, kept whole
            "see https://pytorch.org/docs/stable/notes/cuda.html#memory-management",
            "see https://pytorch.org/docs/stable/notes/cuda.html#memory-management",
        ),
        ("expected input[2, 3] (got 3/4 of the batch) and/or a mask", None),
        ("// a comment", None),
    ],
)
def test_a_path_in_a_message_or_log_line_keeps_only_its_evidence(
    text: str, kept: str | None
) -> None:
    assert evidence_text(text) == (text if kept is None else kept)


def _launch(host_dir: str) -> AnalysisContext:
    return AnalysisContext(
        error_type="none (model load failure)",
        message="failed to load 'detector' version 1: Internal: failed to stat file"
        " /models/detector/1/model.onnx",
        logs=parse_logs(
            [
                f"docker run --gpus all -v {host_dir}:/models"
                " nvcr.io/nvidia/tritonserver:24.01-py3 tritonserver --model-repository=/models"
            ]
        ),
    )


def test_a_log_lines_host_directories_say_nothing_to_the_step_ranker() -> None:
    named, plain = _launch("/data/TorchServe/cuda_home/repo"), _launch("/srv/team-b/repo")
    words = evidence_words(named)
    assert not {"torchserve", "cuda_home", "data"} & words.keys()
    assert words.keys() == evidence_words(plain).keys()
    assert read_incident(named) == read_incident(plain)
    assert {"tritonserver", "model", "onnx"} <= words.keys()  # what the failure says stays


def test_a_framework_is_not_read_from_a_users_folder_in_a_log_line() -> None:
    users_folder = ["python /home/me/jax/experiments/train.py --lr 3e-4"]
    assert read_setting("RuntimeError", "boom", logs=users_folder).frameworks == frozenset()
    installed = ['  File "/opt/conda/lib/python3.10/site-packages/jax/_src/api.py", line 3']
    assert read_setting("RuntimeError", "boom", logs=installed).frameworks == {"jax"}
    # the options a launch command sets are still read from the line as written
    options = read_setting("RuntimeError", "boom", logs=users_folder).options_set
    assert options.get("lr") == "3e-4"


#: A compiled library's logger names its own source file, relative to its build tree or
#: under the directory it was built in: the path is the library's, whatever its folders.
_LIBRARY_SOURCE_LINES = [
    (
        "2023-08-01 10:00:00.123456: I tensorflow/core/platform/cpu_feature_guard.cc:182] This"
        " TensorFlow binary is optimized to use available CPU instructions",
        "tensorflow",
    ),
    (
        "2023-05-02 09:14:03.512: W tensorflow/compiler/xla/stream_executor/gpu/asm_compiler.cc:"
        "231] Falling back to the CUDA driver for PTX compilation",
        "tensorflow",
    ),
    (
        "[W CUDAGuardImpl.h:46] Warning: CUDA warning: out of memory (Triggered internally at"
        " ../c10/cuda/CUDAGuardImpl.h:46 and ../torch/csrc/utils/tensor_numpy.cpp:84)",
        "pytorch",
    ),
    (
        "Non-zero status code returned while running Conv node. File"
        " /onnxruntime_src/onnxruntime/core/providers/cuda/cuda_call.cc line=121",
        "onnxruntime",
    ),
]


@pytest.mark.parametrize(("line", "framework"), _LIBRARY_SOURCE_LINES)
def test_a_framework_is_read_from_its_own_source_file_in_a_log_line(
    line: str, framework: str
) -> None:
    assert read_setting("none (error log)", "failed", logs=[line]).frameworks == {framework}
    assert read_setting("none (error log)", line).frameworks == {framework}
    # The retrieval text still keeps only the file's name.
    assert "/" not in evidence_text(line).replace("../", "")


def test_a_tf_trt_log_message_names_tensorflow() -> None:
    """rai018 (dev): TF-TRT's converter logs from TensorFlow's tree."""
    case = next(case for case in realworld_dev_cases() if case["id"] == "rai018")
    setting = read_setting(case["exception_type"], case["message"], logs=case["logs"])
    assert "tensorflow" in setting.frameworks


def test_a_users_compiled_extension_in_a_python_folder_names_no_framework() -> None:
    """Only a C, C++ or CUDA source file's folders are read, and only a package's name
    among them: a user's script or data under a folder named after a framework says nothing."""
    lines = [
        "python /home/me/jax/experiments/train.py --lr 3e-4",
        "saved to /data/torch/runs/exp3/weights/last.pt",
        "compiling /home/me/projects/fused_ops/csrc/fused_kernel.cu",
    ]
    assert read_setting("RuntimeError", "boom", logs=lines).frameworks == frozenset()


def test_reading_compiled_sources_is_linear() -> None:
    assert_linear(lambda n: compiled_sources("a/b_" * n + ".cc " + "torch/x.cu/" * n))
