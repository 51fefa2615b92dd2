"""Grids and masks made from ranges, as TensorFlow defines them: `meshgrid` and
`sequence_mask`. Compositions of reshape, broadcast_to, range and a comparison, so their
gradients (meshgrid's sums back to each vector), batching and C are those ops'."""

from tracer import dtypes
from tracer.dtypes import as_dtype
from tracer.ops.array_ops import cast, range_, reshape
from tracer.ops.broadcast_ops import broadcast_to
from tracer.ops.convert import as_tensor, length_value
from tracer.ops.math_ops import less


def meshgrid(*args, **kwargs):
    """N tensors of the grid spanned by N vectors (each flattened first): with
    indexing="xy" (the default) their shape is (len(x1), len(x0), len(x2), ...), the first
    two axes swapped as for plotting, with "ij" (len(x0), len(x1), ...); output k holds
    vector k along its axis.

    >>> x, y = tt.meshgrid([1, 2, 3], [4, 5])
    >>> x.numpy().tolist(), y.numpy().tolist()
    ([[1, 2, 3], [1, 2, 3]], [[4, 4, 4], [5, 5, 5]])
    """
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"meshgrid got unexpected keyword arguments {sorted(kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f'meshgrid: indexing must be "xy" or "ij", not {indexing!r}')
    vectors = [reshape(as_tensor(x), (-1,)) for x in args]
    axes = list(range(len(vectors)))
    if indexing == "xy" and len(vectors) > 1:
        axes[0], axes[1] = 1, 0  # vector 0 runs along axis 1, vector 1 along axis 0
    shape = [0] * len(vectors)
    for vector, axis in zip(vectors, axes):
        shape[axis] = vector.shape[0]
    grids = []
    for vector, axis in zip(vectors, axes):
        along = [1] * len(vectors)
        along[axis] = vector.shape[0]
        grids.append(broadcast_to(reshape(vector, tuple(along)), tuple(shape)))
    return grids


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """mask[..., j] = j < lengths[...], of shape lengths.shape + (maxlen,); maxlen is the
    largest length where not given (then the lengths must be known when a function is
    traced).

    >>> tt.sequence_mask([1, 3, 2], 4).numpy().astype(int).tolist()
    [[1, 0, 0, 0], [1, 1, 1, 0], [1, 1, 0, 0]]
    """
    lengths = as_tensor(lengths)
    if not lengths.dtype.is_integer:
        raise TypeError(f"sequence_mask: lengths must be integers, not {lengths.dtype.name}")
    if maxlen is None:
        known = length_value(lengths, "sequence_mask's lengths (with no maxlen)")
        maxlen = int(known.max()) if known.size else 0
    maxlen = int(length_value(maxlen, "sequence_mask's maxlen"))
    if maxlen < 0:
        raise ValueError(f"sequence_mask: maxlen must be non-negative, not {maxlen}")
    positions = range_(maxlen, dtype=lengths.dtype)
    mask = less(positions, reshape(lengths, (*lengths.shape, 1)))
    dtype = as_dtype(dtype)
    return mask if dtype == dtypes.bool else cast(mask, dtype)
