"""tf.math's functions composed of tracer's primitives (tracer/ops/math_composites.py) and
`tt.TensorShape`: values against numpy, gradients against finite differences in float64
to second order, the compiled function against eager, TensorFlow's special values."""

import numpy as np
import pytest

import tracer as tt
from tests.gradcheck import check_first_order, check_second_order

rng = np.random.default_rng(0)
x = rng.uniform(-2.0, 2.0, (3, 4))
positive = rng.uniform(0.5, 3.0, (3, 4))
unit = rng.uniform(-0.9, 0.9, (3, 4))

CASES = [  # (tracer function, numpy reference, arguments)
    (tt.math.sinh, np.sinh, (x,)),
    (tt.math.cosh, np.cosh, (x,)),
    (tt.math.asinh, np.arcsinh, (x,)),
    (tt.math.acosh, np.arccosh, (positive + 1.0,)),
    (tt.math.atanh, np.arctanh, (unit,)),
    (tt.math.reciprocal, np.reciprocal, (positive,)),
    (tt.math.squared_difference, lambda a, b: (a - b) ** 2, (x, unit)),
    (tt.math.divide_no_nan, np.divide, (x, positive)),
    (tt.math.xlogy, lambda a, b: a * np.log(b), (x, positive)),
    (tt.math.xdivy, np.divide, (x, positive)),
    (tt.math.log_sigmoid, lambda a: -np.log1p(np.exp(-a)), (x,)),
    (
        lambda a: tt.math.l2_normalize(a, axis=1),
        lambda a: a / np.sqrt((a * a).sum(1, keepdims=True)),
        (x,),
    ),
    (
        lambda a, b: tt.tensordot(a, b, axes=[[1], [0]]),
        lambda a, b: np.tensordot(a, b, axes=[[1], [0]]),
        (x, rng.standard_normal((4, 2))),
    ),
    (
        lambda a, b: tt.tensordot(a, b, axes=2),
        lambda a, b: np.tensordot(a, b, axes=2),
        (rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4, 5))),
    ),
    (tt.linalg.cross, np.cross, (rng.standard_normal((5, 3)), rng.standard_normal((5, 3)))),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_values_gradients_and_the_compiled_function(case):
    function, reference, args = CASES[case]
    np.testing.assert_allclose(function(*args).numpy(), reference(*args), rtol=1e-10, atol=1e-12)
    compiled = tt.function(lambda *xs: function(*xs))
    np.testing.assert_allclose(compiled(*args).numpy(), reference(*args), rtol=1e-10, atol=1e-12)
    check_first_order(function, args)
    check_second_order(function, args)


def test_tensorflows_values_where_the_formula_has_none():
    zero, ones = tt.constant([0.0, 0.0, 2.0]), tt.constant([0.0, 1.0, 0.0])
    np.testing.assert_array_equal(tt.math.divide_no_nan(zero, ones).numpy(), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(tt.math.divide_no_nan([1.0, 3.0], [0.0, 2.0]).numpy(), [0.0, 1.5])
    np.testing.assert_array_equal(tt.math.xlogy([0.0, 0.0], [0.0, 5.0]).numpy(), [0.0, 0.0])
    a = tt.constant([1.0, 3.0])
    with tt.GradientTape() as tape:
        tape.watch(a)
        quotient = tt.math.divide_no_nan(a, [0.0, 2.0])
    np.testing.assert_array_equal(tape.gradient(quotient, a).numpy(), [0.0, 0.5])  # no NaN
    assert np.isnan(tt.math.acosh(0.5).numpy())  # outside the domain, as TensorFlow


def test_boolean_functions():
    a = np.array([[True, False], [True, True]])
    b = np.array([[False, False], [True, False]])
    np.testing.assert_array_equal(tt.math.logical_xor(a, b).numpy(), np.logical_xor(a, b))
    np.testing.assert_array_equal(tt.reduce_any(a, axis=1).numpy(), a.any(1))
    np.testing.assert_array_equal(tt.reduce_all(a, axis=0).numpy(), a.all(0))
    assert tt.reduce_all(b).numpy() == False and tt.reduce_any(b).numpy() == True
    values = np.array([1.0, np.nan, np.inf, -np.inf, 0.0])
    np.testing.assert_array_equal(tt.math.is_nan(values).numpy(), np.isnan(values))
    np.testing.assert_array_equal(tt.math.is_inf(values).numpy(), np.isinf(values))
    counted = tt.math.count_nonzero([[0, 1, 2], [0, 0, 3]], axis=1)
    assert counted.dtype == tt.int64 and counted.numpy().tolist() == [2, 1]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="axis 1 of a .size 4. and axis 0 of b .size 3."):
        tt.tensordot(np.ones((2, 4)), np.ones((3, 2)), axes=1)
    with pytest.raises(ValueError, match="vectors of 3"):
        tt.linalg.cross(np.ones(2), np.ones(2))


