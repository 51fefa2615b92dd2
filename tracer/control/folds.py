"""`tt.foldl` and `tt.foldr`: TensorFlow's folds, scan's loop (`scan.accumulate`) keeping
only the final accumulator.

`foldl` runs from the first element to the last, `foldr` from the last to the first; both
call `fn(accumulator, element)`. Without an initializer the first element (foldl) or the
last (foldr) starts the accumulation, as in TensorFlow.
"""

from tracer.control.loops import stop_gradients
from tracer.control.scan import accumulate


def foldl(
    fn,
    elems,
    initializer=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    name=None,
):
    """`fn` folded over the elements of `elems` from the first: TensorFlow's `tf.foldl`.

    `elems` may be a nested structure of tensors of the same length along axis 0;
    `parallel_iterations` and `swap_memory` change nothing; `back_prop=False` stops
    gradients.

    >>> int(tt.foldl(lambda a, x: a - x, tt.constant([1, 2, 3]), initializer=10))
    4
    """
    return _fold(fn, elems, initializer, back_prop, reverse=False, what="tt.foldl")


def foldr(
    fn,
    elems,
    initializer=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    name=None,
):
    """`fn` folded over the elements of `elems` from the last: TensorFlow's `tf.foldr`.

    >>> int(tt.foldr(lambda a, x: a - x, tt.constant([1, 2, 3])))
    0
    """
    return _fold(fn, elems, initializer, back_prop, reverse=True, what="tt.foldr")


def _fold(fn, elems, initializer, back_prop, reverse, what):
    final, _ = accumulate(fn, elems, initializer, reverse, what, stack=False)
    return final if back_prop else stop_gradients(final)
