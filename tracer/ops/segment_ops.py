"""Segment reductions, as TensorFlow's: tt.math.segment_* (sorted ids), unsorted_segment_*,
and bincount.

    unsorted_segment_sum(data, ids, n)[i] = sum of data[j...] over the j... with ids[j...] == i

Four primitives, one per reduction (`unsorted_segment_sum`, `_prod`, `_max`, `_min`), on one
C template (templates/segment.c.j2): each element of `data` is combined into its segment's
row of the result, which starts at the reduction's identity (0, 1, the dtype's lowest or
highest value: what TensorFlow gives an empty segment). As in TensorFlow, a negative id
drops its element, and an id >= num_segments is an IndexError, the same message in every
backend. Everything else is composed of them:

- the sorted `segment_*` ops take ids known when they are called (eagerly, or constants of
  a traced function: the number of segments, ids[-1] + 1, is the length of the result),
  check them there (sorted, non-negative: an error naming the offending position, as
  TensorFlow's CPU kernel raises), and reduce with the unsorted primitive; an empty segment
  (a gap in the ids) gives 0 for every reduction but the product (1), as TensorFlow's;
- the means divide the sums by the counts (at least 1), TensorFlow's composition;
- bincount sums `weights` (or ones) by value; its values >= maxlength are dropped and a
  negative one is the error (the primitives' `drop="beyond"`).

Gradients are TensorFlow's, in tracer ops: the sum's is the cotangent gathered at each id
(zero where the id was dropped); max and min split a segment's cotangent equally among
its tied extrema (`_SegmentMinOrMaxGrad`); the product's is exact with zeros
(`_SegmentProdGrad`).
"""

import numpy as np

from codegen import forms
from codegen.ctypes import compute, literal, storage
from runtime.kernels import quiet
from tracer import dtypes
from tracer.dtypes import as_dtype
from tracer.errors import as_tf
from tracer.ir import dims
from tracer.ops import array_ops, math_ops
from tracer.ops.convert import as_tensor, length_value, static_int
from tracer.ops.core import apply
from tracer.ops.math_ops import conj_if_complex
from tracer.ops.registry import OUT, primitive
from tracer.ops.scatter_nd_ops import batch_along_batch_dims, gather_nd
from tracer.ops.tangent_rules import LINEAR, TRANSPOSED_VJP, tangent_or_zeros

# --- the primitives --------------------------------------------------------------------


def out_of_range(op, num_segments, drop="negative"):
    """The message of a bad id: the same eagerly, interpreted and compiled (compiled code
    reports a fixed message per node, so it names the valid range, not the value)."""
    if drop == "beyond":
        return "bincount: arr holds a negative value (bincount counts values >= 0)"
    return (
        f"{op}: segment_ids holds an id out of range [0, {num_segments}) "
        f"(num_segments = {num_segments}; negative ids are dropped)"
    )


def _infer_segment(extreme):
    def infer(attrs, data, ids):
        if not ids.dtype.is_integer:
            raise TypeError(f"segment_ids must be int32 or int64, got {ids.dtype.name}")
        if data.dtype.is_bool or (extreme and data.dtype.is_complex):
            kinds = "real numbers" if extreme else "numbers"
            raise TypeError(f"data must hold {kinds}, got {data.dtype.name}")
        if tuple(data.shape[: len(ids.shape)]) != tuple(ids.shape):
            raise ValueError(
                f"the shape of segment_ids {tuple(ids.shape)} must start the shape of data "
                f"{tuple(data.shape)}"
            )
        b = attrs["batch_dims"]
        return tuple(data.shape[:b]) + (attrs["num_segments"],) + tuple(
            data.shape[len(ids.shape) :]
        ), data.dtype

    return infer


def _lowest(dtype):
    return np.finfo(dtype).min if np.issubdtype(dtype, np.inexact) else np.iinfo(dtype).min


def _highest(dtype):
    return np.finfo(dtype).max if np.issubdtype(dtype, np.inexact) else np.iinfo(dtype).max


