"""`tt.scan`: TensorFlow's `tf.scan`, one `tt.while_loop` over the elements of tensors.

The loop carries a step counter and the accumulator. Its bound (`maximum_iterations`) is
the number of elements, known when tracing, so a compiled scan has a gradient; the results
are the accumulator's values at the start of every iteration, which the loop stacks for
that gradient anyway (`loops.while_loop_states`), so a scan costs its steps and one copy of
each result. Eagerly the loop is Python's, as `tt.while_loop`'s is, and a tape records the
ops each step runs. `tt.foldl` and `tt.foldr` (folds.py) are the same loop, keeping only
the final accumulator.
"""

from tracer import nest
from tracer.control.loops import stop_gradients, while_loop, while_loop_states
from tracer.control.region import at_user_line
from tracer.errors import OutOfRangeError, mixed
from tracer.ops import convert, layout_ops, structure_ops


def scan(
    fn,
    elems,
    initializer=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    infer_shape=True,
    reverse=False,
    name=None,
):
    """The accumulated values of `fn` over the elements of `elems`, stacked along axis 0.

    `fn(accumulator, element)` returns the next accumulator, of the structure of
    `initializer` (or of `elems`, whose first element starts the accumulation when there is
    no initializer). `elems` may be a nested structure of tensors of the same length along
    axis 0; `reverse=True` runs from the last element to the first (the results keep the
    elements' order). `parallel_iterations`, `swap_memory` and `infer_shape` are accepted
    for TensorFlow's signature and change nothing; `back_prop=False` stops gradients.

    >>> tt.scan(lambda a, x: a + x, tt.constant([1, 2, 3, 4])).numpy()
    array([ 1,  3,  6, 10], dtype=int32)
    """
    _, stacked = accumulate(fn, elems, initializer, reverse, "tt.scan", stack=True)
    return stacked if back_prop else stop_gradients(stacked)


def accumulate(fn, elems, initializer, reverse, what, stack):
    """(the final accumulator, the accumulator after each element stacked, or None without
    `stack`) of `fn` run over the elements of `elems`: the loop of scan, foldl and foldr."""
    if not callable(fn):
        raise TypeError(f"{what}: fn must be callable, not {type(fn).__name__}{at_user_line()}")
    flat_elems = [convert.as_tensor(e) for e in nest.flatten(elems)]
    n = element_count(flat_elems, what)
    place = (lambda i: n - 1 - i) if reverse else (lambda i: i)

    def element(i):
        return nest.pack_sequence_as(elems, [e[place(i)] for e in flat_elems])

    if initializer is None:
        if n == 0:
            raise mixed(OutOfRangeError, ValueError)(
                f"{what}: elems are empty and there is no initializer: nothing starts the "
                f"accumulation{at_user_line()}"
            )
        structure, first = element(0), 1
    else:
        structure, first = initializer, 0
    start = [convert.as_tensor(a) for a in nest.flatten(structure)]

    def step(i, accumulator):
        new = fn(nest.pack_sequence_as(structure, accumulator), element(i))
        return i + 1, _checked(new, structure, start, what)

    final, stacked = start, None
    if n > first:
        loop = (lambda i, accumulator: i < n, step, (first, start))
        if stack:
            (_, final), states = while_loop_states(*loop, maximum_iterations=n - first)
            # the accumulator after each step is its value at the start of the next one;
            # without an initializer, the first element (the start) is the first result
            stacked = [
                structure_ops.concat([s[1 - first :], f[None]], 0)
                for s, f in zip(states[1:], final)
            ]
        else:
            _, final = while_loop(*loop, maximum_iterations=n - first)
    elif stack:
        stacked = [a[None][:n] for a in start]
    if stacked is not None:
        stacked = nest.pack_sequence_as(
            structure, [layout_ops.reverse(t, [0]) if reverse else t for t in stacked]
        )
    return nest.pack_sequence_as(structure, final), stacked


def element_count(flat_elems, what):
    """The common length of the tensors of elems along axis 0, or a clear error."""
    if not flat_elems:
        raise ValueError(f"{what}: elems holds no tensor to loop over{at_user_line()}")
    lengths = []
    for k, e in enumerate(flat_elems):
        if e.ndim == 0:
            raise ValueError(
                f"{what}: the tensors of elems need an axis 0 to loop along; tensor {k} of elems "
                "is a scalar (a Python list of numbers is a structure of scalars: "
                f"tt.constant makes it one tensor){at_user_line()}"
            )
        lengths.append(e.shape[0])
    unknown = [length for length in lengths if not isinstance(length, int)]
    if unknown:
        raise ValueError(
            f"{what}: the length of elems along axis 0 must be known when tracing, not "
            f"{unknown[0]}: it is the bound of the loop, which its compiled gradient needs "
            f"(give the function a static first dimension){at_user_line()}"
        )
    if len(set(lengths)) > 1:
        raise ValueError(
            f"{what}: the tensors of elems have different lengths along axis 0: "
            f"{', '.join(map(str, lengths))}{at_user_line()}"
        )
    return lengths[0]


def _checked(new, structure, start, what):
    """The flat tensors of fn's result, which must match the accumulator's structure, dtypes
    and shapes."""
    difference = nest.structure_difference(structure, new)
    if difference is not None:
        raise TypeError(
            f"{what}: fn must return the accumulator's structure; the accumulator and fn's "
            f"result are {difference}{at_user_line()}"
        )
    flat = [convert.as_tensor(a) for a in nest.flatten(new)]
    if len(flat) != len(start):
        raise TypeError(
            f"{what}: fn returned {len(flat)} tensors for an accumulator of {len(start)}"
            f"{at_user_line()}"
        )
    for k, (old, value) in enumerate(zip(start, flat)):
        if value.dtype != old.dtype or value.shape != old.shape:
            raise ValueError(
                f"{what}: fn returned {value.dtype.name}{list(value.shape)} for tensor {k} of "
                f"the accumulator, which is {old.dtype.name}{list(old.shape)}{at_user_line()}"
            )
    return flat
