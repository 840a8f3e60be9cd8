"""Where a user keeps their code must not steer which runbook step wins: a frame's file name
counts as evidence only for whose code it is (an installed library's own tree, the standard
library's, else the file's basename), never for the user's directories (``/home/<user>``
says ``home``, which a ``CUDA_HOME`` step shares)."""

from __future__ import annotations

import pytest

from ingest.parsing.frames import make_frame
from rca.retrieval.frame_paths import evidence_path
from rca.suggestion.context import AnalysisContext
from rca.suggestion.incident_setting import read_setting
from rca.suggestion.providers.incident_view import evidence_words, read_incident


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
