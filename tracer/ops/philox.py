"""TensorFlow's random numbers, bit for bit: the Philox4x32-10 counter-based generator and
the distributions TensorFlow's CPU kernels draw from it (what `tf.random.Generator` gives).

A Philox state is TensorFlow's: int64 [counter low 64 bits, counter high 64 bits, key]. One
block of the generator is the 10-round Philox function of a 128-bit counter and a 64-bit
key: four uint32 words; an op reads blocks from the state's counter on. How the words
become numbers (TensorFlow's random_distributions.h, read from its outputs):

- uniform float32: a word's 23 low bits as the mantissa of a float in [1, 2), less 1;
  float64: two words (the first the high half) as 52 bits of mantissa;
- normal: Box-Muller on two uniforms (float32 from two words, float64 from four): r =
  sqrt(-2 log u1) (u1 at least 1e-7 for float32), the angle 2 pi u2 in double, then sin and
  cos in the float type, each result one of the pair; float32's log, sin and cos are the C
  library's (`_c_library_f32`), whose rounding TensorFlow's values carry;
- truncated normal: normals of |x| < 2 from consecutive pairs, each group of 4 (float32) or
  2 (float64) outputs drawn from its own run of 256 words an output;
- integers in [minval, maxval): a word (two for 64-bit types, the first the low half) modulo
  the range; the full range: the words themselves.

A stateful op then moves the state's counter on by 256 blocks for each element it made.
"""

import ctypes
import ctypes.util

import numpy as np

from codegen import forms
from runtime.host import HOST_FUNCTIONS
from tracer import dtypes
from tracer.ops.core import apply
from tracer.ops.registry import primitive, unbatchable

_MULTIPLIERS = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))
_KEY_STEPS = (np.uint64(0x9E3779B9), np.uint64(0xBB67AE85))
_LOW = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)
BLOCKS_PER_ELEMENT = 256  # how far a stateful op moves the counter for each element
_TRUNCATED_GROUP = {np.float32: 4, np.float64: 2}


def _rounds(counters, key):
    """Philox4x32-10 of `counters` ([n, 4] uint64 holding uint32 words) under `key` (two
    uint32 words as uint64): [n, 4] uint32."""
    c0, c1, c2, c3 = (counters[:, k] for k in range(4))
    k0, k1 = key
    for _ in range(10):
        p0, p1 = _MULTIPLIERS[0] * c0, _MULTIPLIERS[1] * c2
        c0, c1, c2, c3 = (p1 >> _32) ^ c1 ^ k0, p1 & _LOW, (p0 >> _32) ^ c3 ^ k1, p0 & _LOW
        k0, k1 = (k0 + _KEY_STEPS[0]) & _LOW, (k1 + _KEY_STEPS[1]) & _LOW
    return np.stack([c0, c1, c2, c3], axis=1).astype(np.uint32)


