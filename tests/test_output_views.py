"""Outputs that are views of all of a computed value's bytes (codegen/lower.py,
`_outputs_viewing`): the value is computed into the output's buffer, with no copy kernel,
and every result is still the caller's own array with numpy's values."""

import re

import numpy as np

import tracer as tt

rng = np.random.default_rng(3)


def _kernels(function, *args):
    source = function.get_concrete_function(*args).c_source()
    return re.findall(r"^static (?:TR_NOINLINE )?\w+ (k\d+_\w+)\(", source, re.M)


def test_a_gradient_reshaped_to_its_variable_needs_no_copy_kernel():
    w = tt.Variable(rng.standard_normal((3, 4, 5)))
    x = tt.constant(rng.standard_normal((6, 20)))

    @tt.function
    def gradient(x):
        with tt.GradientTape() as tape:
            y = tt.reduce_sum(tt.tanh(tt.matmul(x, tt.reshape(w, (20, 3)))))
        return tape.gradient(y, w)

    got = gradient(x).numpy()
    v, flat = x.numpy(), w.numpy().reshape(20, 3)
    want = (v.T @ (1 - np.tanh(v @ flat) ** 2)).reshape(3, 4, 5)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert not [k for k in _kernels(gradient, x) if "reshape" in k]


def test_a_value_and_its_reshape_both_returned_are_two_arrays():
    x = tt.constant(rng.standard_normal((4, 6)))
    f = tt.function(lambda x: (tt.reduce_sum(x * x, axis=1), tt.reshape(x * 2.0, (2, 12))))
    total, doubled = f(x)
    np.testing.assert_allclose(total.numpy(), (x.numpy() ** 2).sum(1), rtol=1e-15)
    np.testing.assert_array_equal(doubled.numpy(), (2 * x.numpy()).reshape(2, 12))

    both = tt.function(lambda x: (x * 3.0, tt.reshape(x * 3.0, (24,))))
    a, b = (r.numpy() for r in both(x))
    np.testing.assert_array_equal(a, 3 * x.numpy())
    np.testing.assert_array_equal(b, 3 * x.numpy().ravel())
    a[0, 0] = 100.0  # the two results share no memory
    assert b[0] == 3 * x.numpy()[0, 0]


def test_two_reshapes_of_one_value_and_a_later_reader_of_it():
    x = tt.constant(rng.standard_normal((3, 8)))

    @tt.function
    def f(x):
        y = x * x - 1.0
        return tt.reshape(y, (24,)), tt.reshape(y, (6, 4)), tt.reduce_sum(y)

    first, second, total = (r.numpy() for r in f(x))
    want = x.numpy() * x.numpy() - 1.0
    np.testing.assert_array_equal(first, want.ravel())
    np.testing.assert_array_equal(second, want.reshape(6, 4))
    np.testing.assert_allclose(total, want.sum(), rtol=1e-14)


def test_each_call_returns_new_arrays():
    x = tt.constant(rng.standard_normal((2, 5)))
    f = tt.function(lambda x: tt.reshape(x * 2.0 + 0.5, (10,)))
    first = f(x).numpy()
    kept = first.copy()
    second = f(tt.constant(x.numpy() + 1.0)).numpy()
    np.testing.assert_array_equal(first, kept)
    np.testing.assert_array_equal(second, ((x.numpy() + 1.0) * 2.0 + 0.5).ravel())


def test_a_variable_assigned_a_reshape_keeps_its_update():
    v = tt.Variable(np.zeros((2, 6)))
    x = tt.constant(rng.standard_normal((3, 4)))

    @tt.function
    def update(x):
        v.assign(tt.reshape(x * 2.0, (2, 6)))
        return tt.reshape(v.read_value() + 1.0, (12,))

    got = update(x).numpy()
    np.testing.assert_array_equal(v.numpy(), (2 * x.numpy()).reshape(2, 6))
    np.testing.assert_array_equal(got, (2 * x.numpy()).ravel() + 1.0)
