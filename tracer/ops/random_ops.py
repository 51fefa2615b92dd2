"""Stateless random numbers: uniforms in [0, 1) computed from a seed tensor and each element's
index, so that a compiled function draws new values whenever its seed changes.

`stateless_random_uniform_unit` is the one primitive: element i of the draw for seed (a, b)
is

    key = splitmix64(splitmix64(a + G) ^ b)        G = 0x9E3779B97F4A7C15, a and b as uint64
    z   = splitmix64(key + (i + 1) * G)            i: the element's row-major flat index
    u   = (z >> (64 - m)) * 2^-m                   m = 24 (float32), 53 (float64), 11 (float16)

with splitmix64's finaliser (Steele, Lea and Flood 2014; the mixer of Java's
SplittableRandom): every step is uint64 arithmetic modulo 2^64 and the final product is
exact, so the numpy kernel and the C code give the same bits. The stream is not
TensorFlow's (Philox-4x32-10): only its contract is, the same values for the same seed
and shape, in eager mode and in every backend.

A seed of shape [..., 2] draws one independent block per pair (the batching rule runs a
batch of seeds as one op); the public functions in `tt.random` take a seed of shape [2].
"""

import math

import numpy as np

from codegen import forms
from codegen.affine import offset
from codegen.ctypes import storage
from codegen.loops import INDEX, Nest, identity_map, loops_over
from tracer import dtypes
from tracer.ir import dims
from tracer.ops.core import apply
from tracer.ops.registry import primitive

# the bits of z each floating dtype keeps: the width of its significand
UNIT_BITS = {"float16": 11, "float32": 24, "float64": 53}
SEED_DTYPES = (dtypes.int32, dtypes.int64)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))


def _splitmix64(z):
    """splitmix64's finaliser of a uint64 array, in place (wrapping products, as in C)."""
    z ^= z >> np.uint64(30)
    z *= _MIX[0]
    z ^= z >> np.uint64(27)
    z *= _MIX[1]
    z ^= z >> np.uint64(31)
    return z


_CHUNK = 1 << 16  # elements per step of the numpy kernel: its temporaries stay in cache


# draws of at most this many values from one seed pair are made with Python's integers: a
# few numpy ops on tiny arrays cost more than the arithmetic (the same bits either way)
_FEW = 32
_MASK64 = (1 << 64) - 1


