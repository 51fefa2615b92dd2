"""TensorFlow's small framework functions: where code runs (`executing_eagerly`,
`inside_function`, `init_scope`, `device`), what a value is (`is_tensor`, `rank`,
`get_static_value`) and checks (`ensure_shape`).

In a function being traced, `init_scope()` runs its block eagerly, outside the trace and
any tape, as TensorFlow lifts it out of the function's graph: what a Variable's initial
value and a cache filled once are made in. `get_static_value` gives a tensor's value where
it is known without running the function (an eager tensor, a constant of the trace) and
None otherwise, as TensorFlow's constant folding does for its simplest cases.
"""

import contextlib

import numpy as np

from tracer import nest
from tracer.context import outside_trace, state
from tracer.signature import TensorSpec
from tracer.tensor import Tensor, TensorLike, constant, convert_to_tensor
from tracer.tensor_shape import is_unknown_rank


def executing_eagerly():
    """True outside the tracing of a `tt.function`."""
    return state.trace is None


def inside_function():
    """True while a `tt.function` is traced."""
    return state.trace is not None


@contextlib.contextmanager
def init_scope():
    """Run the block eagerly, outside any function being traced and any tape."""
    with outside_trace():
        yield


def is_tensor(x):
    """Whether `x` is a tracer tensor, variable or composite tensor (sparse, ragged,
    IndexedSlices), not a numpy array or a Python number, as `tf.is_tensor`."""
    return isinstance(x, TensorLike) or getattr(type(x), "is_tensor_like", False)


def rank(input, name=None):
    """The number of axes, as an int32 scalar tensor."""
    return constant(np.int32(convert_to_tensor(input).ndim))


def get_static_value(tensor, partial=False):
    """The value of `tensor` as a numpy array where it is known without running a traced
    function (eager tensors, numbers, arrays; constants of a trace), else None."""
    if not isinstance(tensor, TensorLike):
        return np.asarray(tensor)
    if isinstance(tensor, Tensor) and tensor._value is not None:
        return np.asarray(tensor._value)
    node = getattr(tensor, "_node", None)
    if isinstance(tensor, Tensor) and node is not None and node.op == "const":
        value = node.attrs.get("value")
        return None if value is None else np.array(value.array)
    if state.trace is None and not isinstance(tensor, Tensor):  # an eager Variable
        return tensor.numpy()
    return None


def ensure_shape(x, shape, name=None):
    """`x`, checked to have `shape` (None for any size); a ValueError naming both otherwise."""
    x = convert_to_tensor(x)
    spec = TensorSpec(shape, x.dtype)
    known = tuple(d if isinstance(d, int) else None for d in x.shape)
    compatible = is_unknown_rank(spec.shape) or (
        len(known) == len(spec.shape)
        and all(s is None or d is None or s == d for s, d in zip(spec.shape, known))
    )
    if not compatible:
        raise ValueError(f"ensure_shape: the tensor's shape {known} is not compatible with {shape}")
    return x


def group(*inputs, name=None):
    """TensorFlow's `tf.group`. Eagerly and in a tt.function ops run in program order, so
    there is nothing to group: None. In a tt.compat.v1 graph, an op whose Session.run runs
    `inputs` (tensors, variables and ops; the assigns among them)."""
    return None if state.trace is None else state.trace.group(nest.flatten(list(inputs)))


@contextlib.contextmanager
def device(device_name):
    """TensorFlow's placement of the ops in the block on `device_name` ("CPU:0", "GPU:0",
    "/job:localhost/device:CPU:0", or None): tracer computes on the CPU only, so the block
    runs as it would without it, as TensorFlow's soft placement runs a GPU's ops on the CPU
    of a machine without one."""
    if device_name is not None and not isinstance(device_name, str):
        raise TypeError(f"tt.device takes a device name (a string) or None, not {device_name!r}")
    yield
