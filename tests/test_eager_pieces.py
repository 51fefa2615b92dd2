"""An eager concat and a slice's gradient of many elements are written in pieces on the
threads (codegen/array_math.py's `joined`, runtime/conv_kernels.c's `pieces`): the bits of
numpy's concatenate and of zeros with the gradient written in, for every dtype of numbers
and bool, parts of odd sizes, NaN's payloads and negative zeros; shapes whose parts are not
blocks of the result take numpy's way, with the same values."""

import numpy as np
import pytest

import tracer as tt
from codegen import array_math, conv_kernels
from runtime import installed_kernels
from runtime.kernels import LARGE_FLOATING_FROM

pytestmark = pytest.mark.skipif(
    not conv_kernels.available(), reason="the installed kernels were not built here"
)
RNG = np.random.default_rng(11)


def _values(size, dtype):
    """`size` values of `dtype`; floats with a NaN of a payload of its own, -0.0 and inf"""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return RNG.random(size) < 0.5
    if dtype.kind in "iu":
        return RNG.integers(-100 if dtype.kind == "i" else 0, 100, size).astype(dtype)
    values = RNG.standard_normal(size).astype(dtype)
    if dtype.kind == "c":
        values = values + 1j * RNG.standard_normal(size).astype(dtype)
    if size < 3:
        return values
    bits = values.view(np.uint8).reshape(size, -1)
    bits[0] = np.frombuffer(np.array([-0.0], dtype).tobytes(), np.uint8)
    values[1] = np.inf
    if dtype.kind == "f":
        payload = {4: 0x7FC00123, 8: 0x7FF8000000000123}[dtype.itemsize]
        values.view({4: np.uint32, 8: np.uint64}[dtype.itemsize])[2] = payload
    return values


def _same_bits(found, expected):
    assert found.dtype == expected.dtype and found.shape == expected.shape
    assert found.tobytes() == expected.tobytes()


@pytest.mark.parametrize(
    "dtype", [np.float64, np.float32, np.complex128, np.int32, np.int8, np.uint16, np.bool_]
)
@pytest.mark.parametrize("sizes", [(1, 99_999), (65_537, 7, 3), (40_000, 40_000)])
def test_a_large_concat_gives_numpys_bits(dtype, sizes):
    parts = [_values(size, dtype) for size in sizes]
    found = tt.concat([tt.constant(p) for p in parts], 0).numpy()
    _same_bits(found, np.concatenate(parts))


@pytest.mark.parametrize("leading", [(1,), (2,)])  # blocks of the result, and not
def test_a_concat_along_a_later_axis_gives_numpys_values(leading):
    parts = [
        _values(leading[0] * size * 3, np.float64).reshape(*leading, size, 3)
        for size in (30_000, 11)
    ]
    found = tt.concat([tt.constant(p) for p in parts], len(leading)).numpy()
    _same_bits(found, np.concatenate(parts, axis=len(leading)))


@pytest.mark.parametrize(
    "shape, index",
    [
        ((100_000,), np.s_[1:]),
        ((100_000,), np.s_[:-1]),
        ((100_000,), np.s_[5:70_005]),
        ((300, 400), np.s_[7]),  # a row: one block
        ((300, 400), np.s_[10:250]),
        ((300, 400), np.s_[:, 1:]),  # not one block: numpy's way
    ],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_large_slices_gradient_gives_numpys_bits(shape, index, dtype):
    x = tt.constant(_values(int(np.prod(shape)), dtype).reshape(shape))
    weight = _values(int(np.prod(shape)), dtype).reshape(shape)[index]
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(x[index] * weight)
    expected = np.zeros(shape, dtype)
    expected[index] = weight
    _same_bits(tape.gradient(y, x).numpy(), expected)


def test_joined_writes_parts_and_zeros_in_order_and_refuses_what_it_cannot_copy():
    ints = np.arange(5, dtype=np.int32)
    found = array_math.joined((3, ints, 0, ints[::-1].copy(), 2), (15,), np.dtype(np.int32))
    _same_bits(found, np.r_[0, 0, 0, ints, ints[::-1], 0, 0].astype(np.int32))
    size = LARGE_FLOATING_FROM + 3  # on the threads
    wide = _values(size, np.float64)
    _same_bits(array_math.joined((1, wide), (size + 1,), wide.dtype), np.r_[0.0, wide])
    assert array_math.joined((ints.astype(np.int64),), (5,), np.dtype(np.int32)) is None
    assert array_math.joined((ints[::2],), (3,), np.dtype(np.int32)) is None  # not contiguous
    assert array_math.joined((np.array(["a"]),), (1,), np.dtype("U1")) is None


def test_the_pieces_must_make_up_the_result():
    pieces = installed_kernels.pieces()
    out = np.empty(4, np.float64)
    with pytest.raises(ValueError, match="the parts make 24 bytes, out has 32"):
        pieces(out, (np.ones(2), 8))
    with pytest.raises(ValueError, match="below 0"):
        pieces(out, (-8, 40))
    with pytest.raises(TypeError, match="parts a tuple"):
        pieces(out, [32])
    with pytest.raises(TypeError):
        pieces(out, ("eight bytes",))
