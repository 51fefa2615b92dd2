"""Nested lists and tuples holding tensors pack into one tensor, as TensorFlow's auto-packing
does, and gradients flow through them: values against numpy, gradients against analytic
results and finite differences in float64 to second order, eager and compiled (interpreter
and C), TensorFlow's dtype rules, and the errors."""

import numpy as np
import pytest

import tracer as tt
from tests.gradcheck import check_first_order, check_second_order
from tracer import nest


def test_the_issue_example_gets_its_gradient():
    x = tt.Variable(0.5, dtype=tt.float64)
    with tt.GradientTape() as tape:
        c = tt.cos(x)
        R = tt.convert_to_tensor([[1.0, 0.0], [0.0, c]], dtype=tt.float64)
        y = tt.reduce_sum(R)
    np.testing.assert_allclose(R.numpy(), [[1.0, 0.0], [0.0, np.cos(0.5)]])
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), -np.sin(0.5), rtol=1e-15)


def rotation(theta):
    c, s = tt.cos(theta), tt.sin(theta)
    return tt.convert_to_tensor([[c, -s], [s, c]])


def test_rotation_matrix_derivatives_against_analytic_values():
    theta = tt.constant(0.3, dtype=tt.float64)
    v = np.array([2.0, -1.0])
    with tt.GradientTape() as outer:
        outer.watch(theta)
        with tt.GradientTape() as inner:
            inner.watch(theta)
            y = tt.reduce_sum(tt.matmul(rotation(theta), tt.constant(v[:, None])))
        dy = inner.gradient(y, theta)
    d2y = outer.gradient(dy, theta)
    c, s = np.cos(0.3), np.sin(0.3)
    # y = (c v0 - s v1) + (s v0 + c v1) = c (v0 + v1) + s (v0 - v1)
    total, difference = v[0] + v[1], v[0] - v[1]
    np.testing.assert_allclose(y.numpy(), c * total + s * difference, rtol=1e-14)
    np.testing.assert_allclose(dy.numpy(), -s * total + c * difference, rtol=1e-14)
    np.testing.assert_allclose(d2y.numpy(), -c * total - s * difference, rtol=1e-14)


NESTINGS = {
    # regular: one stack of the leaves and a reshape
    "matrix of scalars": lambda a, b: [[a, 1.0], [2.0, a * b]],
    "tuple of tuples": lambda a, b: ((a, b, 3.0),),
    "rows of vectors": lambda a, b: [tt.stack([a, b]), tt.stack([b, a])],
    "three levels": lambda a, b: [[[a, b], [b, 0.5]], [[1.0, a], [tt.exp(a), b]]],
    # irregular: a tensor row beside a list row, stacked level by level
    "tensor beside a list": lambda a, b: [tt.stack([a, b]), [b * b, 4.0]],
    "numpy leaves": lambda a, b: [np.float64(2.0), a, np.array(3.0)],
}


@pytest.mark.parametrize("name", sorted(NESTINGS))
def test_packed_values_match_numpy(name):
    a, b = tt.constant(0.7, tt.float64), tt.constant(-1.3, tt.float64)
    nested = NESTINGS[name](a, b)
    packed = tt.convert_to_tensor(nested)
    expected = np.array(_numpy_of(nested))
    assert packed.dtype == tt.float64
    np.testing.assert_array_equal(packed.numpy(), expected)


def _numpy_of(nested):
    if isinstance(nested, (list, tuple)):
        return [_numpy_of(v) for v in nested]
    return np.asarray(nested)


@pytest.mark.parametrize("name", sorted(NESTINGS))
def test_gradients_through_packing_match_finite_differences(name):
    def f(a, b):
        return tt.sin(tt.convert_to_tensor(NESTINGS[name](a, b))) * 1.5

    args = [np.float64(0.7), np.float64(-1.3)]
    check_first_order(f, args)
    check_second_order(f, args)


def test_variables_and_op_arguments_pack():
    w = tt.Variable(2.0, dtype=tt.float64)
    with tt.GradientTape() as tape:
        # a list as an op argument packs, and gives the other operand its dtype
        y = tt.reduce_sum(tt.matmul([[w, 1.0]], [[3.0], [w]])) + tt.reduce_sum([w, 2.0] * w)
    assert y.dtype == tt.float64
    np.testing.assert_allclose(y.numpy(), 2 * 3 + 2 + (4 + 4))  # 3w + w + w^2 + 2w
    np.testing.assert_allclose(tape.gradient(y, w).numpy(), 3 + 1 + 2 * 2 + 2)


