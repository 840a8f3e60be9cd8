"""`with watch(model, service=...)`: when the block raises, report which module failed on what.

Forward pre-hooks push each submodule on a per-thread stack and forward hooks pop it, so
at the moment an exception escapes the block the stack's top is the module that was
running: the innermost one entered and not left. The hooks are torch's global module
hooks, filtered to this model's modules, not hooks on each module: a hook on a module
turns off PyTorch's fused inference path of `nn.TransformerEncoderLayer` (its fast path
checks every submodule for hooks), which cost 25% of a forward in bench/client_hooks.py.
The failing module's arguments are still referenced by the stack, so their shapes,
dtypes and devices are read then, not on every call. On a successful call a module keeps
only the shape of its first input (one small tuple, overwritten), which is the
"expected" shape of modules that declare none.

The exception is re-raised unchanged (the same object, the same traceback). Reporting
never raises: a bug of ours or an unreachable server must not replace the service's
own error.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from types import TracebackType
from typing import Any

from rootcause_client import cuda, incident, shapes
from rootcause_client.client import current_transport, default_service

log = logging.getLogger("rootcause_client")
CONTEXT_ATTR = "_rootcause_context"  # where the recorded context rides on the exception


class watch:  # noqa: N801 - used as `with watch(model)`, like contextlib's helpers
    """Record the failing module's inputs while the block runs; report on an exception."""

    def __init__(
        self,
        model: Any,
        *,
        service: str = "",
        environment: str = "",
        model_id: str = "",
        send: bool = True,
        **context: Any,
    ) -> None:
        self.model = model
        self.service = service
        self.environment = environment
        self.context = {"model_id": model_id, **context}
        self.send = send  # False: only attach the context to the exception (for Sentry)
        self.reported: dict[str, Any] | None = None  # the last incident built, for callers
        self._names: dict[int, str] = {}
        self._last_good: dict[int, tuple[int, ...]] = {}
        self._local = threading.local()
        self._handles: list[Any] = []

    # -- hooks -----------------------------------------------------------------------
    def _stack(self) -> list[tuple[Any, Any]]:
        stack: list[tuple[Any, Any]] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def _enter(self, module: Any, args: Any) -> None:
        if id(module) not in self._names:
            return  # another model's module: the hooks are global
        stack = self._stack()
        if module is self.model:
            stack.clear()  # a new forward pass: what an earlier caught exception left is stale
        stack.append((module, args))

    def _leave(self, module: Any, args: Any, output: Any) -> None:
        if id(module) not in self._names:
            return
        stack = self._stack()
        while stack:
            entered, _ = stack.pop()
            if entered is module:
                break
        shape = getattr(args[0], "shape", None) if args else None
        if shape is not None:  # a torch.Size is an immutable tuple: kept as it is
            self._last_good[id(module)] = shape

    def __enter__(self) -> watch:
        from torch.nn.modules import module as torch_module

        for name, module in self.model.named_modules():
            self._names[id(module)] = name or type(module).__name__
        self._handles.append(torch_module.register_module_forward_pre_hook(self._enter))
        self._handles.append(torch_module.register_module_forward_hook(self._leave))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        try:
            if isinstance(exc, Exception):
                self._report(exc)
        except Exception:
            log.exception("rootcause_client: could not report the failure")
        finally:
            for handle in self._handles:
                handle.remove()
            self._handles.clear()
            self._stack().clear()
        return False  # never swallow: the service's exception goes on as it was

    # -- the failure -----------------------------------------------------------------
    def failure(self) -> dict[str, Any]:
        """The failing module, its inputs and the shape diff, from the current stack."""
        stack = self._stack()
        if not stack:
            return {}
        module, args = stack[-1]
        path = self._names.get(id(module), type(module).__name__)
        found = shapes.tensors(args)
        inputs = [shapes.describe(t) for t in found]
        out: dict[str, Any] = {"module": path, "module_type": type(module).__name__}
        if inputs:
            out["inputs"] = inputs
            actual = inputs[0]["shape"]
            good = self._last_good.get(id(module))
            wanted = shapes.expected(module, actual, list(good) if good else None)
            if shapes.mismatch(wanted, actual):
                out["shape_diff"] = [
                    {
                        "tensor": f"{path}.input",
                        "op": type(module).__name__,
                        "expected": wanted,
                        "actual": actual,
                    }
                ]
        return out

    def _report(self, exc: Exception) -> None:
        if getattr(exc, CONTEXT_ATTR, None) is not None:
            return  # an inner watch (or the Keras callback) has reported it already
        failure = self.failure()
        device = failure.get("inputs", [{}])[0].get("device") if failure.get("inputs") else None
        gpu = cuda.memory_stats(device if device and device.startswith("cuda") else None)
        context = {"framework": "pytorch", **_torch_version(), **self.context}
        built = incident.build(
            exc,
            service=self.service or default_service(),
            environment=self.environment,
            context=context,
            failure=failure,
            gpu=gpu,
        )
        self.reported = built
        with contextlib.suppress(AttributeError):  # an exception type with __slots__
            setattr(exc, CONTEXT_ATTR, {**failure, "cuda_memory_mb": gpu} if gpu else failure)
        if self.send:
            current_transport().submit(built)


def _torch_version() -> dict[str, str]:
    import sys

    torch = sys.modules.get("torch")
    return {"framework_version": str(getattr(torch, "__version__", ""))} if torch else {}