def _splitmix64_int(z):
    """_splitmix64 of one Python int in [0, 2^64)."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & _MASK64
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB & _MASK64
    return z ^ (z >> 31)


def _pair_key(a, b):
    """The key of seed pair (a, b), as Python ints: splitmix64(splitmix64(a + G) ^ b)."""
    a, b = int(a) & _MASK64, int(b) & _MASK64
    return _splitmix64_int(_splitmix64_int((a + 0x9E3779B97F4A7C15) & _MASK64) ^ b)


def _few_units(seed, count, bits):
    """The `count` units of one seed pair, as `_unit_kernel` makes them, as Python floats
    (each `bits` bits times 2^-bits: exact in a float of that many bits' significand)."""
    key = _pair_key(*seed)
    step, shift, scale = 0x9E3779B97F4A7C15, 64 - bits, 2.0**-bits
    return [
        (_splitmix64_int((key + c * step) & _MASK64) >> shift) * scale for c in range(1, count + 1)
    ]


def _unit_kernel(seed, shape, dtype):
    bits = UNIT_BITS[dtype.name]
    compute = np.float64 if bits == 53 else np.float32  # exact: fewer than 2^bits values
    count = math.prod(shape)
    if seed.size == 2 and count <= _FEW:
        unit = np.array(_few_units(seed.reshape(2).tolist(), count, bits), dtype=compute)
        return unit.astype(dtype.as_numpy_dtype, copy=False).reshape(seed.shape[:-1] + tuple(shape))
    pairs = seed.astype(np.int64).reshape(-1, 2).view(np.uint64)
    if len(pairs) == 1:  # one pair's key in Python's integers: numpy's costs more on one
        keys = np.array([[_pair_key(*pairs[0].tolist())]], dtype=np.uint64)
    else:
        keys = _splitmix64(_splitmix64(pairs[:, 0] + _GOLDEN) ^ pairs[:, 1])[:, None]
    unit = np.empty((len(keys), count), dtype=compute)
    for start in range(0, count, _CHUNK):
        counters = np.arange(start + 1, min(start + _CHUNK, count) + 1, dtype=np.uint64)
        z = _splitmix64(keys + counters * _GOLDEN)
        unit[:, start : start + _CHUNK] = z >> np.uint64(64 - bits)
    unit *= compute(2.0**-bits)
    return unit.astype(dtype.as_numpy_dtype, copy=False).reshape(seed.shape[:-1] + tuple(shape))


def _infer_unit(attrs, seed):
    if seed.dtype not in SEED_DTYPES:
        raise TypeError(f"the seed must be an int32 or int64 tensor, not {seed.dtype.name}")
    if tuple(seed.shape[-1:]) != (2,):
        raise ValueError(
            f"the seed must have shape [2] (or [..., 2], a batch of pairs), not {list(seed.shape)}"
        )
    dtype, shape = attrs["dtype"], attrs["shape"]
    if dtype.name not in UNIT_BITS:
        raise TypeError(f"draws floating values (float16, float32, float64), not {dtype.name}")
    if any(isinstance(d, int) and d < 0 for d in shape):
        raise ValueError(f"the shape {list(shape)} has a negative dimension")
    return tuple(seed.shape[:-1]) + tuple(shape), dtype


# NOTE: the same constants as _splitmix64 and _unit_kernel; the seed is read as int64 and
# then as uint64, as numpy's astype(int64).view(uint64) reads it.
_SPLITMIX64 = forms.Helper(
    "splitmix64",
    integer="""static inline uint64_t tr_splitmix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static inline uint64_t tr_random_key(int64_t a, int64_t b) {
    return tr_splitmix64(tr_splitmix64((uint64_t)a + 0x9E3779B97F4A7C15ULL) ^ (uint64_t)b);
}""",
    typed=False,
)


def _unit_nests(node):
    """One loop over the seed pairs, one over the elements of each pair's block."""
    (seed,) = node.inputs
    shape = (dims.size(seed.shape[:-1]), dims.size(node.attrs["shape"]))
    bits = UNIT_BITS[node.dtype.name]
    compute, suffix = ("double", "") if bits == 53 else ("float", "f")
    i0, i1 = INDEX[0], INDEX[1]
    counter = f"((uint64_t){i1} + 1) * 0x{int(_GOLDEN):X}ULL"
    statements = [
        (f"const uint64_t key = tr_random_key(p0[2 * {i0}], p0[2 * {i0} + 1]);", "the pair's key"),
        (f"const uint64_t z = tr_splitmix64(key + {counter});", "the element's bits"),
    ]
    unit = f"({compute})(z >> {64 - bits}) * 0x1p-{bits}{suffix}"
    flat = offset(identity_map(2), shape).c(INDEX)
    store = f"out[{flat}] = ({storage(node.dtype)})({unit});"
    return [(storage(seed.dtype), "p0")], [Nest(loops_over(shape), statements, store)]


STATELESS_RANDOM_UNIFORM_UNIT = primitive(
    "stateless_random_uniform_unit",
    _infer_unit,
    # grad=None: the seed is integer, so no gradient flows to it, and the ops using a draw
    # see a constant; a batch of seeds of shape [B, ..., 2] is one op drawing a block per pair
    batch=lambda node, args, flags, size: apply(
        STATELESS_RANDOM_UNIFORM_UNIT, (args[0],), node.attrs
    ),
    kernel=_unit_kernel,
    c=forms.LoopNests(_unit_nests, helpers=(_SPLITMIX64,)),
)


def uniform_unit(shape, seed, dtype):
    """Uniforms in [0, 1) of `shape` and floating `dtype` for `seed`, an integer tensor of
    shape [2] (or [..., 2]: one block of `shape` per pair); `shape` is a tuple of dimensions.

    >>> uniform_unit((3,), tt.constant([1, 2]), tt.float64).shape
    TensorShape([3])
    """
    return apply(STATELESS_RANDOM_UNIFORM_UNIT, (seed,), {"shape": tuple(shape), "dtype": dtype})
