"""`tt.map_fn`: TensorFlow's `tf.map_fn`, `fn` applied to each element along axis 0.

It is scan's loop (`scan.accumulate`) whose accumulator is the last element's result: `fn`
runs once on the first element, which gives the results' structure, dtypes and shapes and
the first row, and then in a `tt.while_loop` over the others, whose stacked states are the
other rows. The bound is the number of elements, so a compiled map_fn has a gradient.
Where TensorFlow takes the results' dtypes from `fn_output_signature` (by default elems'
own) and raises when fn returns another, tracer takes them from fn's first result; a
`fn_output_signature` that is given is checked against it. Over no elements, fn is called
once on zeros of an element's shape, for the results' shapes.
"""

from tracer import nest
from tracer.control.loops import stop_gradients
from tracer.control.region import at_user_line
from tracer.control.scan import accumulate, element_count
from tracer.extension_type import refuse_shaped
from tracer.ops import array_ops, convert, structure_ops
from tracer.signature import TensorSpec
from tracer.tensor_shape import is_unknown_rank

WHAT = "tt.map_fn"


def map_fn(
    fn,
    elems,
    dtype=None,
    parallel_iterations=None,
    back_prop=True,
    swap_memory=False,
    infer_shape=True,
    name=None,
    fn_output_signature=None,
):
    """`fn` of each element of `elems` (a tensor, or a nested structure of tensors of the
    same length along axis 0), the results stacked along a new axis 0.

    `parallel_iterations`, `swap_memory` and `infer_shape` are accepted for TensorFlow's
    signature and change nothing; `back_prop=False` stops gradients; `dtype` is the older
    name of `fn_output_signature`.

    >>> tt.map_fn(lambda row: tt.reduce_sum(row), tt.constant([[1, 2], [3, 4]])).numpy()
    array([3, 7], dtype=int32)
    """
    if not callable(fn):
        raise TypeError(f"{WHAT}: fn must be callable, not {type(fn).__name__}{at_user_line()}")
    refuse_shaped(elems, WHAT)
    flat_elems = [convert.as_tensor(e) for e in nest.flatten(elems)]
    n = element_count(flat_elems, WHAT)

    def element(i):
        return nest.pack_sequence_as(elems, [e[i] for e in flat_elems])

    if n == 0:
        zeros = [array_ops.zeros(e.shape[1:], e.dtype) for e in flat_elems]
        first = fn(nest.pack_sequence_as(elems, zeros))
    else:
        first = fn(element(0))
    _check_signature(first, fn_output_signature if fn_output_signature is not None else dtype)
    flat_first = [convert.as_tensor(r) for r in nest.flatten(first)]
    if n <= 1:
        rows = [r[None][:n] for r in flat_first]
    else:
        rest = nest.pack_sequence_as(elems, [e[1:] for e in flat_elems])
        start = nest.pack_sequence_as(first, flat_first)
        each = lambda _, x: _like_first(fn(x), first, flat_first)  # noqa: E731
        _, others = accumulate(each, rest, start, False, WHAT, stack=True)
        others = nest.flatten(others)
        rows = [structure_ops.concat([f[None], o], 0) for f, o in zip(flat_first, others)]
    stacked = nest.pack_sequence_as(first, rows)
    return stacked if back_prop else stop_gradients(stacked)


def _like_first(result, first, flat_first):
    """fn's result on a later element, which must have the structure, dtypes and shapes of
    its result on the first (they are the rows of one stacked tensor)."""
    difference = nest.structure_difference(first, result)
    if difference is not None:
        raise TypeError(
            f"{WHAT}: fn must return the same structure for every element; on the first and "
            f"on a later one it returned {difference}{at_user_line()}"
        )
    flat = [convert.as_tensor(r) for r in nest.flatten(result)]
    for k, (was, now) in enumerate(zip(flat_first, flat)):
        if now.dtype != was.dtype or now.shape != was.shape:
            raise ValueError(
                f"{WHAT}: fn must return the same dtypes and shapes for every element (its "
                f"results are stacked); result {k} is {was.dtype.name}{list(was.shape)} on the "
                f"first element and {now.dtype.name}{list(now.shape)} on a later one"
                f"{at_user_line()}"
            )
    return result


def _check_signature(first, signature):
    """A given `fn_output_signature` (dtypes or TensorSpecs, in fn's results' structure)
    against fn's result on the first element."""
    if signature is None:
        return
    difference = nest.structure_difference(signature, first)
    if difference is not None:
        raise TypeError(
            f"{WHAT}: fn's results do not have the structure of fn_output_signature: they are "
            f"{difference}{at_user_line()}"
        )
    for k, (want, got) in enumerate(zip(nest.flatten(signature), nest.flatten(first))):
        got = convert.as_tensor(got)
        spec = want if isinstance(want, TensorSpec) else TensorSpec(None, want)
        if not spec.admits(got.shape, got.dtype):
            said = (
                spec.dtype.name
                if is_unknown_rank(spec.shape)
                else f"{spec.dtype.name}{list(spec.shape)}"
            )
            raise TypeError(
                f"{WHAT}: fn returned {got.dtype.name}{list(got.shape)} for result {k}, where "
                f"fn_output_signature says {said}{at_user_line()}"
            )