def _segment_kernel(op, ufunc, identity):
    """The numpy kernel: each kept element combined into its segment's row by `ufunc.at`."""

    @quiet  # NaN is a result
    def run(data, ids, num_segments, batch_dims, drop="negative"):
        data, ids = np.asarray(data), np.asarray(ids)
        batch, rest = data.shape[:batch_dims], data.shape[ids.ndim :]
        batches, count = int(np.prod(batch)), int(np.prod(ids.shape[batch_dims:]))
        ids = ids.reshape(batches, count).astype(np.int64)
        bad = ids >= num_segments if drop == "negative" else ids < 0
        if bad.any():
            raise as_tf(IndexError)(out_of_range(op, num_segments, drop))
        kept = ids >= 0 if drop == "negative" else ids < num_segments
        out = np.full((batches * num_segments, *rest), identity(data.dtype), dtype=data.dtype)
        rows = (np.arange(batches, dtype=np.int64)[:, None] * num_segments + ids)[kept]
        ufunc.at(out, rows, data.reshape((batches, count, *rest))[kept])
        return out.reshape((*batch, num_segments, *rest))

    return run


def _integer_limit(dtype, lowest):
    limits = np.iinfo(dtype._np)
    return literal(limits.min if lowest else limits.max, dtype)


def _segment_c(identity, combine):
    """templates/segment.c.j2; `identity(dtype) -> C value`, `combine(dtype) -> C expression
    of the accumulator `acc` and the element `v`."""

    def context(node, blas):
        data, ids = node.inputs
        b = node.attrs["batch_dims"]
        return dict(
            T=storage(node.dtype),
            C=compute(node.dtype),
            I=storage(ids.dtype),
            batches=dims.size(data.shape[:b]),
            count=dims.size(ids.shape[b:]),
            n=node.attrs["num_segments"],
            inner=dims.size(data.shape[len(ids.shape) :]),
            identity=identity(node.dtype),
            combine=combine(node.dtype),
            drop_negative=node.attrs.get("drop", "negative") == "negative",
        )

    def error(node):
        attrs = node.attrs
        return IndexError, out_of_range(node.op, attrs["num_segments"], attrs.get("drop"))

    return forms.Template("segment.c.j2", context, error=error)


def _extreme_combine(compare):
    """The larger (">") or smaller ("<") of acc and v; a NaN wins, as numpy's maximum."""
    return lambda dtype: (
        f"(v {compare} acc) ? v : acc"
        if dtype.is_integer
        else f"(v {compare} acc || v != v) ? v : acc"
    )


def _gather_rows(node, x, ids):
    """(x's row at each id, whether the id was kept): `x` is shaped like the node's result,
    the rows like its data; where an id was dropped the row is 0."""
    n, b = node.attrs["num_segments"], node.attrs["batch_dims"]
    beyond = node.attrs.get("drop") == "beyond"
    rest = len(x.shape) - b - 1
    mask_shape = tuple(ids.shape) + (1,) * rest  # broadcasts against the rows
    if n == 0:  # every id was dropped
        rows = array_ops.zeros(tuple(ids.shape) + tuple(x.shape[b + 1 :]), x.dtype)
        return rows, array_ops.zeros(mask_shape, dtypes.bool)
    known = ids._value  # eagerly: ids that drop nothing need no mask
    if known is not None and (known.max(initial=0) < n if beyond else known.min(initial=0) >= 0):
        rows = gather_nd(x, array_ops.expand_dims(ids, -1), batch_dims=b)
        return rows, array_ops.ones(mask_shape, dtypes.bool)
    kept = array_ops.reshape((ids < n) if beyond else (ids >= 0), mask_shape)
    clipped = math_ops.minimum(ids, n - 1) if beyond else math_ops.maximum(ids, 0)
    rows = gather_nd(x, array_ops.expand_dims(clipped, -1), batch_dims=b)
    return math_ops.where(kept, rows, array_ops.zeros((), x.dtype)), kept


def _sum_grad(node, g, ids):
    return _gather_rows(node, g, ids)[0], None


def _selected(node, data, ids, out):
    """Where data holds its segment's extreme (ties: every one of them)."""
    extremes, kept = _gather_rows(node, out, ids)
    return math_ops.logical_and(math_ops.equal(data, extremes), kept)


def _extreme_grad(node, g, data, ids, out):
    """TensorFlow's _SegmentMinOrMaxGrad: a segment's cotangent is divided equally among its
    tied extrema (the count is taken at least 1, so an empty segment divides nothing by 0)."""
    selected = _selected(node, data, ids, out)
    count = apply(UNSORTED_SEGMENT_SUM, (array_ops.cast(selected, g.dtype), ids), node.attrs)
    shares, _ = _gather_rows(node, g / math_ops.maximum(count, 1), ids)
    return math_ops.where(selected, shares, array_ops.zeros((), g.dtype)), None


