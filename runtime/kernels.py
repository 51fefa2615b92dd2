"""numpy kernels, one per primitive, keyed by op name: `KERNELS[op](*arrays, **attrs)`.

Kernels give TensorFlow's results where numpy differs (integer reduce_mean, maximum's
NaN handling is numpy's), never promote dtypes (the shape rules have already checked
them), and compute quietly: an invalid value gives NaN, as in TensorFlow, not a warning.
"""

import math
import operator

import numpy as np

KERNELS = {}


def kernel(name, quiet=False):
    def register(function):
        if quiet:

            def run_quietly(*args, **attrs):
                with np.errstate(all="ignore"):
                    return function(*args, **attrs)

            KERNELS[name] = run_quietly
        else:
            KERNELS[name] = function
        return function

    return register


def _as(dtype, value):
    """`value` with the element type of `dtype` (numpy returns float64 for some int ops)."""
    return np.asarray(value, dtype=dtype)


# Elementwise, one input.
KERNELS["neg"] = np.negative
KERNELS["conj"] = np.conjugate
KERNELS["real"] = np.real
KERNELS["imag"] = np.imag


@kernel("complex")
def make_complex(re, im):
    dtype = np.complex64 if np.result_type(re) == np.float32 else np.complex128
    return np.asarray(re + 1j * np.asarray(im), dtype=dtype)


KERNELS["abs"] = np.abs
KERNELS["sign"] = np.sign
KERNELS["sin"] = np.sin
KERNELS["cos"] = np.cos
KERNELS["tanh"] = np.tanh
KERNELS["identity"] = lambda x: x
KERNELS["stop_gradient"] = lambda x: x
kernel("exp", quiet=True)(np.exp)
kernel("log", quiet=True)(np.log)
kernel("log1p", quiet=True)(np.log1p)
kernel("sqrt", quiet=True)(np.sqrt)
kernel("tan", quiet=True)(np.tan)


@kernel("rsqrt", quiet=True)
def rsqrt(x):
    return (1 / np.sqrt(x)).astype(np.result_type(x), copy=False)


_erf = np.frompyfunc(math.erf, 1, 1)


@kernel("erf")
def erf(x):
    # NOTE: numpy has no erf; math.erf per element is exact to the last bit and fast enough
    # for the interpreter (the compiled backend uses C's erf).
    return np.asarray(_erf(x), dtype=np.result_type(x))


@kernel("sigmoid", quiet=True)
def sigmoid(x):
    if np.iscomplexobj(x):
        return 1 / (1 + np.exp(-x))
    # NOTE: exp(-|x|) never overflows, so neither branch makes inf/inf.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


@kernel("softplus", quiet=True)
def softplus(x):
    return (np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))).astype(x.dtype, copy=False)


@kernel("relu")
def relu(x):
    return np.maximum(x, np.zeros((), x.dtype))


# Elementwise, two or three inputs.
def _arithmetic(python_operator, ufunc):
    """A kernel that uses Python's operator on floating and complex values and the ufunc on
    integers and bools.

    On numpy scalars (what 0-d results are) the operator skips the ufunc machinery and runs
    3x faster; on arrays it is the same ufunc. Integer scalars keep the ufunc, which wraps
    on overflow quietly (TensorFlow's behaviour) where scalar arithmetic would warn.
    """

    def run(x, y):
        return python_operator(x, y) if x.dtype.kind in "fc" else ufunc(x, y)

    return run


KERNELS["add"] = _arithmetic(operator.add, np.add)
KERNELS["sub"] = _arithmetic(operator.sub, np.subtract)
KERNELS["mul"] = _arithmetic(operator.mul, np.multiply)
# The same kernels as infix operators, for code that knows its inputs are floating or complex
# (straight-line code, from its graph's dtypes): `a * b` is operator.mul(a, b), without the call.
FLOATING_INFIX = {"add": "+", "sub": "-", "mul": "*"}
KERNELS["maximum"] = np.maximum
KERNELS["minimum"] = np.minimum
KERNELS["greater"] = np.greater
KERNELS["greater_equal"] = np.greater_equal
KERNELS["less"] = np.less
KERNELS["less_equal"] = np.less_equal
KERNELS["equal"] = np.equal
KERNELS["not_equal"] = np.not_equal
KERNELS["logical_and"] = np.logical_and
KERNELS["logical_or"] = np.logical_or
KERNELS["logical_not"] = np.logical_not
KERNELS["select"] = np.where
kernel("div", quiet=True)(np.true_divide)
kernel("floordiv", quiet=True)(np.floor_divide)
kernel("mod", quiet=True)(np.mod)


@kernel("pow", quiet=True)
def power(x, y):
    if np.issubdtype(np.result_type(x), np.integer) and np.any(np.asarray(y) < 0):
        raise ValueError("integers to negative integer powers are not allowed")
    return np.power(x, y)


