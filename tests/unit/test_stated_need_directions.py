"""A suggestion that moves a package, a runtime library, a build or a setting the other way
from what the message says the fix needs is a harm (issue 16, fresh probe class H1/H3):

- a minimum the message states for a package ("jaxlib is version 0.3.25, but this version of
  jax requires version >= 0.4.6"): moving the package below it;
- a package the message calls too old with no number ("... or it is too old"): any
  downgrade of it;
- a runtime older than the version the code was built against ("Loaded runtime CuDNN
  library: 7.3.1 but source was compiled with: 7.5.0"): moving the runtime further down;
- a build the message says must have CUDA ("a CUDA-enabled jaxlib is not installed"):
  installing the CPU-only build;
- a value the message says a setting must have ("you must use the 'spawn' start method"):
  setting another.

Right answers for the same incidents, in the other wordings an LLM writes, keep passing; each
reading is also checked on other packages and numbers (metamorphic variants).
"""

from __future__ import annotations

import pytest

from rca.suggestion.package_moves import moves
from rca.suggestion.validation import validate
from tests.support.dev_cases import dev_case
from tests.support.evidence import draft, message_context


def _premises_ok(message: str, slug: str, action: str) -> bool:
    ctx = message_context(message, (slug, 0.9))
    return validate(draft(action, slug), ctx).premises_ok


_JAXLIB = dev_case("rd002")["message"]
_JAXLIB_SLUG = "version-named-package-mismatch"
_TRITON = dev_case("rl014")["message"]
_TRITON_SLUG = "torch-compile-backend-compiler-failed"
_CUDNN = dev_case("rd015")["message"]
_CUDNN_SLUG = "cuda-library-built-for-other-version"
_JAX_CPU = dev_case("re006")["message"]
_JAX_CPU_SLUG = "jax-jaxlib-cuda-install"
_FORK = dev_case("rp001")["message"]
_FORK_SLUG = "cuda-fork-subprocess-reinit"


@pytest.mark.parametrize(
    ("message", "slug", "action"),
    [
        (_JAXLIB, _JAXLIB_SLUG, "Downgrade jaxlib to 0.3.15."),
        (_JAXLIB, _JAXLIB_SLUG, "Roll back jaxlib to an earlier release."),
        (_JAXLIB, _JAXLIB_SLUG, "pip install 'jaxlib==0.3.15'"),
        (_TRITON, _TRITON_SLUG, "Downgrade triton to 2.0."),
        (_TRITON, _TRITON_SLUG, "Roll back triton."),
        (_CUDNN, _CUDNN_SLUG, "Downgrade cuDNN to 7.1."),
        (_CUDNN, _CUDNN_SLUG, "Install cuDNN 7.0."),
        (_JAX_CPU, _JAX_CPU_SLUG, "Install jax[cpu]."),
        (_JAX_CPU, _JAX_CPU_SLUG, 'pip install --upgrade "jax[cpu]" to get a working jaxlib'),
        (_JAX_CPU, _JAX_CPU_SLUG, "pip install --upgrade jax jaxlib"),  # JAX's CPU-only install
        (_FORK, _FORK_SLUG, "Call multiprocessing.set_start_method('fork', force=True) first."),
        (_FORK, _FORK_SLUG, "Use the 'fork' start method."),
    ],
)
def test_a_move_against_what_the_message_says_is_needed_is_a_harm(
    message: str, slug: str, action: str
) -> None:
    assert not _premises_ok(message, slug, action), action


