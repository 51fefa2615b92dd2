"""`tt.keras.datasets.fashion_mnist`: Zalando's Fashion-MNIST, as Keras fetches it (four
gzipped IDX files)."""

import os

from tracer.keras.datasets.idx import read_idx
from tracer.keras.downloads import get_file

BASE = "https://storage.googleapis.com/tensorflow/tf-keras-datasets/"
FILES = (  # (fetched in this order, as by Keras)
    "train-labels-idx1-ubyte.gz",
    "train-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
)


def load_data():
    """`((x_train, y_train), (x_test, y_test))`: 28 x 28 uint8 images of clothes and their
    uint8 classes (0-9), from `datasets/fashion-mnist` in Keras's cache folder, fetched the
    first time."""
    folder = os.path.join("datasets", "fashion-mnist")
    paths = [get_file(name, origin=BASE + name, cache_subdir=folder) for name in FILES]
    y_train, x_train, y_test, x_test = (read_idx(path, gzipped=True) for path in paths)
    for images, labels, part in ((x_train, y_train, "train"), (x_test, y_test, "test")):
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise ValueError(
                f"fashion_mnist.load_data: the {part} images {images.shape} and labels "
                f"{labels.shape} do not pair up"
            )
    return (x_train, y_train), (x_test, y_test)
