"""A Keras callback that reports a failing `fit`/`evaluate`/`predict` step with its shapes.

Keras callbacks are told about batches, not exceptions, so the callback wraps the model's
`train_step`, `test_step` and `predict_step` when Keras hands it the model: a step that
raises is reported (the batch's shapes against the model's declared inputs, and the layer
that the error names) and the exception goes on unchanged. Keras checks input shapes
once, symbolically, before it creates the callbacks of a `fit`; to see those errors too,
give the callback the model when you make it, before the call: it then also wraps the
model's `fit`, `evaluate` and `predict`. Works with any Keras 3 backend; with TensorFlow,
errors raised inside a compiled graph surface at trace time, where shape errors are.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from typing import Any

import keras

from rootcause_client import incident, shapes
from rootcause_client.client import current_transport, default_service
from rootcause_client.watch import CONTEXT_ATTR

log = logging.getLogger("rootcause_client")
STEPS = ("train_step", "test_step", "predict_step")
CALLS = ("fit", "evaluate", "predict")


class RootcauseCallback(keras.callbacks.Callback):
    """`cb = RootcauseCallback(model, service="trainer")`, then `model.fit(..., callbacks=[cb])`."""

    def __init__(
        self,
        model: Any = None,
        *,
        service: str = "",
        environment: str = "",
        send: bool = True,
        **context: Any,
    ) -> None:
        super().__init__()
        self.service = service
        self.environment = environment
        self.send = send
        self.context = context
        self.reported: dict[str, Any] | None = None
        if model is not None:
            self._model_given = model
            for name in CALLS:
                call = getattr(model, name, None)
                if call is not None and not getattr(call, "_rootcause", False):
                    setattr(model, name, self._wrap(call, whole_call=True))

    def set_model(self, model: Any) -> None:
        super().set_model(model)
        for name in STEPS:
            step = getattr(model, name, None)
            if step is not None and not getattr(step, "_rootcause", False):
                setattr(model, name, self._wrap(step))

    def _wrap(self, step: Any, whole_call: bool = False) -> Any:
        @functools.wraps(step)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            try:
                return step(*args, **kwargs)
            except Exception as exc:
                data = args[0] if args else kwargs.get("x", kwargs.get("data"))
                try:
                    self._report(exc, (data,) if whole_call else data)
                except Exception:
                    log.exception("rootcause_client: could not report the failure")
                raise

        wrapped._rootcause = True  # type: ignore[attr-defined]
        return wrapped

    def _the_model(self) -> Any:
        model = getattr(self, "_model", None)
        return model if model is not None else getattr(self, "_model_given", None)

    def failure(self, exc: Exception, data: Any) -> dict[str, Any]:
        """The batch's inputs, the layer the message names, and the input shape diff."""
        x = data[0] if isinstance(data, (tuple, list)) and data else data
        inputs = [shapes.describe(t) for t in shapes.tensors(x)]
        out: dict[str, Any] = {"inputs": inputs} if inputs else {}
        message = str(exc)
        model = self._the_model()
        for layer in getattr(model, "layers", []):
            if f"'{layer.name}'" in message:
                out["module"] = layer.name
                out["module_type"] = type(layer).__name__
                break
        declared = [list(t.shape) for t in getattr(model, "inputs", None) or []]
        if inputs and declared:
            wanted, actual = declared[0], inputs[0]["shape"]
            if shapes.mismatch(wanted, actual):
                out["shape_diff"] = [
                    {"tensor": "x", "op": out.get("module_type", "input"),
                     "expected": wanted, "actual": actual}
                ]  # fmt: skip
        return out

    def _report(self, exc: Exception, data: Any) -> None:
        if getattr(exc, CONTEXT_ATTR, None) is not None:
            return  # reported already (a nested step, or a surrounding watch)
        failure = self.failure(exc, data)
        context = {
            "framework": "keras",
            "framework_version": keras.__version__,
            "backend": keras.backend.backend(),
            "model_id": getattr(self._the_model(), "name", ""),
            **self.context,
        }
        self.reported = incident.build(
            exc,
            service=self.service or default_service(),
            environment=self.environment,
            context=context,
            failure=failure,
        )
        with contextlib.suppress(AttributeError):
            setattr(exc, CONTEXT_ATTR, failure)
        if self.send:
            current_transport().submit(self.reported)
