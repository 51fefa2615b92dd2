"""TensorFlow's window functions (`tf.signal.hann_window`, ...): constants of `dtype`,
computed in float64 and rounded once.

TensorFlow's raised-cosine windows (Hann, Hamming) divide by window_length when `periodic`
and the length is even, and by window_length - 1 otherwise: a periodic window of odd length
is the symmetric one, and tracer keeps that. TensorFlow computes them in `dtype` with its
own cosine, so a float32 window may differ from tracer's in the last bit.
"""

import numpy as np

from tracer import dtypes
from tracer.ops import array_ops, math_ops, special_ops
from tracer.ops.convert import as_tensor, length_value
from tracer.tensor import Tensor


def _length(window_length, what):
    """The window's length; computed when a traced function runs, the function runs as
    Python (it sets the window's size)."""
    length = int(length_value(window_length, f"{what}: window_length"))
    if length < 0:
        raise ValueError(f"{what}: window_length must not be negative, not {length}")
    return length


def _floating(dtype, what):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"{what}: dtype must be a floating point type, not {dtype.name}")
    return dtype


def _window(values, dtype):
    return as_tensor(np.asarray(values, dtype=dtype.as_numpy_dtype))


def _raised_cosine(window_length, periodic, dtype, a, b, what):
    length = _length(window_length, what)
    dtype = _floating(dtype, what)
    if length == 1:
        return _window(np.ones(1), dtype)
    even = 1 - length % 2
    denominator = length + int(bool(periodic)) * even - 1
    count = np.arange(length)
    return _window(a - b * np.cos(2 * np.pi * count / denominator), dtype)


def hann_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """0.5 - 0.5 cos(2 pi n / N) for n < window_length: N the length where `periodic` and
    it is even, the length - 1 otherwise."""
    return _raised_cosine(window_length, periodic, dtype, 0.5, 0.5, "tt.signal.hann_window")


def hamming_window(window_length, periodic=True, dtype=dtypes.float32, name=None):
    """0.54 - 0.46 cos(2 pi n / N), N as for hann_window."""
    return _raised_cosine(window_length, periodic, dtype, 0.54, 0.46, "tt.signal.hamming_window")


def vorbis_window(window_length, dtype=dtypes.float32, name=None):
    """sin(pi / 2 sin^2(pi (n + 1/2) / window_length))."""
    length = _length(window_length, "tt.signal.vorbis_window")
    dtype = _floating(dtype, "tt.signal.vorbis_window")
    inner = np.sin(np.pi * (np.arange(length) + 0.5) / max(length, 1))
    return _window(np.sin(np.pi / 2 * inner**2), dtype)


def kaiser_window(window_length, beta=12.0, dtype=dtypes.float32, name=None):
    """I0(beta sqrt(1 - (2 n / (window_length - 1) - 1)^2)) / I0(beta): numpy's values for a
    Python number `beta`; for a tensor, the ratio of i0e's times exp(|beta r| - |beta|), so
    that the window is differentiable in `beta` (and traced beta works), as TensorFlow's."""
    length = _length(window_length, "tt.signal.kaiser_window")
    dtype = _floating(dtype, "tt.signal.kaiser_window")
    if not isinstance(beta, Tensor):
        return _window(np.kaiser(length, float(beta)), dtype)
    beta = array_ops.cast(beta, dtype)
    if length == 1:
        return _window(np.ones(1), dtype)
    ramp = 2.0 * np.arange(length) / (length - 1) - 1.0
    scaled = beta * _window(np.sqrt(np.maximum(1.0 - ramp**2, 0.0)), dtype)
    ratio = special_ops.bessel_i0e(scaled) / special_ops.bessel_i0e(beta)
    return ratio * math_ops.exp(math_ops.abs(scaled) - math_ops.abs(beta))