def test_tensor_shape_is_tensorflows_and_a_tuple():
    shape = tt.constant(np.ones((7, 10))).get_shape()
    assert isinstance(shape, tt.TensorShape) and shape == (7, 10)
    assert repr(shape) == "TensorShape([7, 10])" and shape.as_list() == [7, 10]
    assert shape.rank == 2 and shape.num_elements() == 70 and shape.is_fully_defined()
    assert repr(shape[1:]) == "TensorShape([10])" and shape[0] == 7
    unknown = tt.TensorShape([None, 3])
    assert str(unknown) == "(None, 3)" and unknown.num_elements() is None
    assert unknown.concatenate([4]) == (None, 3, 4)

    seen = []

    @tt.function(input_signature=[tt.TensorSpec([None, 3], tt.float32)])
    def f(v):
        seen.append(v.get_shape().as_list())
        return v

    f(np.ones((2, 3), np.float32))
    assert seen == [[None, 3]]


# --- the hyperbolic functions over the whole range of each float type --------------------

HYPERBOLIC = {  # name: (numpy's function, its derivative, its second derivative), in float64
    "sinh": (np.sinh, np.cosh, np.sinh),
    "cosh": (np.cosh, np.sinh, np.cosh),
    "asinh": (np.arcsinh, lambda v: 1 / np.hypot(v, 1), lambda v: -v / np.hypot(v, 1) ** 3),
    "acosh": (
        np.arccosh,
        lambda v: 1 / (np.sqrt(v - 1) * np.sqrt(v + 1)),
        lambda v: -v / (np.sqrt(v - 1) * np.sqrt(v + 1)) ** 3,
    ),
}


def _whole_range(dtype):
    """Magnitudes from 1e-30 to the largest finite, log-spaced, and just above 1 (acosh's
    edge), of both signs; with ±0, ±inf and NaN."""
    largest = np.finfo(dtype).max
    magnitudes = np.geomspace(1e-30, largest / 2, 600).astype(dtype)
    near_one = 1 + magnitudes[magnitudes < 1]
    magnitudes = np.concatenate([magnitudes, near_one, [89.0, 89.4, 710.0, largest]])
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan]
    return np.concatenate([magnitudes, -magnitudes, specials]).astype(dtype)


