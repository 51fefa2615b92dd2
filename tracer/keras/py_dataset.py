"""`tt.keras.utils.PyDataset` (also `Sequence`, its Keras 2 name): data that a Python class
serves a batch at a time, by index, for `fit`, `evaluate` and `predict`.

A subclass gives `__len__` (the batches of an epoch) and `__getitem__(index)` (one batch:
`x`, `(x,)`, `(x, y)` or `(x, y, sample_weight)`), and may give `on_epoch_begin` and
`on_epoch_end`, which the training loops call around each epoch, as Keras's. The batches are
read one after the other in the calling thread: `workers`, `use_multiprocessing` and
`max_queue_size` are kept, as Keras's PyDataset keeps them, and change nothing here.

>>> class Squares(tt.keras.utils.PyDataset):
...     def __len__(self):
...         return 2
...     def __getitem__(self, index):
...         x = np.full((3, 1), float(index), np.float32)
...         return x, x * x
>>> [y[:, 0].tolist() for _, y in Squares()]
[[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]
"""

import itertools
import warnings


class PyDataset:
    """The base of a dataset served by index; see the module's docstring."""

    def __init__(self, workers=1, use_multiprocessing=False, max_queue_size=10):
        self._workers = workers
        self._use_multiprocessing = use_multiprocessing
        self._max_queue_size = max_queue_size

    def _option(self, name, default):
        """An option the constructor keeps; its default, with Keras's warning, where a
        subclass's `__init__` did not call `super().__init__`."""
        if not hasattr(self, name):
            warnings.warn(
                "Your `PyDataset` class should call `super().__init__(**kwargs)` in its "
                "constructor. `**kwargs` can include `workers`, `use_multiprocessing`, "
                "`max_queue_size`.",
                stacklevel=3,
            )
            setattr(self, name, default)
        return getattr(self, name)

    @property
    def workers(self):
        return self._option("_workers", 1)

    @workers.setter
    def workers(self, value):
        self._workers = value

    @property
    def use_multiprocessing(self):
        return self._option("_use_multiprocessing", False)

    @use_multiprocessing.setter
    def use_multiprocessing(self, value):
        self._use_multiprocessing = value

    @property
    def max_queue_size(self):
        return self._option("_max_queue_size", 10)

    @max_queue_size.setter
    def max_queue_size(self, value):
        self._max_queue_size = value

    def __getitem__(self, index):
        """The batch at position `index`."""
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    @property
    def num_batches(self):
        """The batches of an epoch (`len(self)`), or None for a dataset without end."""
        if hasattr(self, "__len__"):
            return len(self)
        raise NotImplementedError(
            f"{type(self).__name__} must define __len__ (or a num_batches property, None for "
            "a dataset without end)"
        )

    def __iter__(self):
        """Every batch in order; without end where the dataset has none (no `__len__`)."""
        try:
            count = self.num_batches
        except NotImplementedError:
            count = None
        for index in itertools.count() if count is None else range(count):
            yield self[index]

    def on_epoch_begin(self):
        """Called before each epoch's first batch."""

    def on_epoch_end(self):
        """Called after each epoch's last batch."""


Sequence = PyDataset
