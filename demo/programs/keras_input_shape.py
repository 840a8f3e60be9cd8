"""A Keras MLP built for flattened 28x28 images (784 features) given unflattened ones.
Runs only where TensorFlow is installed."""

import numpy as np

REQUIRES = ("tensorflow",)
BATCH = 2

REPORT = {
    "service": "digits",
    "inference_context": {"model_id": "mnist-mlp", "batch_size": BATCH, "framework": "keras"},
    "shape_diff": [
        {"tensor": "images", "op": "dense", "expected": [None, 784], "actual": [BATCH, 28, 28]}
    ],
}


def main() -> None:
    from tensorflow import keras

    model = keras.Sequential([keras.Input(shape=(784,)), keras.layers.Dense(10)])
    model.predict(np.zeros((BATCH, 28, 28), dtype="float32"), verbose=0)
