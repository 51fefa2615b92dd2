"""`tt.keras.datasets`: Keras's small datasets, fetched into Keras's cache folder by
`tt.keras.utils.get_file` the first time and read from there later; what the files hold is
checked before it becomes arrays (tracer/keras/datasets/idx.py)."""

from tracer.keras.datasets import fashion_mnist, mnist

__all__ = ["fashion_mnist", "mnist"]