@kernel("mul_no_nan", quiet=True)
def mul_no_nan(x, y):
    """x * y, but 0 wherever y is 0, even where x is inf or NaN."""
    return np.where(y == 0, np.zeros((), np.result_type(x)), x * y)


# Shapes and data movement.
@kernel("reshape")
def reshape(x, shape):
    return np.reshape(x, shape)


@kernel("transpose")
def transpose(x, perm):
    return np.transpose(x, perm)


@kernel("broadcast_to")
def broadcast_to(x, shape):
    return np.broadcast_to(x, shape)


@kernel("cast")
def cast(x, dtype):
    return np.asarray(x).astype(dtype.as_numpy_dtype)


def numpy_index(index):
    """The numpy index for a `slice` op's canonical `index` attribute (see tracer.ops.array_ops)."""
    return tuple(
        slice(item[0], None if item[1] < 0 else item[1], item[2])
        if isinstance(item, tuple)
        else item
        for item in index
    )


@kernel("slice")
def strided_slice(x, index):
    return np.asarray(x)[numpy_index(index)]


@kernel("slice_grad")
def slice_grad(g, index, shape):
    """Zeros of `shape` with `g` written where `slice` read from."""
    out = np.zeros(shape, dtype=np.result_type(g))
    out[numpy_index(index)] = g
    return out


@kernel("tile")
def tile(x, multiples):
    return np.tile(x, multiples)


@kernel("gather")
def gather(params, indices, axis):
    return np.take(params, indices, axis=axis)


@kernel("scatter_add")
def scatter_add(updates, indices, axis, shape):
    """Zeros of `shape` (gather's params) with `updates` summed in at `indices` along `axis`.

    `updates` is shaped like gather's result, params[:axis] + indices + params[axis+1:];
    repeated indices add up.
    """
    updates, indices = np.asarray(updates), np.asarray(indices)
    out = np.zeros(shape, dtype=updates.dtype)
    index_axes = list(range(axis, axis + indices.ndim))
    other_axes = [a for a in range(updates.ndim) if a not in index_axes]
    np.add.at(np.moveaxis(out, axis, 0), indices, np.transpose(updates, index_axes + other_axes))
    return out


@kernel("argmax")
def argmax(x, axis, output_type):
    return np.argmax(x, axis=axis).astype(output_type.as_numpy_dtype)


@kernel("argmin")
def argmin(x, axis, output_type):
    return np.argmin(x, axis=axis).astype(output_type.as_numpy_dtype)


# Reductions.
@kernel("reduce_sum")
def reduce_sum(x, axis, keepdims):
    return _as(np.result_type(x), np.sum(x, axis=axis, keepdims=keepdims))


@kernel("reduce_max")
def reduce_max(x, axis, keepdims):
    return np.max(x, axis=axis, keepdims=keepdims)


@kernel("reduce_min")
def reduce_min(x, axis, keepdims):
    return np.min(x, axis=axis, keepdims=keepdims)


@kernel("reduce_prod")
def reduce_prod(x, axis, keepdims):
    return _as(np.result_type(x), np.prod(x, axis=axis, keepdims=keepdims))


def _scan(accumulate, identity):
    def run(x, axis, exclusive, reverse):
        x = np.asarray(x)
        if reverse:
            x = np.flip(x, axis)
        out = accumulate(x, axis=axis, dtype=x.dtype)
        if exclusive:
            first = np.full_like(np.take(out, [0], axis=axis), identity)
            out = np.concatenate(
                [first, np.take(out, np.arange(x.shape[axis] - 1), axis=axis)], axis=axis
            )
        return np.flip(out, axis) if reverse else out

    return run


KERNELS["cumsum"] = _scan(np.cumsum, 0)
KERNELS["cumprod"] = _scan(np.cumprod, 1)


@kernel("matmul")
def matmul(a, b, transpose_a=False, transpose_b=False):
    return np.matmul(
        np.swapaxes(a, -1, -2) if transpose_a else a, np.swapaxes(b, -1, -2) if transpose_b else b
    )


# Creation.
@kernel("fill")
def fill(shape, dtype, value):
    return np.full(shape, value, dtype=dtype.as_numpy_dtype)


@kernel("concat")
def concat(*xs, axis):
    return np.concatenate(xs, axis=axis)


@kernel("fused")
def fused(*inputs, kernel):
    """A fused node: its body graph, run op by op (the compiled backend runs it as one loop)."""
    from runtime.interpreter import evaluate

    with np.errstate(all="ignore"):
        (result,) = evaluate(kernel.body, inputs)
    return result


@kernel("call")
def call(*inputs, function):
    """A whole traced function as one op: its (packed) result, compiled on first use."""
    return function.run(inputs)