def _ulps(got, want):
    """|got - want| in units in the last place of `want`, where `want` is finite and not 0."""
    ordinary = np.isfinite(want) & (want != 0)
    return np.abs(got[ordinary] - want[ordinary]) / np.spacing(np.abs(want[ordinary]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", HYPERBOLIC)
def test_hyperbolic_values_are_numpys_to_a_few_ulp_everywhere(name, dtype):
    function, reference = getattr(tt.math, name), HYPERBOLIC[name][0]
    points = _whole_range(dtype)
    with np.errstate(all="ignore"):
        want = reference(points)
    runs = {
        "eager": function,
        "c": tt.function(lambda v: function(v), backend="c"),
        "interpreter": tt.function(lambda v: function(v), backend="interpreter"),
    }
    exceptional = ~(np.isfinite(want) & (want != 0))  # 0, ±inf and NaN, signs included
    for run, call in runs.items():
        with np.errstate(all="ignore"):
            got = np.asarray(call(tt.constant(points)))
        assert got.dtype == dtype
        assert _ulps(got, want).max() <= 4, run
        np.testing.assert_array_equal(got[exceptional], want[exceptional], err_msg=run)
        assert (np.signbit(got) == np.signbit(want))[exceptional & ~np.isnan(want)].all(), run


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", HYPERBOLIC)
def test_hyperbolic_derivatives_are_the_analytic_ones_to_second_order(name, dtype):
    function, reference, first, second = getattr(tt.math, name), *HYPERBOLIC[name]
    points = tt.constant(_whole_range(dtype))
    with np.errstate(all="ignore"):
        value = np.asarray(function(points))
        with tt.GradientTape() as outer:
            outer.watch(points)
            with tt.GradientTape() as inner:
                inner.watch(points)
                y = function(points)
            gradient = inner.gradient(y, points)
        curvature = np.asarray(outer.gradient(gradient, points))
        with tt.autodiff.ForwardAccumulator(points, tt.ones_like(points)) as accumulator:
            tangent = np.asarray(accumulator.jvp(function(points)))
        exact = np.asarray(points, np.float64)
        want, want_second = first(exact), second(exact)
    gradient = np.asarray(gradient)
    finite = np.isfinite(value)
    assert not np.isnan(gradient[finite]).any() and not np.isnan(tangent[finite]).any()
    # compared in float64 where the derivative is within the float type's range: the first
    # to a few ulp; the second to a few ulp of the larger of it and the first (sinh'' = sinh
    # near 0 is a difference of terms near 1)
    eps, largest = np.finfo(dtype).eps, np.finfo(dtype).max
    usable = np.isfinite(want) & (np.abs(want) < largest)
    np.testing.assert_allclose(gradient[usable], want[usable], rtol=8 * eps, atol=0)
    np.testing.assert_allclose(tangent[usable], want[usable], rtol=8 * eps, atol=0)
    usable &= np.isfinite(want_second) & (np.abs(want_second) < largest)
    error = np.abs(curvature[usable] - want_second[usable])
    assert (error <= 8 * eps * np.maximum(np.abs(want_second), np.abs(want))[usable]).all()


@pytest.mark.parametrize(
    "name, points",
    [
        ("sinh", [-710.0, -30.0, -3.0, -1e-9, 0.0, 1e-9, 0.5, 19.9, 20.1, 710.0]),
        ("cosh", [-710.0, -30.0, -3.0, -1e-9, 0.0, 1e-9, 0.5, 19.9, 20.1, 710.0]),
        ("asinh", [-1e155, -3e8, -3.0, -1e-9, 0.0, 1e-9, 0.5, 40.0, 3e8, 1e155]),
        ("acosh", [1.001, 1.5, 3.0, 40.0, 3e8, 1e155]),
    ],
)
def test_hyperbolic_second_derivatives_against_finite_differences(name, points):
    for point in points:  # one at a time: a sum would hide the small ones behind the large
        check_first_order(getattr(tt.math, name), (np.array([point]),))
        check_second_order(getattr(tt.math, name), (np.array([point]),))


def test_tensorflows_hyperbolic_values():
    def f32(values):
        return tt.constant(np.float32(values))

    np.testing.assert_array_equal(tt.math.asinh(f32([0.0, 1e-8])).numpy(), np.float32([0, 1e-8]))
    np.testing.assert_array_equal(tt.math.sinh(f32(1e-8)).numpy(), np.float32(1e-8))
    np.testing.assert_allclose(tt.math.sinh(f32(89.0)).numpy(), 2.2448064e38, rtol=1e-6)
    np.testing.assert_allclose(tt.math.cosh(f32(89.0)).numpy(), 2.2448064e38, rtol=1e-6)
    np.testing.assert_allclose(tt.math.acosh(f32(1e20)).numpy(), 46.744, rtol=1e-4)
    zero = f32(0.0)
    with tt.GradientTape() as tape:
        tape.watch(zero)
        value = tt.math.asinh(zero)
    assert tape.gradient(value, zero).numpy() == 1.0  # not sign(x)'s derivative, 0
    with tt.autodiff.ForwardAccumulator(zero, f32(1.0)) as accumulator:
        value = tt.math.asinh(zero)
    assert accumulator.jvp(value).numpy() == 1.0