def _extreme_jvp(node, tangents, inputs, out):
    """The mean of the tangents at a segment's tied extrema."""
    data, ids = inputs
    t = tangent_or_zeros(tangents[0], data)
    selected = _selected(node, data, ids, out)
    zero = array_ops.zeros((), t.dtype)
    total = apply(UNSORTED_SEGMENT_SUM, (math_ops.where(selected, t, zero), ids), node.attrs)
    count = apply(UNSORTED_SEGMENT_SUM, (array_ops.cast(selected, t.dtype), ids), node.attrs)
    return total / math_ops.maximum(count, 1)


def _prod_grad(node, g, data, ids, out):
    """TensorFlow's _SegmentProdGrad, exact with zeros: an element's derivative is the
    product of the others, the product of the non-zero ones where it is the one zero, and
    0 where its segment holds two zeros or more."""
    is_zero = math_ops.equal(data, array_ops.zeros((), data.dtype))
    zeros = apply(UNSORTED_SEGMENT_SUM, (array_ops.cast(is_zero, dtypes.int32), ids), node.attrs)
    g = math_ops.where(zeros > 1, array_ops.zeros((), g.dtype), g)
    non_zero = math_ops.where(is_zero, array_ops.ones((), data.dtype), data)
    non_zero_prod = apply(UNSORTED_SEGMENT_PROD, (non_zero, ids), node.attrs)
    product, _ = _gather_rows(node, out, ids)
    others, _ = _gather_rows(node, non_zero_prod, ids)
    partial = math_ops.where(is_zero, others, product / non_zero)
    return _gather_rows(node, g, ids)[0] * conj_if_complex(partial), None


def _segment(name, ufunc, identity, combine, **rules):
    extreme = ufunc in (np.maximum, np.minimum)
    return primitive(
        name,
        _infer_segment(extreme),
        batch=batch_along_batch_dims,
        kernel=_segment_kernel(name, ufunc, identity),
        c=_segment_c(_c_identity(identity), combine),
        **rules,
    )


def _c_identity(identity):
    def render(dtype):
        if dtype.is_integer and identity in (_lowest, _highest):
            return _integer_limit(dtype, identity is _lowest)
        return literal(identity(dtype.as_numpy_dtype), dtype)

    return render


UNSORTED_SEGMENT_SUM = _segment(
    "unsorted_segment_sum",
    np.add,
    lambda dtype: 0,
    lambda dtype: "acc + v",
    grad=_sum_grad,
    saves=(1,),
    jvp=LINEAR,
)
UNSORTED_SEGMENT_PROD = _segment(
    "unsorted_segment_prod",
    np.multiply,
    lambda dtype: 1,
    lambda dtype: "acc * v",
    grad=_prod_grad,
    saves=(0, 1, OUT),
    jvp=TRANSPOSED_VJP,
)
UNSORTED_SEGMENT_MAX = _segment(
    "unsorted_segment_max",
    np.maximum,
    _lowest,
    _extreme_combine(">"),
    grad=_extreme_grad,
    saves=(0, 1, OUT),
    jvp=_extreme_jvp,
)
UNSORTED_SEGMENT_MIN = _segment(
    "unsorted_segment_min",
    np.minimum,
    _highest,
    _extreme_combine("<"),
    grad=_extreme_grad,
    saves=(0, 1, OUT),
    jvp=_extreme_jvp,
)


def _reduce(op, data, ids, num_segments, **attrs):
    return apply(op, (data, ids), {"num_segments": num_segments, "batch_dims": 0, **attrs})


# --- unsorted_segment_* ------------------------------------------------------------------


