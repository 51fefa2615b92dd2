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
