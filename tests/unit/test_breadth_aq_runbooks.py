"""Failure kinds of the serving-infrastructure breadth batch (eval/realworld/cases-aq.jsonl)
route to the steps written for them from their tools' documentation (issue 16).

cases-aq found the corpus without pages for the infrastructure around a model server: a
Hugging Face cache the container cannot write (read-only root, a user without a home), a
locked-memory limit a container inherits from its runtime, a server port already taken, a
KServe predictor whose `/mnt/models` nobody filled, and a Kubernetes node whose device plugin
cannot load NVML. It also found container-side wordings of kinds that had pages: the
toolkit's CUDA requirement check, NVML's driver/library mismatch as `nvidia-container-cli`
prints it, and TorchServe's response frame limit. Each wording is the tool's own message as
its documentation or issue tracker prints it, sent as a bare incident through lexical
retrieval and the offline provider: the runbook comes first and its action names the
documented fix. Messages of neighbouring kinds must not match the new signals.
"""

from __future__ import annotations

from tests.support.vendor_checks import Wording, batch_tests

WORDINGS: tuple[Wording, ...] = (
    Wording(
        "hf-cache-dir-not-writable",
        "OSError",
        "OSError: [Errno 30] Read-only file system: '/nonexistent'",
        ("HF_HOME",),
    ),
    Wording(
        "hf-cache-dir-not-writable",
        "PermissionError",
        "PermissionError: [Errno 13] Permission denied: '/.cache'",
        ("HF_HOME",),
    ),
    Wording(
        "container-memlock-limit",
        "RuntimeError",
        "RuntimeError: Unable to pin host memory with error code: -1",
        ("memlock",),
    ),
    Wording(
        "container-memlock-limit",
        "UCX ERROR",
        "allocate memory : Please set max locked memory (ulimit -l) to 'unlimited'"
        " (current: 8192 kbytes)",
        ("memlock",),
    ),
    Wording(
        "model-server-port-in-use",
        "java.io.IOException",
        "java.io.IOException: Failed to bind. Address already in use",
        ("lsof",),
    ),
    Wording(
        "model-server-port-in-use",
        "tritonserver",
        "E1221 09:27:15.346824 166 main.cc:244] failed to start GRPC service: Unavailable -"
        " Socket '0.0.0.0:8001' already in use",
        ("lsof",),
    ),
    Wording(
        "kserve-model-dir-empty",
        "FileNotFoundError",
        "ERROR:root:fail to locate model file for model sklearn-iris under dir /mnt/models,"
        "trying loading from model repository.\nFileNotFoundError: [Errno 2] No such file or"
        " directory: '/mnt/models'",
        ("storage-initializer",),
    ),
    Wording(
        "k8s-gpu-device-plugin-no-gpus",
        "device plugin",
        "Failed to initialize NVML: could not load NVML library.\nIf this is a GPU node, did"
        " you set the docker default runtime to `nvidia`?",
        ("default",),
    ),
    Wording(
        "cuda-driver-too-old",
        "docker: Error response from daemon",
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please"
        " update your driver to a newer version, or use an earlier cuda container",
        ("driver",),
    ),
    Wording(
        "nvidia-driver-kernel-module-mismatch",
        "docker: Error response from daemon",
        "nvidia-container-cli: initialization error: nvml error: driver/library version"
        " mismatch: unknown.",
        ("Reboot",),
    ),
    Wording(
        "torchserve-request-size-limit",
        "io.netty.handler.codec.CorruptedFrameException",
        "io.netty.handler.codec.CorruptedFrameException: Message size exceed limit: 15615479",
        ("max_response_size",),
    ),
)

#: slug -> errors of other kinds that the runbook's signals must leave alone.
LOOK_ALIKES: dict[str, tuple[str, ...]] = {
    "hf-cache-dir-not-writable": (
        "OSError: [Errno 30] Read-only file system: '/app/output/model.bin'",
        "PermissionError: [Errno 13] Permission denied: '/data/train.csv'",
    ),
    "container-memlock-limit": (
        "NET/IB : Call to ibv_reg_mr failed with error Cannot allocate memory",
        "RuntimeError: DataLoader worker (pid 123) is killed by signal: Bus error.",
    ),
    "model-server-port-in-use": (
        "RuntimeError: The server socket has failed to listen on any local network address."
        " The server socket has failed to bind to [::]:29500 (errno: 98 - Address already"
        " in use).",
    ),
    "kserve-model-dir-empty": (
        "FileNotFoundError: [Errno 2] No such file or directory: '/mnt/data/train.json'",
    ),
    "k8s-gpu-device-plugin-no-gpus": (
        "Failed to initialize NVML: Unknown Error",
        "Failed to initialize NVML: Driver/library version mismatch",
    ),
}


(
    test_the_library_message_routes_to_its_documented_fix,
    test_errors_of_other_kinds_do_not_match_the_new_signals,
    test_each_runbook_cites_public_sources_and_has_signals,
) = batch_tests(WORDINGS, LOOK_ALIKES)
