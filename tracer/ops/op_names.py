"""TensorFlow's op names for tracer's composite functions: what their values print as.

`tt.reduce_mean` is a sum and a division in tracer, one `Mean` op in TensorFlow; while a
function is traced, its symbolic result prints as `Tensor("Mean:0", ...)` and the primitives
inside it take no names (so a later `tt.reduce_sum` is `Sum`, not `Sum_1`), as TensorFlow's
graph has them. A `name=` given to the call names it instead, as in TensorFlow.
"""

import functools

from tracer import nest
from tracer.context import state
from tracer.tensor import COMPOSITE_NODES, Tensor


def tf_op(tf_name):
    """Decorate a composite function whose value TensorFlow's graphs name `tf_name`."""

    def decorate(function):
        @functools.wraps(function)
        def named(*args, **kwargs):
            result = function(*args, **kwargs)
            if state.trace is not None:
                _record(kwargs.get("name") or tf_name, args, kwargs, result)
            return result

        return named

    return decorate


def _record(tf_name, args, kwargs, result):
    if type(result) is not Tensor or result._value is not None or result._node is None:
        return
    node = result._node
    arguments = [
        t._node
        for t in nest.flatten((list(args), kwargs))
        if type(t) is Tensor and t._value is None and t._node is not None
    ]
    if any(a is node for a in arguments):  # the function gave an argument back unchanged
        return
    COMPOSITE_NODES[node] = (tf_name, tuple(arguments))
