"""TensorFlow's hashes of strings: `tf.strings.to_hash_bucket_fast` (FarmHash's
Fingerprint64) and `to_hash_bucket_strong` (SipHash-2-4 keyed by two 64-bit numbers), each
modulo the number of buckets, so that a string falls in TensorFlow's bucket. Keras's Hashing
layer takes its buckets from them.

Both hash functions are written here from their published definitions, on Python's
integers masked to 64 bits; they run where strings run (tracer/ops/string_ops.py).
"""

import struct

import numpy as np

from tracer import dtypes
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.string_ops import each_element, expect_strings, string_op

_MASK = (1 << 64) - 1
_K0, _K1, _K2 = 0xC3A5C85C97CB3127, 0xB492B66FBE98F273, 0x9AE16A3B2F90404F


def _fetch64(data, at):
    return struct.unpack_from("<Q", data, at)[0]


def _fetch32(data, at):
    return struct.unpack_from("<I", data, at)[0]


def _rotate(value, shift):
    return value if shift == 0 else ((value >> shift) | (value << (64 - shift))) & _MASK


def _shift_mix(value):
    return value ^ (value >> 47)


def _hash_16(u, v, mul):
    a = ((u ^ v) * mul) & _MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & _MASK
    b ^= b >> 47
    return (b * mul) & _MASK


def _hash_0_to_16(data, length):
    if length >= 8:
        mul = _K2 + length * 2
        a = (_fetch64(data, 0) + _K2) & _MASK
        b = _fetch64(data, length - 8)
        c = (_rotate(b, 37) * mul + a) & _MASK
        d = ((_rotate(a, 25) + b) * mul) & _MASK
        return _hash_16(c, d, mul)
    if length >= 4:
        mul = _K2 + length * 2
        a = _fetch32(data, 0)
        return _hash_16(length + (a << 3), _fetch32(data, length - 4), mul)
    if length > 0:
        y = data[0] + (data[length >> 1] << 8)
        z = length + (data[length - 1] << 2)
        return (_shift_mix(((y * _K2) ^ (z * _K0)) & _MASK) * _K2) & _MASK
    return _K2


def _hash_17_to_32(data, length):
    mul = _K2 + length * 2
    a = (_fetch64(data, 0) * _K1) & _MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, length - 8) * mul) & _MASK
    d = (_fetch64(data, length - 16) * _K2) & _MASK
    first = (_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK
    return _hash_16(first, (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)


def _hash_33_to_64(data, length):
    mul = _K2 + length * 2
    a = (_fetch64(data, 0) * _K2) & _MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, length - 8) * mul) & _MASK
    d = (_fetch64(data, length - 16) * _K2) & _MASK
    y = (_rotate((a + b) & _MASK, 43) + _rotate(c, 30) + d) & _MASK
    z = _hash_16(y, (a + _rotate((b + _K2) & _MASK, 18) + c) & _MASK, mul)
    e = (_fetch64(data, 16) * mul) & _MASK
    f = _fetch64(data, 24)
    g = ((y + _fetch64(data, length - 32)) * mul) & _MASK
    h = ((z + _fetch64(data, length - 24)) * mul) & _MASK
    first = (_rotate((e + f) & _MASK, 43) + _rotate(g, 30) + h) & _MASK
    return _hash_16(first, (e + _rotate((f + a) & _MASK, 18) + g) & _MASK, mul)


def _weak_32(data, at, a, b):
    w, x, y, z = (_fetch64(data, at + k) for k in (0, 8, 16, 24))
    a = (a + w) & _MASK
    b = _rotate((b + a + z) & _MASK, 21)
    c = a
    a = (a + x + y) & _MASK
    b = (b + _rotate(a, 44)) & _MASK
    return (a + z) & _MASK, (b + c) & _MASK


