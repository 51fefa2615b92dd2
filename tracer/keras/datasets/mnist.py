"""`tt.keras.datasets.mnist`: the MNIST digits, as Keras ships them (one .npz file)."""

import numpy as np

from tracer.keras.downloads import get_file

ORIGIN = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz"
SHA256 = "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1"
_ARRAYS = ("x_train", "y_train", "x_test", "y_test")


def load_data(path="mnist.npz"):
    """`((x_train, y_train), (x_test, y_test))`: 28 x 28 uint8 images and their uint8
    digits, from Keras's cache folder (`path` is the file's name there), fetched the first
    time and checked against its SHA-256."""
    found = get_file(fname=path, origin=ORIGIN, file_hash=SHA256)
    with np.load(found, allow_pickle=False) as arrays:
        missing = [name for name in _ARRAYS if name not in arrays.files]
        if missing:
            raise ValueError(f"mnist.load_data: {found} holds no {', '.join(missing)}")
        x_train, y_train, x_test, y_test = (arrays[name] for name in _ARRAYS)
    return (x_train, y_train), (x_test, y_test)
