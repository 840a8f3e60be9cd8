"""The facts a runbook step may name in ``fits`` or ``unless``, each with what it says.

Kept apart from :mod:`rca.corpus.step_metadata` (which parses the ``Applies:`` line and
re-exports :data:`FACTS`) because the list grows with every kind of fact an incident can
show, and each entry's wording is what a provider and validation read: one sentence per fact,
true for every incident that shows it.
"""

from __future__ import annotations

__all__ = ["FACTS"]

#: The facts a step may name in ``fits`` or ``unless``, each computed from the incident by
#: :mod:`rca.suggestion.incident_facts`. A new kind of fact needs code there;
#: which steps it selects is runbook data.
FACTS: dict[str, str] = {
    "batch-axis-missing": "the input has one axis fewer than expected, the leading (batch) one",
    "trailing-axis-missing": "the input has one axis fewer than expected, the trailing one",
    "same-elements-other-rank": "the input has the expected element count in another rank",
    "input-has-extra-axis": (
        "the input has more axes than the layer accepts (the rank found is above the one"
        " expected): adding an axis makes it worse"
    ),
    "input-lacks-axis": "the input has fewer axes than the layer accepts",
    "batch-axis-present": (
        "the input lacks an axis but the shape shown already has its batch axis: a new leading"
        " (batch) axis leaves every axis one place off"
    ),
    "channel-axis-missing": "the input has its batch axis and lacks the channel (feature) axis",
    "generation-does-not-stop": "generation runs to the maximum length: EOS is never produced",
    "pad-shares-eos-id": "the pad token and the EOS token already share one id",
    "int64-refused": "the message says 64-bit integer (int64) inputs are refused",
    "signal-other-than-bus": "the message names the signal that killed the process: not SIGBUS",
    "label-negative": "the out-of-range class label the message names is negative (padding)",
    "label-not-negative": "the out-of-range class label the message names is not negative",
    "loss-diverging": "the logged loss rose at every step by orders of magnitude, all finite",
    "grayscale-input": "a convolution expecting 3 input channels got 1",
    "rgba-input": "a convolution expecting 3 input channels got 4",
    "channels-last-input": "a convolution got its channels in the last axis",
    "features-folded-into-rows": (
        "a matmul input has one column while the layer takes several, and its row count is a"
        " whole multiple of the layer's width: each sample's values are spread over the rows"
    ),
    "input-smaller-than-one-row": (
        "the whole matmul input holds fewer values than one row of a layer at least 8 times its"
        " width: another tensor, or one read along the wrong axis"
    ),
    "layer-built-in-user-code": (
        "the user's own frames construct the failing layer, or run it from a model's forward"
        " in the user's files"
    ),
    "layer-origin-not-shown": (
        "nothing shows the user's code built the failing layer: resizing it may discard"
        " trained weights"
    ),
    "layer-resize-unsupported": (
        "the matmul shapes say the input is wrong, not the layer: its values folded into rows,"
        " or an input smaller than one row that nothing shows the user's code built the layer for"
    ),
    "path-shown-absolute": (
        "the message or log lines name the file being loaded, and only by an absolute path"
    ),
    "file-found-format-rejected": (
        "the loader reached the file and rejected its contents (its format, header or"
        " encoding: protobuf parsing failed, not a zip archive, HDF5 signature not found,"
        " invalid load key, header too large), and nothing says a file was not found"
    ),
    "file-location-ruled-out": (
        "the message names the loaded file by an absolute path and says the loader read it"
        " and rejected its contents: the file is where the loader looked, so making the path"
        " absolute, checking that it exists or changing the working directory cannot fix it"
    ),
    "state-dict-keys-prefixed": "checkpoint keys are the model's keys with a prefix added or lost",
    "memory-fragmented": "the OOM figures show much memory reserved but unallocated",
    "memory-not-fragmented": "the OOM figures show the reserved memory is really allocated",
    "state-dict-keys-partly-prefixed": (
        "some listed state_dict keys differ by a prefix, but most of them do not"
    ),
    "state-dict-keys-not-prefixed": (
        "the message lists state_dict keys and no prefix pairs a missing with an unexpected one"
    ),
    "state-dict-keys-buffer-like": (
        "the state_dict keys that differ are one or two tensor names repeated across layers,"
        " neither a weight nor a bias (a counter or buffer that one version saves)"
    ),
    "state-dict-keys-only-extra": (
        "the message lists only unexpected state_dict keys: the checkpoint has every key the"
        " model expects, plus others"
    ),
    "state-dict-keys-top-level": (
        "model keys are missing and some unexpected keys are top-level entries (no dot), such"
        " as a training checkpoint's epoch or nested state_dict"
    ),
    "allocation-fits-free": "the OOM's failed allocation is smaller than the free memory reported",
    "memory-held-elsewhere": (
        "the OOM's device is nearly full while this process reserved only a small share of it"
    ),
    "memory-held-by-this-process": (
        "the OOM figures show this process's own allocator holds most of the device memory in"
        " use (what other processes hold could not make room for it)"
    ),
    "layer-pretrained": "the failing model or layer was loaded with pretrained weights",
    "pretrained-weights-loaded": (
        "the code or logs load trained weights (a checkpoint, state_dict or weights file)"
    ),
    "library-version-mismatch": (
        "a line says a library was built with one version of another and found a different one"
    ),
    "required-version-installed": (
        "the version the message requires is the one the text shows installed already"
    ),
    "version-below-requirement": (
        "the text says a named package is older than a version the code requires"
    ),
    "version-above-supported": (
        "the text says a named package is newer than the versions the code supports"
    ),
    "runtime-older-than-build": (
        "a library (or file reader) runs at an older version than the code, engine or file"
        " was built for"
    ),
    "runtime-newer-than-build": (
        "a library runs at a newer version than the code or engine was built for"
    ),
    "driver-older-than-runtime": (
        "the NVIDIA driver is older than the CUDA runtime in use (driver too old, insufficient"
        " for the runtime version)"
    ),
    "driver-library-mismatch": (
        "the loaded NVIDIA kernel module and the user-space driver libraries are of different"
        " versions (NVRM API mismatch, NVML driver/library version mismatch): the driver is"
        " loaded, an older module under newer libraries or the other way round"
    ),
    "driver-libraries-older": (
        "the user-space NVIDIA driver libraries are older than the loaded kernel module (NVRM"
        " API mismatch): typically driver libraries installed in a container image, which a"
        " reboot or module reload does not replace"
    ),
    "driver-moved-older": (
        "the driver the step moves to is older than the one the incident shows installed, or"
        " it downgrades a driver the message says is too old (no older driver runs a CUDA"
        " runtime the installed one cannot): read from the step's or the suggestion's own"
        " words"
    ),
    "module-named-missing": (
        "a module name the step tells the user to use is one the message says the model lacks"
        " (PEFT's `Target modules [...] not found in the base model`), or the model's module"
        " names the incident prints include none it names: read from the step's or the"
        " suggestion's own words"
    ),
    "model-attention-fused": (
        "the model computes attention's query, key and value in one fused module: its printed"
        " modules show one (query_key_value, c_attn, Wqkv)"
    ),
    "model-attention-separate": (
        "the model keeps attention's query, key and value projections separate: its printed"
        " modules show them (q_proj, k_proj, v_proj)"
    ),
    "attention-layout-guessed": (
        "the step or suggestion tells the user to use a fused attention projection"
        " (query_key_value, c_attn) while no printed model shows the attention layout: PEFT's"
        " names not found fit either layout (q_proj missing on BLOOM and on BERT alike): read"
        " from the step's or the suggestion's own words"
    ),
    "library-major-missing": (
        "a binary could not load a shared library at the major version it was linked against"
        " (libcublasLt.so.11: cannot open shared object file)"
    ),
    "public-name-missing": "a name imported from a package's top or first-level module is missing",
    "internal-name-missing": "a name imported from a package's internal module is missing",
    "library-call-rejects-argument": (
        "an installed package's own code passes a keyword argument the function it calls"
        " does not accept (its frame raised the TypeError)"
    ),
    "module-name-missing": "a package's module has no attribute the code uses",
    "name-used-by-other-package": (
        "the missing name is used by another installed package's code, not the user's"
    ),
    "argument-removed-by-release": (
        "a keyword argument a library's code passes was, the message or logs say, removed or"
        " deprecated by a release of the library it calls"
    ),
    "removal-unstated": (
        "an argument or module name is missing and neither message nor logs say a release"
        " removed or deprecated it"
    ),
    "name-removed-by-release": (
        "the message or logs say a release removed or deprecated the missing name (a module's"
        " attribute, or a name that cannot be imported)"
    ),
    "extension-symbol-missing": "a compiled extension under site-packages has an undefined symbol",
    "autograd-off-in-code": "the failing code already runs under torch.no_grad / inference_mode",
    "cuda-graphs-captured": "the logs show CUDA graphs being captured",
    "gpu-support-not-built": (
        "the installed build has no GPU support (it says so, or lists only CPU providers)"
    ),
    "warning-only": "the message is a warning and no line of the incident shows an error",
    "error-raised": "the message is an error: an exception, a traceback or an error log line",
    "model-already-quantized": (
        "the model in use is quantized already (a GPTQ/AWQ/GGUF/4-bit checkpoint or load)"
    ),
    "checkpoint-tensors-empty": (
        "the checkpoint's tensors are empty (torch.Size([0])): partitioned weights saved"
        " without gathering"
    ),
    "model-tensors-empty": (
        "the model's tensors are empty (torch.Size([0])): the model was built partitioned"
    ),
    "state-dict-prefix-on-model-side": (
        "the model's keys carry the prefix and the checkpoint's do not: the model was wrapped"
        " after the checkpoint was saved unwrapped"
    ),
    "state-dict-keys-all-prefixed": (
        "every state_dict key shown differs by one prefix (added, lost or swapped), so a"
        " non-strict load would match none of them (read from the keys shown; lists may be cut)"
    ),
    "state-dict-prefix-on-checkpoint-side": (
        "the checkpoint's keys carry the prefix and the model's do not: a wrapped model's save"
    ),
    "runs-training": "the failing code is a training run (backward, optimizer step, fit, Trainer)",
    "runs-serving": (
        "the failing code is a serving or inference run (an engine, generate, predict, requests)"
        " and shows no training loop"
    ),
    "cpu-instruction-missing": "SIGILL: the CPU lacks an instruction set (AVX) the binary uses",
    "custom-operator-unregistered": (
        "the ONNX model uses an operator outside the standard ONNX domains that has no"
        " registered implementation (a custom op)"
    ),
    "node-opset-implemented": "the runtime shown knows the node's opset: its types lack a kernel",
    "gpu-libraries-not-loaded": "an installed GPU build could not load its CUDA/cuDNN libraries",
    "linker-library-missing": "the linker ran and cannot find a library (`ld: cannot find -lcuda`)",
    "layers-already-built": "every Keras layer the loading error lists is shown `built=True`",
    "earlier-release-worked": (
        "the incident says the same setup worked with an earlier release of its software"
        " (works in 0.2.6, fails in 0.2.7): the model fitted then, the release changed"
    ),
    "keras-3-in-use": (
        "the incident shows Keras 3 running (a keras 3.x version, or a layer printed as"
        " `<LSTM name=lstm, built=True>`): Keras 2's API (`load_weights(by_name=True)`) is gone"
    ),
    "nccl-debug-shown": (
        "NCCL's debug lines (`NCCL INFO`, `NCCL WARN`) or its last warning (the text under"
        " `Last error:` in PyTorch's NCCL error) are in the incident"
    ),
    "parser-errors-shown": "the errors of TensorRT's ONNX parser (`ModelImporter.cpp`) are shown",
    "parser-error-not-batch": "the ONNX parser's errors are shown, none about the explicit batch",
    "numpy-older-than-build": (
        "NumPy's C-API check says the installed numpy is older than the numpy the failing"
        " compiled module was built against (compiled against API version 0xA, numpy is 0xB < A)"
    ),
    "numpy-newer-than-build": (
        "NumPy's C-API check says the installed numpy is newer than the numpy the failing"
        " compiled module was built against (a module compiled using NumPy 1.x run in NumPy 2)"
    ),
    "cuda-kernel-in-extension": (
        "a compiled extension's own code reported the CUDA error (its launch check's `CUDA"
        " kernel failed : ...`, or an error naming its `.cu` source outside PyTorch's), so the"
        " kernel that failed is the extension's, built for its own architecture list"
    ),
    "size-mismatch-not-vocab": (
        "no size-mismatched tensor named is a vocabulary matrix differing in its rows (tokens)"
    ),
}