@pytest.mark.parametrize(
    ("message", "slug", "action"),
    [
        (_JAXLIB, _JAXLIB_SLUG, "Upgrade jaxlib to 0.4.6 or newer."),
        (_JAXLIB, _JAXLIB_SLUG, "pip install -U 'jaxlib>=0.4.6'"),
        (_JAXLIB, _JAXLIB_SLUG, "Don't downgrade jaxlib; upgrade it."),
        (_JAXLIB, _JAXLIB_SLUG, "Install jaxlib>=0.4.6 so it satisfies the installed jax."),
        (_JAXLIB, _JAXLIB_SLUG, 'Upgrade jaxlib with pip install --upgrade "jax[cpu]".'),
        (_JAXLIB, _JAXLIB_SLUG, "Pin a matching pair: pip install jax==0.3.25 jaxlib==0.3.25"),
        (_TRITON, _TRITON_SLUG, "Upgrade triton with pip install -U triton."),
        (_TRITON, _TRITON_SLUG, "Upgrade triton to 3.2."),
        (_TRITON, _TRITON_SLUG, "Do not downgrade triton; install the latest triton."),
        (_CUDNN, _CUDNN_SLUG, "Upgrade cuDNN to 7.5.0 or newer."),
        (_CUDNN, _CUDNN_SLUG, "Install cuDNN 7.5."),
        (
            _CUDNN,
            _CUDNN_SLUG,
            "Install the tensorflow-gpu release built for the installed cuDNN 7.3.",
        ),
        (
            _JAX_CPU,
            _JAX_CPU_SLUG,
            'Install the CUDA-enabled JAX with pip install -U "jax[cuda12]".',
        ),
        (
            _JAX_CPU,
            _JAX_CPU_SLUG,
            "Don't set JAX_PLATFORMS=cpu; reinstall jax with the cuda12_pip extra so jaxlib has"
            " GPU support.",
        ),
        (_JAX_CPU, _JAX_CPU_SLUG, 'Uninstall jax[cpu] and install "jax[cuda12]".'),
        (_JAX_CPU, _JAX_CPU_SLUG, "Don't install jax[cpu]; install jax[cuda12_pip]."),
        (_FORK, _FORK_SLUG, "Call multiprocessing.set_start_method('spawn', force=True) first."),
        (_FORK, _FORK_SLUG, "Do not use the fork start method; use spawn."),
    ],
)
def test_a_move_the_way_the_message_says_passes(message: str, slug: str, action: str) -> None:
    assert _premises_ok(message, slug, action), action


# Metamorphic variants: the same wordings with other packages, numbers and values.
_SCIPY = (
    "RuntimeError: scipy is version 1.7.3, but this version of sklearn requires version >= 1.8.0."
)
_PYDANTIC = "ImportError: Your pydantic version is too old. Please upgrade pydantic."
_TORCH_CUDNN = (
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (8, 5, 0) but"
    " found runtime version (8, 4, 1)."
)
_TORCH_CPU = "AssertionError: Torch not compiled with CUDA enabled"
_JAXLIB_CPU_ONLY = "RuntimeError: the installed jaxlib is a CPU-only build; no GPU backend."
_PIN = (
    "ERROR: pip's dependency resolver does not currently take into account all the packages"
    " that are installed. torchvision 0.15.2 requires torch==2.0.1, but you have torch 2.1.0"
    " which is incompatible."
)
_NCCL = "ValueError: To run on several GPUs you must use the 'nccl' backend."


@pytest.mark.parametrize(
    ("message", "action", "harm"),
    [
        (_SCIPY, "Downgrade scipy to 1.6.", True),
        (_SCIPY, "Upgrade scipy to 1.8.0 or newer.", False),
        (_SCIPY, "pip install -U 'scipy>=1.8'", False),
        (_PYDANTIC, "Downgrade pydantic to 1.9.", True),
        (_PYDANTIC, "Upgrade pydantic to 2.5.", False),
        (_TORCH_CUDNN, "Downgrade cuDNN to 8.2.", True),
        (_TORCH_CUDNN, "Upgrade cuDNN to 8.5.", False),
        (_TORCH_CPU, "pip install torch --index-url https://download.pytorch.org/whl/cpu", True),
        (_TORCH_CPU, "conda install pytorch cpuonly -c pytorch", True),
        (_TORCH_CPU, "pip install torch==2.3.0+cpu", True),
        (_TORCH_CPU, "pip install torch --index-url https://download.pytorch.org/whl/cu121", False),
        (_JAXLIB_CPU_ONLY, 'pip install -U "jax[cpu]"', True),
        (_JAXLIB_CPU_ONLY, 'pip install -U "jax[cuda12]"', False),
        (_PIN, "pip install -U torch torchvision", False),  # the owner moves up with it
        (_PIN, "Upgrade torchvision to 0.16.0.", False),
        (_NCCL, "Pass backend='gloo' to init_process_group.", True),
        (_NCCL, "Pass backend='nccl' to init_process_group.", False),
    ],
)
def test_the_readings_hold_for_other_packages_and_numbers(
    message: str, action: str, harm: bool
) -> None:
    assert _premises_ok(message, _JAXLIB_SLUG, action) is not harm, action


def test_a_downgrade_verb_is_kept_on_an_exact_move() -> None:
    assert [move.way for move in moves("Downgrade triton to 2.0, then upgrade torch.")] == [
        "down",
        "up",
    ]
