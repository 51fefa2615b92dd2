"""Clipping of gradients: `tt.clip_by_norm`, `tt.clip_by_global_norm`, `tt.clip_by_value`.

Compositions of the catalogue's ops that also take `tt.IndexedSlices` (the sparse gradients
a tape returns), so they sit above the op catalogue (`tracer/ops/`), which knows no
gradient types. An IndexedSlices is clipped by its values, as TensorFlow's: a row that
appears twice counts twice in a norm and is clipped before the two are added.
"""

from tracer import dtypes
from tracer.indexed_slices import IndexedSlices
from tracer.ops import array_ops, math_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensor


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """`t` scaled down to an L2 norm (over `axes`, all by default) of at most `clip_norm`:
    t * clip_norm / max(norm, clip_norm), as TensorFlow computes it.

    >>> tt.clip_by_norm(tt.constant([3.0, 4.0]), 1.0).numpy()
    array([0.6, 0.8], dtype=float32)
    """
    if isinstance(t, IndexedSlices):
        return _on_values(t, clip_by_norm(t.values, clip_norm, axes))
    t = as_tensor(t)
    norm = math_ops.sqrt(reduce_sum(t * t, axis=axes, keepdims=True))
    if hasattr(clip_norm, "dtype"):
        clip_norm = array_ops.cast(clip_norm, t.dtype)
    return t * clip_norm / math_ops.maximum(norm, clip_norm)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """`t` limited to [min, max] elementwise (an IndexedSlices: its values); the gradient
    passes where min <= t <= max."""
    if isinstance(t, IndexedSlices):
        return _on_values(t, math_ops.clip_by_value(t.values, clip_value_min, clip_value_max))
    return math_ops.clip_by_value(t, clip_value_min, clip_value_max)


def _on_values(slices, values):
    """The IndexedSlices with `slices`' rows holding `values`."""
    return IndexedSlices(values, slices.indices, slices._dense_shape)


def global_norm(t_list, name=None):
    """The L2 norm of all the tensors of `t_list` together (None entries are skipped;
    IndexedSlices count by their values): sqrt(sum of each one's sum of squares)."""
    values = [_values(t) for t in t_list if t is not None]
    if not values:
        return as_tensor(0.0)
    dtype = values[0].dtype
    for value in values:
        if value.dtype != dtype or not dtype.is_floating:
            names = ", ".join(v.dtype.name for v in values)
            raise TypeError(f"global_norm: the tensors must share one floating dtype, got {names}")
    squares = [reduce_sum(v * v) for v in values]
    total = squares[0]
    for square in squares[1:]:
        total = total + square
    return math_ops.sqrt(total)


def _values(t):
    """A tensor, or the values of an IndexedSlices."""
    return as_tensor(t.values if isinstance(t, IndexedSlices) else t)


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """The tensors of `t_list` scaled by clip_norm / max(global_norm, clip_norm), and the
    global norm (as TensorFlow: None entries stay None, IndexedSlices get their values
    scaled, and a norm that is inf or NaN makes every value NaN).

    >>> clipped, norm = tt.clip_by_global_norm([tt.constant([3.0, 4.0]), None], 1.0)
    >>> clipped[0].numpy(), clipped[1], float(norm)
    (array([0.6, 0.8], dtype=float32), None, 5.0)
    """
    if not isinstance(t_list, (list, tuple)):
        raise TypeError(
            f"clip_by_global_norm: t_list must be a list or tuple of tensors, "
            f"got {type(t_list).__name__}"
        )
    t_list = list(t_list)
    norm = as_tensor(global_norm(t_list) if use_norm is None else use_norm)
    if not norm.dtype.is_floating:
        norm = array_ops.cast(norm, dtypes.float32)
    clip = array_ops.cast(as_tensor(clip_norm), norm.dtype)
    # TensorFlow's clip * min(1 / norm, 1 / clip), without dividing by a zero norm; plus
    # (norm - norm), so that an infinite or NaN norm gives NaN rather than a silent zero
    scale = clip / math_ops.maximum(norm, clip) + (norm - norm)
    clipped = []
    for t in t_list:
        if t is None:
            clipped.append(None)
            continue
        values = _values(t)
        scaled = values * array_ops.cast(scale, values.dtype)
        clipped.append(_on_values(t, scaled) if isinstance(t, IndexedSlices) else scaled)
    return clipped, norm
