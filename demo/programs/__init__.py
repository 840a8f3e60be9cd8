"""The demo programs, in the order they run. Each module has `main()`, which raises the
error under study, and `REPORT`: what a service would send alongside it (its name, the
inference context, and the shapes it knows when the failure is a shape mismatch).
A module may list `REQUIRES` (importable names); it is skipped when one is missing."""

PROGRAMS = [
    "linear_width",
    "meta_device",
    "half_precision",
    "checkpoint_vocab",
    "tokenizer_overflow",
    "conv_channels",
    "class_count",
    "nan_loss",
    "cpu_oom",
    "keras_input_shape",
]
