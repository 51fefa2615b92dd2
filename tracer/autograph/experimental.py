"""`tt.autograph.experimental`: TensorFlow's directives to autograph.

`do_not_convert(f)` is `f` left as written wherever tt.function would convert it (its Python
`if`, `while` and `for` then run as Python, as TensorFlow's do). `set_loop_options(...)`,
called in the body of a loop that autograph converts, gives that loop its options: the
converted loop evaluates the call before it starts (tracer/autograph/transform.py) and its
`maximum_iterations` bounds the loop; `parallel_iterations` and `swap_memory` (how
TensorFlow schedules and stores a loop's iterations) change nothing in tracer, and
`shape_invariants` lets a shape change only where the loop runs eagerly: a compiled loop's
variables keep their shapes (tt.while_loop's error says how to grow a result instead). Called
anywhere else, it does nothing.

    >>> @tt.function
    ... def first_powers(x):
    ...     total = tt.zeros([])
    ...     while total < 100.0:
    ...         tt.autograph.experimental.set_loop_options(maximum_iterations=3)
    ...         total = total + x
    ...     return total
    >>> float(first_powers(tt.constant(2.0)))
    6.0
"""

import functools

from tracer.autograph.transform import CONVERTED

__all__ = ["do_not_convert", "set_loop_options"]

_UNSET = object()  # an option the call leaves out


def do_not_convert(func=None):
    """`func`, called as written inside a tt.function: autograph converts neither it nor the
    functions it calls. Without `func`, the decorator."""
    if func is None:
        return do_not_convert

    @functools.wraps(func)
    def unconverted(*args, **kwargs):
        return func(*args, **kwargs)

    setattr(unconverted, CONVERTED, True)
    return unconverted


def set_loop_options(
    parallel_iterations=_UNSET,
    swap_memory=_UNSET,
    maximum_iterations=_UNSET,
    shape_invariants=_UNSET,
):
    """The options of the converted loop whose body calls it (see the module's docstring), as
    a dict of those given; a no-op where it runs."""
    given = {
        "parallel_iterations": parallel_iterations,
        "swap_memory": swap_memory,
        "maximum_iterations": maximum_iterations,
        "shape_invariants": shape_invariants,
    }
    return {name: value for name, value in given.items() if value is not _UNSET}