def _unsorted(name, data, segment_ids, num_segments):
    data, ids = as_tensor(data), as_tensor(segment_ids)
    n = int(length_value(as_tensor(num_segments), f"{name}'s num_segments"))
    if n < 0:
        raise ValueError(f"{name}: num_segments must be >= 0, got {n}")
    return data, ids, n


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sums of the slices of `data` with equal ids, in any order: result[i] is the sum of
    the data[j...] with segment_ids[j...] == i (0 for none). Negative ids are dropped.

    >>> tt.math.unsorted_segment_sum([1.0, 2.0, 3.0], [1, 0, 1], 3).numpy()
    array([2., 4., 0.], dtype=float32)
    """
    return _reduce(
        UNSORTED_SEGMENT_SUM, *_unsorted("unsorted_segment_sum", data, segment_ids, num_segments)
    )


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """Products by segment (1 for an empty one); negative ids are dropped."""
    return _reduce(
        UNSORTED_SEGMENT_PROD, *_unsorted("unsorted_segment_prod", data, segment_ids, num_segments)
    )


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """Maxima by segment; an empty segment gives the dtype's lowest value, as TensorFlow."""
    return _reduce(
        UNSORTED_SEGMENT_MAX, *_unsorted("unsorted_segment_max", data, segment_ids, num_segments)
    )


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """Minima by segment; an empty segment gives the dtype's highest value, as TensorFlow."""
    return _reduce(
        UNSORTED_SEGMENT_MIN, *_unsorted("unsorted_segment_min", data, segment_ids, num_segments)
    )


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """Means by segment (0 for an empty one): the sums divided by the counts, at least 1, as
    TensorFlow composes it (integer data give float64, as `/` does)."""
    data, ids, n = _unsorted("unsorted_segment_mean", data, segment_ids, num_segments)
    total = _reduce(UNSORTED_SEGMENT_SUM, data, ids, n)
    count = _reduce(UNSORTED_SEGMENT_SUM, array_ops.ones(ids.shape, data.dtype), ids, n)
    count = array_ops.reshape(math_ops.maximum(count, 1), (n,) + (1,) * (total.ndim - 1))
    return math_ops.divide(total, count)


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """Sums by segment divided by the square root of their counts (0 for an empty one), as
    TensorFlow composes it; floating data only, as TensorFlow's."""
    data, ids, n = _unsorted("unsorted_segment_sqrt_n", data, segment_ids, num_segments)
    if not (data.dtype.is_floating or data.dtype.is_complex):
        raise TypeError(
            f"tt.math.unsorted_segment_sqrt_n: data must be floating, not {data.dtype.name}"
        )
    total = _reduce(UNSORTED_SEGMENT_SUM, data, ids, n)
    count = _reduce(UNSORTED_SEGMENT_SUM, array_ops.ones(ids.shape, data.dtype), ids, n)
    count = array_ops.reshape(math_ops.maximum(count, 1), (n,) + (1,) * (total.ndim - 1))
    return math_ops.divide(total, math_ops.sqrt(count))


# --- segment_* (sorted ids) -------------------------------------------------------------------


def _sorted(name, data, segment_ids):
    """(data, ids, the number of segments, each segment's count) after TensorFlow's checks."""
    data, ids = as_tensor(data), as_tensor(segment_ids)
    if not ids.dtype.is_integer:
        raise TypeError(f"{name}: segment_ids must be int32 or int64, got {ids.dtype.name}")
    if ids.ndim != 1 or data.ndim == 0 or data.shape[0] != ids.shape[0]:
        raise ValueError(
            f"{name}: segment_ids must be a vector with one id per row of data: got "
            f"segment_ids of shape {tuple(ids.shape)} for data of shape {tuple(data.shape)}"
        )
    hint = f" (unsorted_{name} with a constant num_segments compiles)"
    values = np.asarray(length_value(ids, f"{name}'s segment_ids", hint), dtype=np.int64)
    decreasing = np.flatnonzero(np.diff(values) < 0)
    if decreasing.size:
        k = int(decreasing[0]) + 1
        raise ValueError(
            f"{name}: segment_ids must be sorted: segment_ids[{k}] = {values[k]} follows "
            f"segment_ids[{k - 1}] = {values[k - 1]} (use unsorted_{name} for ids in any order)"
        )
    if values.size and values[0] < 0:
        raise as_tf(IndexError)(
            f"{name}: segment ids must be >= 0, got segment_ids[0] = {values[0]}"
        )
    n = int(values[-1]) + 1 if values.size else 0
    return data, ids, n, np.bincount(values, minlength=n)


def _by_rows(counts, ndim, dtype):
    """`counts` as a constant of `dtype`, shaped to divide or select the rows of a result of
    rank `ndim`."""
    return array_ops.reshape(
        as_tensor(np.asarray(counts, dtype=dtype.as_numpy_dtype)),
        (len(counts),) + (1,) * (ndim - 1),
    )


def segment_sum(data, segment_ids, name=None):
    """Sums of the runs of equal ids (sorted): result[i] = sum of data[j] with ids[j] == i.

    >>> tt.math.segment_sum([1.0, 2.0, 3.0], [0, 0, 2]).numpy()
    array([3., 0., 3.], dtype=float32)
    """
    data, ids, n, _ = _sorted("segment_sum", data, segment_ids)
    return _reduce(UNSORTED_SEGMENT_SUM, data, ids, n)


def segment_prod(data, segment_ids, name=None):
    """Products by segment (sorted ids); 1 for an empty one."""
    data, ids, n, _ = _sorted("segment_prod", data, segment_ids)
    return _reduce(UNSORTED_SEGMENT_PROD, data, ids, n)


