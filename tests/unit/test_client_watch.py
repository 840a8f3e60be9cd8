"""rootcause_client.watch: which module failed on what, and the service's error untouched."""

from __future__ import annotations

import contextlib
import threading

import pytest
from rootcause_client import shapes
from rootcause_client.watch import CONTEXT_ATTR, watch

torch = pytest.importorskip("torch")
nn = torch.nn


class Ranker(nn.Module):
    """A model whose head was built for 512 features while the encoder gives 256."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 256), nn.ReLU())
        self.head = nn.Sequential(nn.Dropout(0.0), nn.Linear(512, 10))

    def forward(self, x):
        return self.head(self.encoder(x))


def _fail(model, batch, **options):
    recorder = watch(model, send=False, service="ranker", **options)
    with pytest.raises(Exception) as raised, recorder:
        model(batch)
    return recorder, raised.value


def test_names_the_failing_module_and_its_shape_diff():
    recorder, exc = _fail(Ranker(), torch.zeros(4, 16), model_id="ranker-v3")
    incident = recorder.reported
    assert incident["tags"]["module"] == "head.1"
    assert incident["shape_diff"] == [
        {"tensor": "head.1.input", "op": "Linear", "expected": [None, 512], "actual": [4, 256]}
    ]
    assert incident["inference_context"]["inputs"] == [
        {"shape": [4, 256], "dtype": "float32", "device": "cpu"}
    ]
    assert incident["inference_context"]["model_id"] == "ranker-v3"
    assert incident["inference_context"]["framework"] == "pytorch"
    assert incident["error_type"] == "RuntimeError"
    assert "4x256 and 512x10" in incident["message"]
    assert "in forward" in incident["stacktrace"]  # the traceback Python printed
    assert getattr(exc, CONTEXT_ATTR)["module"] == "head.1"


def test_the_exception_goes_on_unchanged_and_the_hooks_are_removed():
    model = Ranker()
    original = None
    recorder = watch(model, send=False)
    try:
        with recorder:
            try:
                model(torch.zeros(2, 16))
            except RuntimeError as exc:
                original = exc
                raise
    except RuntimeError as seen:
        assert seen is original
        assert seen.__traceback__ is not None
    else:
        pytest.fail("the error was swallowed")
    from torch.nn.modules import module as torch_module

    assert not torch_module._global_forward_hooks
    assert not torch_module._global_forward_pre_hooks
    for module in model.modules():  # hooks on a module would turn off fused fast paths
        assert not module._forward_hooks and not module._forward_pre_hooks


def test_nothing_is_reported_when_nothing_fails():
    model = nn.Sequential(nn.Linear(8, 4))
    recorder = watch(model, send=False)
    with recorder:
        out = model(torch.zeros(3, 8))
    assert out.shape == (3, 4)
    assert recorder.reported is None


def test_conv_channels_and_a_caught_error_earlier_in_the_block():
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8))
    recorder = watch(model, send=False)
    with pytest.raises(RuntimeError), recorder:
        with contextlib.suppress(RuntimeError):  # handled by the service: nothing stale left
            model(torch.zeros(2, 3, 4))
        model(torch.zeros(2, 3, 8, 8))  # fine
        model(torch.zeros(2, 1, 8, 8))  # grayscale images into an RGB model
    assert recorder.reported["shape_diff"][0]["expected"] == [2, 3, 8, 8]
    assert recorder.reported["shape_diff"][0]["actual"] == [2, 1, 8, 8]
    assert recorder.reported["tags"]["module"] == "0"


def test_a_module_without_declared_shapes_is_compared_with_its_last_good_input():
    class Reshape(nn.Module):
        def forward(self, x):
            return x.view(x.shape[0], 4, 4)

    model = nn.Sequential(Reshape())
    recorder = watch(model, send=False)
    with pytest.raises(RuntimeError), recorder:
        model(torch.zeros(5, 16))
        model(torch.zeros(5, 15))
    assert recorder.reported["shape_diff"][0]["expected"] == [None, 16]
    assert recorder.reported["shape_diff"][0]["actual"] == [5, 15]


def test_nested_watches_report_once():
    model = Ranker()
    inner = watch(model.head, send=False)
    outer = watch(model, send=False)
    with pytest.raises(RuntimeError), outer, inner:
        model(torch.zeros(1, 16))
    assert inner.reported is not None
    assert outer.reported is None


def test_threads_keep_their_own_stacks():
    model = Ranker()
    good = nn.Sequential(nn.Linear(16, 16))
    recorder = watch(model, send=False)

    def busy():
        with watch(good, send=False):
            for _ in range(50):
                good(torch.zeros(2, 16))

    with pytest.raises(RuntimeError), recorder:
        worker = threading.Thread(target=busy)
        worker.start()
        try:
            model(torch.zeros(2, 16))
        finally:
            worker.join()
    assert recorder.reported["tags"]["module"] == "head.1"


@pytest.mark.parametrize(
    ("expected", "actual", "fits"),
    [
        ([None, 512], [4, 512], True),
        ([None, 512], [4, 256], False),
        ([None, 512], [4, 2, 512], False),
        (None, [1], True),
    ],
)
def test_a_shape_fits_when_every_named_dimension_matches(expected, actual, fits):
    assert shapes.mismatch(expected, actual) is not fits


def test_argument_lists_are_read_only_a_few_tensors_deep():
    many = [torch.zeros(1)] * 1000
    assert len(shapes.tensors((many, {"a": torch.zeros(2)}))) == shapes.MAX_TENSORS
