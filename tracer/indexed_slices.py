"""IndexedSlices: a sparse gradient, rows of a dense tensor and where they go.

`tape.gradient` returns one for a source that reaches the target only through `tt.gather`
along axis 0 (an embedding lookup, say), as TensorFlow does. Rows listed twice add up
when densified; `tt.convert_to_tensor` (and any op given one) densifies it.
"""

import numpy as np

from tracer.tensor import Tensor


class IndexedSlices:
    """values[k] is row indices[k] of a tensor of shape dense_shape; all other rows are zero.

    >>> s = tt.IndexedSlices(tt.constant([[1.0, 2.0]]), tt.constant([2]), (3, 2))
    >>> tt.convert_to_tensor(s).numpy().tolist()
    [[0.0, 0.0], [0.0, 0.0], [1.0, 2.0]]
    """

    __slots__ = ("values", "indices", "_dense_shape")
    is_tensor_like = True  # tt.is_tensor's answer, as TensorFlow's for composites
    _component_names = ("values", "indices")  # its tensors' names in exported C

    def __init__(self, values, indices, dense_shape=None):
        from tracer.tensor import convert_to_tensor

        self.values = convert_to_tensor(values)
        self.indices = convert_to_tensor(indices)
        self._dense_shape = tuple(int(d) for d in dense_shape) if dense_shape is not None else None

    @property
    def dense_shape(self):
        return Tensor(np.array(self._dense_shape, dtype=np.int64))

    @property
    def shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self.values.dtype

    def _tensor_components(self):
        """Its tensors, for structures (tf.nest's view of a composite tensor): a compiled
        function returns an IndexedSlices as its values and indices, rebuilt after the call."""
        return (self.values, self.indices)

    def _from_components(self, tensors):
        values, indices = tensors
        return IndexedSlices(values, indices, self._dense_shape)

    def _densify(self):
        from tracer.ops.core import apply
        from tracer.ops.index_ops import SCATTER_ADD

        if self._dense_shape is None:
            raise ValueError("an IndexedSlices without dense_shape cannot be made dense")
        attrs = {"axis": 0, "shape": self._dense_shape}
        return apply(SCATTER_ADD, (self.values, self.indices), attrs)

    def numpy(self):
        return self._densify().numpy()

    def __array__(self, dtype=None, copy=None):
        value = np.asarray(self.numpy())
        return value if dtype is None else value.astype(dtype, copy=False)

    def __repr__(self):
        return (
            f"IndexedSlices(indices={self.indices.numpy()!r}, values=<{self.values.dtype.name}"
            f"{list(self.values.shape)}>, dense_shape={self._dense_shape})"
        )
