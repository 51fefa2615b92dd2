"""A dense layer's `relu(x @ kernel + bias)`, as the ops `matmul`, `add` and `relu` compute
it, in one array where nothing but the caller sees the eager ops.

Outside any trace, tape (recording or paused), forward accumulator, variable watcher,
numerics check and the profiler's op timer, the two intermediate Tensors those ops would make
are seen by nothing: making them, each op's path through `apply` with its shape rule and
bookkeeping, was most of a small layer's eager call (a Keras model's inference outside a
tape). There the product is computed by matmul's own kernel (the same route by size, so the
same bits as the op), the bias added and relu applied in place by numpy's add and maximum,
which add's and relu's kernels below LARGE_FLOATING_FROM elements are (exact IEEE
operations, whose result does not depend on where it is stored), and one Tensor made,
remembering the Variable the last op read as the op's result would (tape.explain). Anything
else (an observer, a result of LARGE_FLOATING_FROM elements or more, whose add and relu run
on the threads, an input that is not an eager float32 or float64 matrix of the kernel's
dtype, a bias that does not broadcast to the product's shape, weights that are not plain
Variables) takes the ops, which record, check and raise as always.
"""

import numpy as np

from runtime.kernels import KERNELS, LARGE_FLOATING_FROM, errors_ignored, errors_restored
from tracer.ops import core
from tracer.ops.linalg_ops import matmul
from tracer.ops.math_ops import add, relu
from tracer.tensor import Tensor
from tracer.variable import Variable

# (numpy's dtype objects of these types are one each: another object of the same type takes
# the ops' path, which is always right)
_FLOAT32, _FLOAT64 = np.dtype(np.float32), np.dtype(np.float64)


def affine(x, kernel, bias=None, with_relu=False):
    """`matmul(x, kernel)`, plus `bias` where given, through `relu` where `with_relu`:
    Variables `kernel` and `bias`, as a Dense layer holds them."""
    fused = _in_one_array(x, kernel, bias, with_relu)
    if fused is not None:
        return fused
    y = matmul(x, kernel)
    if bias is not None:
        y = add(y, bias)
    return relu(y) if with_relu else y


def _in_one_array(x, kernel, bias, with_relu):
    """The result as one new Tensor, or None where the ops must compute it (module
    docstring)."""
    if type(x) is not Tensor or type(kernel) is not Variable:
        return None
    if bias is not None and type(bias) is not Variable:
        return None
    a, k = x._value, kernel._value
    if a is None or a.ndim != 2 or k.ndim != 2 or a.shape[1] != k.shape[0]:
        return None
    if a.shape[0] * k.shape[1] >= LARGE_FLOATING_FROM:
        return None  # add's and relu's kernels then run on the threads (and keep the bias's NaN)
    dtype = a.dtype
    if (dtype is not _FLOAT32 and dtype is not _FLOAT64) or k.dtype is not dtype:
        return None
    if bias is not None and bias._value.dtype is not dtype:
        return None
    if not core.eager_results_unobserved():
        return None
    # what a read outside tapes does: compiled code that updates them in place copies first
    kernel._shared = True
    if bias is not None:
        bias._shared = True
    token = errors_ignored()
    try:
        y = KERNELS["matmul"](a, k)
        if bias is not None:
            np.add(y, bias._value, out=y)  # (raises where the bias does not broadcast to y)
        if with_relu:
            np.maximum(y, np.zeros((), dtype), out=y)
    except ValueError:
        return None
    finally:
        errors_restored(token)
    if with_relu:
        return core.new_tensor(y)
    return core.tensor_with_origin(y, _last_variable_read(x, kernel, bias))


def _last_variable_read(x, kernel, bias):
    """The node of the Variable whose read the last op (add, else matmul) took first: its
    result remembers it, outside tapes."""
    if bias is not None:
        return bias._node
    return x._node if x._node is not None and x._node.op == "variable" else kernel._node
