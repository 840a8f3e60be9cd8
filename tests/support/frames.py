"""Frames that say whose layer failed: the user's own model, or a library's.

Whether a layer may be resized depends on them (:mod:`rca.suggestion.layer_width`): a bare
message shows neither, so a test that wants the resize step gives the user's frames.
"""

from __future__ import annotations

from ingest.parsing.frames import Frame, make_frame

__all__ = ["LIBRARY_FORWARD", "TORCH_LINEAR", "USER_FORWARD", "library_forward"]

TORCH_LINEAR = make_frame(
    "/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py",
    "forward",
    114,
    context_line="return F.linear(input, self.weight, self.bias)",
)
#: The user's own model: its forward calls the layer that fails (torch's frames after it).
USER_FORWARD = [
    make_frame("/home/me/train.py", "<module>", 80, context_line="out = model(x)"),
    make_frame("/home/me/net.py", "forward", 31, context_line="x = self.fc1(x)"),
    make_frame(
        "/usr/lib/python3.11/site-packages/torch/nn/modules/module.py",
        "_call_impl",
        1501,
        context_line="return forward_call(*args, **kwargs)",
    ),
    TORCH_LINEAR,
]


def library_forward(path: str, line: str, call: str = "out = model(x)") -> list[Frame]:
    """A library's module at ``path`` (under site-packages) runs the failing layer with
    ``line``; the user's script calls it with ``call``."""
    return [
        make_frame("/home/me/run.py", "main", 12, context_line=call),
        make_frame(f"/usr/lib/python3.11/site-packages/{path}", "forward", 88, context_line=line),
        TORCH_LINEAR,
    ]


#: A library's model: the user's script calls it, its own forward calls the layer.
LIBRARY_FORWARD = library_forward("somelib/models/encoder.py", "return self.proj(h)")