@pytest.mark.parametrize("backend", ["interpreter", "c"])
def test_packing_inside_a_compiled_function(backend):
    def value_and_grads(theta, v):
        with tt.GradientTape() as outer:
            outer.watch(theta)
            with tt.GradientTape() as inner:
                inner.watch(theta)
                y = tt.reduce_sum(tt.square(tt.matmul(rotation(theta), v)))
                y = y + tt.reduce_sum(tt.convert_to_tensor([theta, [2.0, theta * theta][1]]))
            dy = inner.gradient(y, theta)
        return y, dy, outer.gradient(dy, theta)

    compiled = tt.function(value_and_grads, backend=backend)
    v = tt.constant([[2.0], [-1.0]], dtype=tt.float64)
    for theta in (0.3, -1.1):
        theta = tt.constant(theta, dtype=tt.float64)
        for got, want in zip(compiled(theta, v), value_and_grads(theta, v)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-13)
    # |R v|^2 = |v|^2 does not depend on theta: y = 5 + theta + theta^2
    y, dy, d2y = compiled(tt.constant(0.5, dtype=tt.float64), v)
    np.testing.assert_allclose([y.numpy(), dy.numpy(), d2y.numpy()], [5.75, 2.0, 2.0])


def test_dtype_rules_follow_tensorflow():
    x64, x32, i32 = tt.constant(1.0, tt.float64), tt.constant(1.0), tt.constant(1)
    # the first tensor's dtype, wherever it is; Python numbers follow it
    assert tt.convert_to_tensor([2, x64]).dtype == tt.float64
    assert tt.convert_to_tensor([1, x32]).dtype == tt.float32
    assert tt.convert_to_tensor([[3], [i32]]).dtype == tt.int32
    assert tt.convert_to_tensor([tt.constant(True), False]).dtype == tt.bool
    big = tt.convert_to_tensor([tt.constant(1, tt.int64), 2**40])
    np.testing.assert_array_equal(big.numpy(), [1, 2**40])
    # a requested dtype that differs is reached with a cast: same values, gradient kept
    with tt.GradientTape() as tape:
        tape.watch(x32)
        packed = tt.convert_to_tensor([x32, 0.1], dtype=tt.float64)
        total = tt.reduce_sum(packed)
    assert packed.dtype == tt.float64
    np.testing.assert_array_equal(packed.numpy(), [1.0, 0.1])
    assert tape.gradient(total, x32).numpy() == 1.0


@pytest.mark.parametrize(
    "nested, error, message",
    [
        (lambda x: [x, tt.constant(1.0, tt.float64)], TypeError, "dtypes float32 and float64"),
        (lambda x: [tt.cast(x, tt.int32), 2.5], TypeError, "2.5 to a tensor of dtype int32"),
        (lambda x: [tt.cast(x, tt.int32), 2**40], OverflowError, "does not fit in a tensor"),
        (lambda x: [x, None], TypeError, "cannot pack None"),
        (lambda x: [x, "a"], TypeError, "cannot pack 'a'"),
        (lambda x: [[x, 1.0], [2.0]], ValueError, "element 1 (a list) has shape (1,)"),
        (lambda x: [tt.ones(2) * x, tt.ones(3)], ValueError, "leaf 1 (a float32 tensor)"),
    ],
)
def test_errors_name_what_was_wrong(nested, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        tt.convert_to_tensor(nested(tt.constant(1.0)))


def test_constant_stays_a_constant_and_explain_says_so():
    x = tt.Variable(0.5, dtype=tt.float64)
    with tt.GradientTape() as tape:
        k = tt.constant([[1.0, tt.cos(x)]], dtype=tt.float64)
        y = tt.reduce_sum(k)
    np.testing.assert_allclose(k.numpy(), [[1.0, np.cos(0.5)]])
    assert tape.gradient(y, x) is None
    reason = tape.explain(y, x)
    assert "tt.constant made a constant" in reason and "test_packing.py" in reason


def test_constant_of_a_symbolic_tensor_is_a_clear_error():
    @tt.function
    def f(a):
        return tt.constant([a, 1.0])

    with pytest.raises(TypeError, match="tt.constant cannot hold .* symbolic"):
        f(tt.constant(1.0))


def test_packing_fewer_values_than_the_structure_has_leaves_is_a_value_error():
    with pytest.raises(ValueError, match="more leaves than the 1 values"):
        nest.pack_sequence_as([1, (2, {"a": 3})], [0])
