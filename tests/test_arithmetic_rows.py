"""Large float32 and float64 +, -, *, / and negation in the loop installed with tracer, on the
threads (codegen/array_math.py's `arithmetic` and `negative`): numpy's bits for every way an
operand is read (whole, a bias, a column, one element, on either side), NaN, infinities,
signed zeros and zero divisors included; other shapes left to numpy; and eager ops that take
it, through the C op path too, a numpy scalar first among them. A bias is the result's last
axes, one or more (an attention mask added to the scores). Where neither operand is a row or
a column, the elements are shared as one range: a 1-D array too."""

import sys
import warnings

import numpy as np
import pytest

import tracer as tt
from codegen import array_math, conv_kernels
from runtime import aligned, installed_kernels, native
from tracer.ops.math_ops import ARITHMETIC_ON_THREADS_FROM

rng = np.random.default_rng(20261201)
LARGE = (512, 300)  # past ARITHMETIC_ON_THREADS_FROM: on the threads
SHAPES = [  # x, y: whole, a bias, a column, one element, either side
    (LARGE, LARGE),
    (LARGE, (300,)),
    ((300,), LARGE),
    ((1, 300), LARGE),
    (LARGE, (512, 1)),
    ((512, 1), LARGE),
    (LARGE, ()),
    ((), LARGE),
    ((1, 1), LARGE),
    ((4, 64, 28, 32), (32,)),
    ((8, 4, 64, 64), (64, 64)),  # a trailing block: an attention mask over the scores
    ((64, 64), (8, 4, 64, 64)),
    ((8, 4, 64, 64), (1, 4, 64, 64)),
    ((7, 5), (7, 5)),  # small: one thread
    ((153601,), (153601,)),  # one long row: its elements shared, not its rows
    ((153601,), ()),
    ((), (153601,)),
    ((2, 76801), (2, 76801)),  # fewer rows than threads
    ((153601,), (1, 1)),  # one element of more axes: the result has them
]
installed = pytest.mark.skipif(not conv_kernels.available(), reason="no installed kernels here")


def _values(shape, dtype):
    values = rng.standard_normal(shape) * 1e3
    flat = values.reshape(-1)
    specials = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-310]
    flat[: min(len(flat), len(specials))] = specials[: len(flat)]
    return values.astype(dtype)


@installed
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize(
    "symbol, ufunc",
    [("+", np.add), ("-", np.subtract), ("*", np.multiply), ("/", np.true_divide)],
)
def test_the_installed_loop_gives_numpys_bits(symbol, ufunc, shapes, dtype):
    x, y = (_values(shape, dtype) for shape in shapes)
    with np.errstate(all="ignore"):
        want = ufunc(x, y)
    got = array_math.arithmetic(symbol, x, y)
    assert got is not None and got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


@installed
@pytest.mark.parametrize(
    "x, y",
    [
        (np.ones((4, 64, 64), np.float32), np.ones((4, 1, 64), np.float32)),  # ones inside
        (np.ones((512, 1), np.float32), np.ones((1, 300), np.float32)),  # neither whole
        (np.ones(LARGE, np.float32)[:, ::2], np.ones((150,), np.float32)),  # strided
        (np.ones(LARGE, np.float32), np.ones((300,), np.float64)),  # two dtypes
        (np.ones(LARGE, np.complex64), np.ones((300,), np.complex64)),
    ],
)
def test_other_operands_are_left_to_numpy(x, y):
    assert array_math.arithmetic("+", x, y) is None


@installed
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [LARGE, (153601,), (3, 0), ()])
def test_the_installed_negation_gives_numpys_bits(shape, dtype):
    x = np.asarray(_values(shape, dtype))
    got = array_math.negative(x)
    assert got is not None and got.dtype == dtype and got.shape == x.shape
    assert got.tobytes() == np.negative(x).tobytes()
    assert array_math.negative(np.ones(LARGE, dtype)[:, ::2]) is None  # strided: numpy's


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_eager_quotients_negations_and_scalar_first_products_are_numpys(dtype):
    """Through the eager ops: the kernels take a numpy scalar as the first operand too, and
    a zero divisor gives numpy's inf and NaN without a warning."""
    x, y = _values(LARGE, dtype), _values(LARGE, dtype)
    y[0, :3] = [0.0, -0.0, 0.0]
    two = dtype(2.5)
    tx, ty = tt.constant(x), tt.constant(y)
    with np.errstate(all="ignore"):
        want = {
            "quotient": x / y,
            "scalar quotient": two / y,
            "scalar product": two * y,
            "scalar difference": two - y,
            "negation": -x,
        }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = {
            "quotient": tt.divide(tx, ty),
            "scalar quotient": tt.divide(tt.constant(two), ty),
            "scalar product": tt.constant(two) * ty,
            "scalar difference": tt.constant(two) - ty,
            "negation": -tx,
        }
    for name, value in got.items():
        assert value.numpy().tobytes() == want[name].tobytes(), name


def test_the_c_op_path_takes_the_kernel_from_the_same_size():
    if native.load("fast_apply") is None:
        pytest.skip("the C op path was not built here")
    assert native.load("fast_apply").LARGE_FLOATING_FROM == ARITHMETIC_ON_THREADS_FROM