def fingerprint64(data):
    """FarmHash's Fingerprint64 of `data` (bytes): what TensorFlow's fast buckets reduce."""
    length = len(data)
    if length <= 16:
        return _hash_0_to_16(data, length)
    if length <= 32:
        return _hash_17_to_32(data, length)
    if length <= 64:
        return _hash_33_to_64(data, length)
    seed = 81
    x = seed
    y = (seed * _K1 + 113) & _MASK
    z = (_shift_mix((y * _K2 + 113) & _MASK) * _K2) & _MASK
    v, w = (0, 0), (0, 0)
    x = (x * _K2 + _fetch64(data, 0)) & _MASK
    end = ((length - 1) // 64) * 64
    last = end + ((length - 1) & 63) - 63
    at = 0
    while True:
        x = (_rotate((x + y + v[0] + _fetch64(data, at + 8)) & _MASK, 37) * _K1) & _MASK
        y = (_rotate((y + v[1] + _fetch64(data, at + 48)) & _MASK, 42) * _K1) & _MASK
        x ^= w[1]
        y = (y + v[0] + _fetch64(data, at + 40)) & _MASK
        z = (_rotate((z + w[0]) & _MASK, 33) * _K1) & _MASK
        v = _weak_32(data, at, (v[1] * _K1) & _MASK, (x + w[0]) & _MASK)
        w = _weak_32(data, at + 32, (z + w[1]) & _MASK, (y + _fetch64(data, at + 16)) & _MASK)
        z, x = x, z
        at += 64
        if at == end:
            break
    mul = _K1 + ((z & 0xFF) << 1)
    at = last
    w = ((w[0] + ((length - 1) & 63)) & _MASK, w[1])
    v = ((v[0] + w[0]) & _MASK, v[1])
    w = ((w[0] + v[0]) & _MASK, w[1])
    x = (_rotate((x + y + v[0] + _fetch64(data, at + 8)) & _MASK, 37) * mul) & _MASK
    y = (_rotate((y + v[1] + _fetch64(data, at + 48)) & _MASK, 42) * mul) & _MASK
    x ^= (w[1] * 9) & _MASK
    y = (y + v[0] * 9 + _fetch64(data, at + 40)) & _MASK
    z = (_rotate((z + w[0]) & _MASK, 33) * mul) & _MASK
    v = _weak_32(data, at, (v[1] * mul) & _MASK, (x + w[0]) & _MASK)
    w = _weak_32(data, at + 32, (z + w[1]) & _MASK, (y + _fetch64(data, at + 16)) & _MASK)
    z, x = x, z
    first = (_hash_16(v[0], w[0], mul) + _shift_mix(y) * _K0 + z) & _MASK
    return _hash_16(first, (_hash_16(v[1], w[1], mul) + x) & _MASK, mul)


def _sip_round(v0, v1, v2, v3):
    v0 = (v0 + v1) & _MASK
    v1 = _rotate_left(v1, 13) ^ v0
    v0 = _rotate_left(v0, 32)
    v2 = (v2 + v3) & _MASK
    v3 = _rotate_left(v3, 16) ^ v2
    v0 = (v0 + v3) & _MASK
    v3 = _rotate_left(v3, 21) ^ v0
    v2 = (v2 + v1) & _MASK
    v1 = _rotate_left(v1, 17) ^ v2
    v2 = _rotate_left(v2, 32)
    return v0, v1, v2, v3


def _rotate_left(value, shift):
    return ((value << shift) | (value >> (64 - shift))) & _MASK


def siphash24(data, key0, key1):
    """SipHash-2-4 of `data` (bytes) keyed by two 64-bit numbers."""
    v0 = key0 ^ 0x736F6D6570736575
    v1 = key1 ^ 0x646F72616E646F6D
    v2 = key0 ^ 0x6C7967656E657261
    v3 = key1 ^ 0x7465646279746573
    whole = len(data) - len(data) % 8
    for at in range(0, whole, 8):
        m = _fetch64(data, at)
        v3 ^= m
        v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
        v0 ^= m
    tail = data[whole:] + bytes(7 - len(data) % 8) + bytes([len(data) & 0xFF])
    m = _fetch64(tail, 0)
    v3 ^= m
    v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
    v0 ^= m
    v2 ^= 0xFF
    for _ in range(4):
        v0, v1, v2, v3 = _sip_round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def _fast_kernel(x, num_buckets):
    return each_element(lambda s: fingerprint64(s) % num_buckets, np.asarray(x), dtype=np.int64)


def _strong_kernel(x, num_buckets, key):
    return each_element(lambda s: siphash24(s, *key) % num_buckets, np.asarray(x), dtype=np.int64)


def _infer_buckets(attrs, x):
    expect_strings(x)
    return x.shape, dtypes.int64


TO_HASH_BUCKET_FAST = string_op("to_hash_bucket_fast", _infer_buckets, _fast_kernel)
TO_HASH_BUCKET_STRONG = string_op("to_hash_bucket_strong", _infer_buckets, _strong_kernel)


def _buckets(num_buckets, what):
    count = int(num_buckets)
    if count < 1:
        raise ValueError(f"{what}: num_buckets must be at least 1, not {count}")
    return count


def to_hash_bucket_fast(input, num_buckets, name=None):
    """Each string's FarmHash Fingerprint64 modulo `num_buckets`, int64: TensorFlow's bucket."""
    count = _buckets(num_buckets, "tt.strings.to_hash_bucket_fast")
    return apply(TO_HASH_BUCKET_FAST, (as_tensor(input),), {"num_buckets": count})


def to_hash_bucket_strong(input, num_buckets, key, name=None):
    """Each string's SipHash-2-4 keyed by `key` (two non-negative 64-bit ints) modulo
    `num_buckets`, int64: TensorFlow's bucket."""
    count = _buckets(num_buckets, "tt.strings.to_hash_bucket_strong")
    key = tuple(int(k) for k in key)
    if len(key) != 2 or any(not 0 <= k <= _MASK for k in key):
        raise ValueError(
            f"tt.strings.to_hash_bucket_strong: key must be two 64-bit integers, not {key}"
        )
    return apply(TO_HASH_BUCKET_STRONG, (as_tensor(input),), {"num_buckets": count, "key": key})
