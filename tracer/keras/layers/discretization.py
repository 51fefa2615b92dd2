"""Keras's Discretization layer: numbers into buckets between boundaries, given or learnt
from data by `adapt`.

A value's bucket is the number of boundaries at or below it (numpy's `digitize`), an int32
by default (Keras's on TensorFlow), or encoded as CategoryEncoding encodes (one_hot, multi_hot, count) over
len(bin_boundaries) + 1 buckets. `adapt` learns `num_bins - 1` boundaries as Keras 3.15
does, so that an adapted layer gives Keras's boundaries: each batch (as float32) is
summarized by every (n epsilon)-th of its sorted values, each weighing n epsilon; summaries
are merged in value order and compressed, by interpolating the cumulative weights, to
1 / epsilon points; the boundaries are the compression of the whole summary to `num_bins`
points, the last dropped.
"""

import numpy as np

from tracer.keras.layers.category_encoding import encoded
from tracer.keras.layers.layer import Layer
from tracer.ops import array_ops, math_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.tensor import convert_to_tensor

_MODES = ("int", "one_hot", "multi_hot", "count")


class Discretization(Layer):
    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int", sparse=False, **kwargs):  # fmt: skip
        super().__init__(**kwargs)
        if output_mode not in _MODES:
            raise ValueError(
                f"Discretization: output_mode must be one of {_MODES}, not {output_mode!r}"
            )
        if sparse:
            raise NotImplementedError(
                "Discretization: sparse=True gives a SparseTensor, which tracer does not have"
            )
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"Discretization: num_bins must be at least 0, not {num_bins}")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError("Discretization: give num_bins or bin_boundaries, not both")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = None if bin_boundaries is None else [float(b) for b in bin_boundaries]
        self.num_bins, self.epsilon = num_bins, float(epsilon)
        self.output_mode, self.sparse = output_mode, False

    def adapt(self, data, steps=None):
        """Learn `num_bins - 1` boundaries from `data`: an array, a tensor, or a dataset (or
        iterable) of batches, at most `steps` of them."""
        if self.num_bins is None:
            raise ValueError(
                "Cannot adapt a Discretization layer that has been initialized with "
                "`bin_boundaries`, use `num_bins` instead."
            )
        summary = _EMPTY
        for batch in _batches(data, steps):
            values = np.asarray(batch, dtype=np.float32)
            summary = _compressed(_merged(_summarized(values, self.epsilon), summary), self.epsilon)
        self.bin_boundaries = _compressed(summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError(
                "You need to either pass the `bin_boundaries` argument at construction time "
                "or call `adapt(dataset)` before you can start using the `Discretization` layer."
            )
        x = convert_to_tensor(inputs)
        if not x.dtype.is_floating:
            x = array_ops.cast(x, "float32")
        boundaries = np.asarray(self.bin_boundaries, x.dtype.as_numpy_dtype)
        below = math_ops.less_equal(boundaries, array_ops.expand_dims(x, -1))
        buckets = reduce_sum(array_ops.cast(below, "int32"), axis=-1)
        if self.output_mode == "int":
            return buckets
        return encoded(
            buckets,
            self.output_mode,
            len(self.bin_boundaries) + 1,
            self.dtype,
            what="Discretization",
        )

    def get_config(self):
        # Keras's config of this layer has no `trainable`
        return {
            "name": self.name,
            "dtype": self.dtype.name,
            "bin_boundaries": self.bin_boundaries,
            "num_bins": self.num_bins,
            "epsilon": self.epsilon,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
        }

    @classmethod
    def from_config(cls, config):
        """An adapted layer's config holds both num_bins and its boundaries, which the
        constructor refuses together: the boundaries are set after, as Keras does."""
        config = dict(config)
        boundaries = (
            config.pop("bin_boundaries", None) if config.get("num_bins") is not None else None
        )
        layer = super().from_config(config)
        if boundaries is not None:
            layer.bin_boundaries = [float(b) for b in boundaries]
        return layer


_EMPTY = np.zeros((2, 0), np.float32)


def _batches(data, steps):
    """The batches of `data`: itself where it is an array or a tensor."""
    if hasattr(data, "shape") and not hasattr(data, "element_spec"):
        yield np.asarray(data)
        return
    for k, batch in enumerate(data):
        if steps is not None and k >= steps:
            return
        yield np.asarray(batch)


def _summarized(values, epsilon):
    """[values, weights] of the sorted values every step = max(n epsilon, 1), from the
    step-th, each weighing the step."""
    values = np.sort(values.reshape(-1))
    step = max(values.size / (1.0 / epsilon), 1)
    kept = values[int(step - 1) :: int(step)]
    return np.stack([kept, np.full_like(kept, step)])


def _merged(first, second):
    both = np.concatenate((first, second), axis=1)
    return both[:, np.argsort(both[0])]


def _compressed(summary, epsilon):
    """The summary at the points 1 / epsilon of the way along its cumulative weight, if it
    has more points than that."""
    if summary.shape[1] * epsilon < 1:
        return summary
    fractions = epsilon + np.arange(0.0, 1.0, epsilon)
    cumulative = summary[1].cumsum()
    shares = cumulative / cumulative[-1]
    points = np.interp(fractions, shares, summary[0])
    cumulative = np.interp(fractions, shares, cumulative)
    weights = np.diff(cumulative, prepend=0.0)
    return np.stack((points, weights)).astype(np.float32)