def test_the_installed_loops_take_the_threads_from_the_same_size():
    if not conv_kernels.available():
        pytest.skip("the installed kernels were not built here")
    assert native.load("conv_kernels").ELEMENTS_PARALLEL_MIN == ARITHMETIC_ON_THREADS_FROM


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_large_eager_bias_add_and_its_gradient_are_numpys(dtype):
    """Through the C op path (tensors) and the Python one (a variable), on a tape."""
    x = _values((64, 28, 28, 32), dtype)
    x[np.isnan(x) | np.isinf(x)] = 1.0
    b = _values((32,), dtype)
    b[np.isnan(b) | np.isinf(b)] = 2.0
    weights = tt.Variable(b)
    for bias in (tt.constant(b), weights):
        with tt.GradientTape() as tape:
            tape.watch(bias)
            out = tt.constant(x) * 2 + bias
            loss = tt.reduce_sum(out * out)
        assert out.numpy().tobytes() == (x * 2 + b).tobytes()
        gradient = tape.gradient(loss, bias).numpy()
        want = np.sum(2 * (x.astype(np.float64) * 2 + b), axis=(0, 1, 2))
        np.testing.assert_allclose(gradient, want, rtol=1e-4 if dtype == np.float32 else 1e-10)


def test_the_result_shape_is_numpys_broadcast_shape():
    shapes = [(), (1,), (5,), (1, 5), (4, 1), (4, 5), (3, 4, 5), (3, 1, 5), (1, 4, 1), (2, 1, 1)]
    for x in shapes:
        for y in shapes:
            try:
                want = np.broadcast_shapes(x, y)
            except ValueError:
                with pytest.raises(ValueError):
                    array_math._result_shape(x, y)
                continue
            assert array_math._result_shape(x, y) == want, (x, y)


# each pair of shapes of which one is the result's with each array that takes the result: a
# new one, another, or an operand of the result's shape
WHOLE_CASES = [
    (shapes, into)
    for shapes in SHAPES
    if np.broadcast_shapes(*shapes) in shapes
    for into in ["new", "other", "x", "y"]
    if into not in "xy" or shapes["xy".index(into)] == np.broadcast_shapes(*shapes)
]


@installed
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes, into", WHOLE_CASES)
@pytest.mark.parametrize(
    "op, ufunc", list(enumerate([np.add, np.subtract, np.multiply, np.true_divide]))
)
def test_the_whole_arithmetic_in_c_gives_numpys_bits_into_any_out(op, ufunc, shapes, into, dtype):
    """installed_kernels.whole_arithmetic (an operand whole, a bias, a column or one element,
    on either side; a 0-d one as a numpy scalar) writes numpy's bits into a new array, an
    operand of the result's shape or another array; a new one starts at a multiple of 64 bytes, a view of a uint8 buffer
    only it holds, as aligned.empty's (the straight-line program writes into those)."""
    whole = installed_kernels.whole_arithmetic()
    x, y = (_values(shape, dtype) for shape in shapes)
    x, y = (v[()] if v.ndim == 0 else v for v in (x, y))  # 0-d: a numpy scalar
    with np.errstate(all="ignore"):
        want = ufunc(x, y)
    out = {"new": None, "other": np.empty(want.shape, dtype), "x": x, "y": y}[into]
    got = whole(op, x, y, out)
    assert got is not None and got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    if out is not None:
        assert got is out
    else:
        assert got.ctypes.data % aligned.ALIGNMENT == 0
        assert got.base.dtype == np.uint8 and got.base.base is None
        buffer = got.base
        assert sys.getrefcount(buffer) == 3  # the view's, this name's and the call's argument


@installed
@pytest.mark.parametrize(
    "x, y, out",
    [
        (np.ones((4, 64, 64)), np.ones((4, 1, 64)), None),  # ones inside
        (np.ones((512, 1)), np.ones((1, 300)), None),  # neither whole
        (np.ones((300,)), np.ones((1, 1, 1)), None),  # one element of more axes: Python's
        (np.ones(LARGE, np.float32), np.ones(LARGE), None),  # two dtypes
        (np.ones(LARGE, np.float32), np.float64(2.0), None),
        (np.ones(LARGE)[:, ::2], np.ones((512, 150)), None),  # strided
        (np.ones(LARGE, np.int64), np.ones(LARGE, np.int64), None),
        (np.ones(LARGE, np.complex128), np.ones(LARGE, np.complex128), None),
        (np.ones(LARGE, ">f8"), np.ones(LARGE, ">f8"), None),  # not native
        (np.ones((0, 3)), np.ones((0, 3)), None),  # empty
        (np.ones(LARGE), np.ones(LARGE), np.ones((300, 512))),  # out of another shape
        (np.ones(LARGE), np.ones(LARGE), np.ones(LARGE, np.float32)),  # or dtype
        (np.ones(LARGE), np.ones(LARGE), np.ones((512, 600))[:, ::2]),  # strided out
        (np.ones(LARGE), np.ones(LARGE), np.broadcast_to(np.ones(1), LARGE)),  # read-only
        (1.5, np.ones(LARGE), None),  # a Python float: no buffer
    ],
)
def test_the_whole_arithmetic_in_c_leaves_other_operands_to_python(x, y, out):
    """None, nothing written: array_math.arithmetic then reads them in Python, which gives an
    element of more axes than the other operand numpy's bits (the tests above) and leaves the
    rest to numpy."""
    kept = None if out is None else out.copy()
    assert installed_kernels.whole_arithmetic()(0, x, y, out) is None
    if out is not None:
        assert out.tobytes() == kept.tobytes()


@installed
def test_the_whole_arithmetic_in_c_names_a_bad_call():
    whole = installed_kernels.whole_arithmetic()
    with pytest.raises(ValueError, match="op is 0 to 3"):
        whole(4, np.ones(3), np.ones(3), None)
    with pytest.raises(TypeError, match=r"arithmetic\(op, x, y, out\)"):
        whole(0, np.ones(3), np.ones(3))