def _sorted_extreme(name, op, data, segment_ids):
    data, ids, n, counts = _sorted(name, data, segment_ids)
    out = _reduce(op, data, ids, n)
    if counts.all():
        return out
    present = _by_rows(counts > 0, out.ndim, dtypes.bool)
    return math_ops.where(present, out, array_ops.zeros((), out.dtype))  # TensorFlow's 0


def segment_max(data, segment_ids, name=None):
    """Maxima by segment (sorted ids); an empty segment gives 0, as TensorFlow's."""
    return _sorted_extreme("segment_max", UNSORTED_SEGMENT_MAX, data, segment_ids)


def segment_min(data, segment_ids, name=None):
    """Minima by segment (sorted ids); an empty segment gives 0, as TensorFlow's."""
    return _sorted_extreme("segment_min", UNSORTED_SEGMENT_MIN, data, segment_ids)


def segment_mean(data, segment_ids, name=None):
    """Means by segment (sorted ids); 0 for an empty one. Integer data give the integer
    mean, rounded toward zero, as TensorFlow's kernel divides."""
    data, ids, n, counts = _sorted("segment_mean", data, segment_ids)
    total = _reduce(UNSORTED_SEGMENT_SUM, data, ids, n)
    count = _by_rows(np.maximum(counts, 1), total.ndim, data.dtype)
    if data.dtype.is_integer:
        zero = array_ops.zeros((), data.dtype)
        magnitude = math_ops.floordiv(math_ops.abs(total), count)
        return math_ops.where(total < zero, -magnitude, magnitude)
    return math_ops.divide(total, count)


# --- bincount ---------------------------------------------------------------------------


def bincount(
    arr,
    weights=None,
    minlength=None,
    maxlength=None,
    dtype=dtypes.int32,
    name=None,
    axis=None,
    binary_output=False,
):
    """How often each value 0, 1, ... occurs in `arr` (or the sum of its `weights`).

    The result has max(arr) + 1 bins, at least `minlength` and at most `maxlength` (values
    from `maxlength` up are not counted). `axis=-1` counts each row of a matrix apart;
    `binary_output` gives 1 for a value present. A negative value is an error.

    >>> tt.math.bincount([1, 1, 3]).numpy()
    array([0, 2, 0, 1], dtype=int32)
    """
    arr = as_tensor(arr)
    if not arr.dtype.is_integer:
        raise TypeError(f"bincount: arr must hold integers, got {arr.dtype.name}")
    if axis not in (None, 0, -1):
        raise ValueError(f"bincount: axis must be None, 0 or -1, got {axis!r}")
    if binary_output and weights is not None:
        raise ValueError("bincount: binary_output and weights are mutually exclusive")
    batch_dims = 1 if axis == -1 and arr.ndim == 2 else 0
    if axis == -1 and arr.ndim > 2:
        raise ValueError(
            f"bincount: axis=-1 counts the rows of a matrix, got arr of shape {arr.shape}"
        )
    length = _bincount_length(arr, minlength, maxlength)
    if weights is None:
        values = array_ops.ones(arr.shape, as_dtype(dtype))
    else:
        values = as_tensor(weights)
        if tuple(values.shape) != tuple(arr.shape):
            raise ValueError(
                f"bincount: weights of shape {tuple(values.shape)} must have arr's shape "
                f"{tuple(arr.shape)}"
            )
    attrs = {"num_segments": length, "batch_dims": batch_dims, "drop": "beyond"}
    counts = apply(UNSORTED_SEGMENT_SUM, (values, arr), attrs)
    if binary_output:
        return array_ops.cast(counts > 0, as_dtype(dtype))
    return counts


def _bincount_length(arr, minlength, maxlength):
    """TensorFlow's length: max(arr) + 1, at least minlength, at most maxlength."""
    low = 0 if minlength is None else _known_length("minlength", minlength)
    high = None if maxlength is None else _known_length("maxlength", maxlength)
    if arr._value is None:
        if high is not None and low >= high:
            return high
        length_value(arr, "bincount's arr", " (minlength and maxlength equal keep the length)")
    length = max(int(arr._value.max()) + 1 if arr._value.size else 0, low)
    return length if high is None else min(length, high)


def _known_length(argument, value):
    n = static_int(value)
    if n is None:
        raise ValueError(f"bincount: {argument} must be known when the function is traced")
    if n < 0:
        raise ValueError(f"bincount: {argument} must be >= 0, got {n}")
    return n