def words(state, count, skip_blocks=0):
    """`count` uint32 words of the blocks from the state's counter (plus `skip_blocks`)."""
    state = np.asarray(state, np.int64).view(np.uint64)
    blocks = np.arange((count + 3) // 4, dtype=np.uint64) + np.uint64(skip_blocks)
    with np.errstate(over="ignore"):
        low = state[0] + blocks
        high = state[1] + (low < state[0]).astype(np.uint64)  # the 128-bit counter's carry
    counters = np.stack([low & _LOW, low >> _32, high & _LOW, high >> _32], axis=1)
    key = (state[2] & _LOW, state[2] >> _32)
    with np.errstate(over="ignore"):
        return _rounds(counters, key).reshape(-1)[:count]


def seed_state(seed):
    """from_seed's state: an int seed's 64-bit words from the lowest, padded with zeros."""
    seed = int(seed)
    values = []
    while len(values) < 3:
        values.append(seed & 0xFFFFFFFFFFFFFFFF)
        seed >>= 64
    if seed not in (0, -1):
        raise ValueError("tt.random.Generator: the seed has more than 192 bits")
    return np.array(values, np.uint64).view(np.int64)


# --- words to numbers --------------------------------------------------------------------


def _unit32(w):
    return ((w & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)).view(np.float32) - np.float32(1)


def _unit64(high, low):
    bits = (high.astype(np.uint64) << _32) | low.astype(np.uint64)
    return ((bits & np.uint64(0xFFFFFFFFFFFFF)) | np.uint64(0x3FF0000000000000)).view(
        np.float64
    ) - 1.0


def uniform(w, dtype):
    if dtype == np.float64:
        return _unit64(w[0::2], w[1::2])
    return _unit32(w).astype(dtype)


def _box_muller(w, dtype):
    """Pairs of normals (sin, cos of each angle) from 2 words each (float32) or 4 (float64)."""
    if dtype == np.float64:
        u1, u2 = _unit64(w[0::4], w[1::4]), _unit64(w[2::4], w[3::4])
        radius = np.sqrt(-2.0 * np.log(np.maximum(u1, 1e-7)))
        angle = 2.0 * np.pi * u2
        return np.sin(angle) * radius, np.cos(angle) * radius
    u1 = np.maximum(_unit32(w[0::2]), np.float32(1e-7))
    angle = (2.0 * np.pi * _unit32(w[1::2]).astype(np.float64)).astype(np.float32)
    radius = np.sqrt(np.float32(-2.0) * _c_library_f32("logf", u1))
    return _c_library_f32("sinf", angle) * radius, _c_library_f32("cosf", angle) * radius


def normal(w, dtype):
    """Normals in pairs from the words, as many as the words make."""
    sines, cosines = _box_muller(w, dtype)
    out = np.empty(2 * len(sines), dtype)
    out[0::2], out[1::2] = sines, cosines
    return out


def words_per_element(dtype):
    """The words each number of `dtype` takes: one for 32 bits, two for 64 (a normal pair
    takes two numbers' words)."""
    return 1 + (np.dtype(dtype).itemsize == 8)


def truncated_normal(state, count, dtype):
    """`count` normals of |x| < 2: group g of 4 (2 for float64) from word g * 1024 on (256
    words for each output)."""
    group = _TRUNCATED_GROUP[dtype]
    per_pair = 2 * words_per_element(dtype)
    out = []
    for g in range((count + group - 1) // group):
        kept, start = [], 0
        while len(kept) < group:
            w = words(state, start + 64 * per_pair, g * group * 64)[start:]
            values = normal(w, dtype)
            kept.extend(v for v in values if abs(v) < 2.0)
            start += 64 * per_pair
        out.extend(kept[:group])
    return np.array(out[:count], dtype)


def integers(w, dtype, low, high):
    """Integers in [low, high) (the full range where both are None)."""
    if np.dtype(dtype).itemsize == 8:
        bits = (w[1::2].astype(np.uint64) << _32) | w[0::2].astype(np.uint64)
    else:
        bits = w.astype(np.uint64)
    if low is None:
        unsigned = bits if np.dtype(dtype).itemsize == 8 else bits.astype(np.uint32)
        return unsigned.view(np.dtype(dtype))
    span = np.uint64(int(high) - int(low))
    return (int(low) + (bits % span).astype(np.int64)).astype(dtype)


def sample(state, shape, dtype, distribution, low=None, high=None):
    """What a TensorFlow Generator at `state` draws: an array of `shape` and numpy `dtype`
    from `distribution` ("uniform", "normal", "truncated_normal" or "integers", in
    [low, high), or the full range where both are None)."""
    dtype = np.dtype(dtype).type
    count = int(np.prod(shape, dtype=np.int64))
    if distribution == "truncated_normal":
        return truncated_normal(state, count, dtype).reshape(shape)
    per = words_per_element(dtype)
    if distribution == "normal":
        values = normal(words(state, (count + 1) // 2 * 2 * per), dtype)  # whole pairs
    else:
        w = words(state, count * per)
        values = integers(w, dtype, low, high) if distribution == "integers" else uniform(w, dtype)
    return values[:count].reshape(shape)


# --- the C library's float32 functions ------------------------------------------------------

_FUNCTIONS = {"logf": np.log, "sinf": np.sin, "cosf": np.cos}


def _c_library():
    """The C library's float32 functions by name (None where no libm is found)."""
    found = ctypes.util.find_library("m")
    if not found:
        return None
    library, functions = ctypes.CDLL(found), {}
    for name in _FUNCTIONS:
        function = getattr(library, name)
        function.restype, function.argtypes = ctypes.c_float, [ctypes.c_float]
        functions[name] = function
    return functions


_LIBM = _c_library()
# how near the middle of two floats (in units of their distance) the double may lie where
# the library's float may be the other one: glibc's sinf and cosf err by at most 0.56 units,
# its logf by 0.82, so near 0.06 and 0.32 of the middle
_DOUBT = {"logf": 0.35, "sinf": 0.1, "cosf": 0.1}


def _c_library_f32(name, x):
    """The C library's float32 `name` of each element of `x` (what TensorFlow's kernels
    call): computed in double and rounded, and, where the double lies so near the middle of
    two floats that the library may round it the other way, asked of the library itself."""
    exact = _FUNCTIONS[name](x.astype(np.float64))
    rounded = exact.astype(np.float32)
    if _LIBM is None:
        return rounded
    spacing = np.spacing(np.abs(rounded)).astype(np.float64)
    near = np.nonzero(np.abs(np.abs(exact - rounded) / spacing - 0.5) < _DOUBT[name])[0]
    if len(near):
        rounded[near] = [_LIBM[name](float(v)) for v in x[near]]
    return rounded


# --- the op ------------------------------------------------------------------------------

DISTRIBUTIONS = ("uniform", "normal", "truncated_normal", "integers")


def _infer_sample(attrs, state):
    if state.dtype is not dtypes.int64 or tuple(state.shape) != (3,):
        raise TypeError(
            f"philox_sample: the state must be int64 [3], not {state.dtype.name}{list(state.shape)}"
        )
    return attrs["shape"], attrs["dtype"]


def _sample_kernel(state, shape, dtype, distribution, low, high):
    return sample(state, shape, dtype.as_numpy_dtype, distribution, low, high)


def _sample_from_c(inputs, out, **attrs):
    """The host function of a compiled module: the draw into its buffer."""
    out[...] = _sample_kernel(inputs[0], **attrs).reshape(-1)


SAMPLE_HOST_FUNCTION = "tracer.philox_sample"
HOST_FUNCTIONS[SAMPLE_HOST_FUNCTION] = _sample_from_c

# A draw of TensorFlow's from a Philox state (the Generator moves the state on itself); a
# compiled module computes it in Python, as the numpy kernel does, so every backend draws
# TensorFlow's bits.
PHILOX_SAMPLE = primitive(
    "philox_sample",
    _infer_sample,
    kernel=_sample_kernel,
    c=forms.HostCall(lambda node: (SAMPLE_HOST_FUNCTION, dict(node.attrs)), reads_all=True),
    batch=unbatchable("(a random draw from a generator's state) moves the state: draw outside"),
)


def draw(state, shape, dtype, distribution, low=None, high=None):
    """The values of `shape` and `dtype` a Generator at `state` (an int64 [3] tensor) draws."""
    attrs = {
        "shape": tuple(int(d) for d in shape),
        "dtype": dtype,
        "distribution": distribution,
        "low": None if low is None else int(low),
        "high": None if high is None else int(high),
    }
    return apply(PHILOX_SAMPLE, (state,), attrs)
