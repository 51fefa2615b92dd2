"""tt.custom_gradient: TensorFlow's documented examples, variables, nested tapes (second
order against finite differences in float64), jacobians, and eager = interpreter = C."""

import numpy as np
import pytest

import tracer as tt

BACKENDS = ["interpreter", "c"]


@tt.custom_gradient
def log1pexp(x):
    e = tt.exp(x)

    def grad(upstream):
        return upstream * (1 - 1 / (1 + e))

    return tt.math.log(1 + e), grad


@tt.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tt.clip_by_norm(dy, 0.5)

    return y, backward


def value_and_gradient(f):
    def run(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return y, tape.gradient(y, x)

    return run


def test_log1pexp_has_the_stable_gradient_of_tensorflows_docs():
    """At x = 100, the gradient is 1.0 (the composed ops would give NaN)."""
    for run in [value_and_gradient(log1pexp)] + [
        tt.function(value_and_gradient(log1pexp), backend=b) for b in BACKENDS
    ]:
        _, dy_dx = run(tt.constant(100.0))
        assert dy_dx.numpy() == 1.0


def test_gradient_clipping_as_in_the_advanced_autodiff_guide():
    v = tt.Variable(2.0)
    with tt.GradientTape() as t:
        output = clip_gradients(v * v)
    assert t.gradient(output, v).numpy() == 2.0  # the upstream 1 clipped to 0.5, times 2v

    @tt.function
    def step():
        with tt.GradientTape() as t:
            output = clip_gradients(v * v)
        return t.gradient(output, v)

    assert step().numpy() == 2.0


def test_no_gradient_flows_into_the_ops_the_function_ran():
    @tt.custom_gradient
    def doubled_gradient(x):
        return tt.sin(x), lambda upstream: 2.0 * upstream

    x = tt.constant([0.3, 1.2], tt.float64)
    for run in [value_and_gradient(doubled_gradient)] + [
        tt.function(value_and_gradient(doubled_gradient), backend=b) for b in BACKENDS
    ]:
        y, g = run(x)
        np.testing.assert_allclose(y.numpy(), np.sin(x.numpy()))
        np.testing.assert_array_equal(g.numpy(), [2.0, 2.0])


def test_second_order_through_a_differentiable_gradient_function():
    """d2/dx2 log(1 + e^x) = sigmoid(x) (1 - sigmoid(x)), through grad's own ops."""

    def second(x):
        with tt.GradientTape() as outer:
            outer.watch(x)
            with tt.GradientTape() as inner:
                inner.watch(x)
                y = log1pexp(x)
            g = inner.gradient(y, x)
        return g, outer.gradient(g, x)

    x = tt.constant([-1.5, 0.2, 2.0], tt.float64)
    s = 1 / (1 + np.exp(-x.numpy()))
    for run in [second] + [tt.function(second, backend=b) for b in BACKENDS]:
        g, h = run(x)
        np.testing.assert_allclose(g.numpy(), s, rtol=1e-14)
        np.testing.assert_allclose(h.numpy(), s * (1 - s), rtol=1e-13)


def test_several_arguments_and_results():
    @tt.custom_gradient
    def product_and_sum(a, b):
        def grad(d_product, d_sum):
            return d_product * b + d_sum, d_product * a + d_sum

        return [a * b, a + b], grad

    a, b = tt.constant([1.0, 2.0], tt.float64), tt.constant([3.0, -1.0], tt.float64)

    def run(a, b):
        with tt.GradientTape() as tape:
            tape.watch([a, b])
            p, s = product_and_sum(a, b)
            y = tt.reduce_sum(p * p) + tt.reduce_sum(3.0 * s)
        return tape.gradient(y, [a, b])

    want = [2 * a.numpy() * b.numpy() ** 2 + 3, 2 * b.numpy() * a.numpy() ** 2 + 3]
    for f in [run] + [tt.function(run, backend=b) for b in BACKENDS]:
        for got, expected in zip(f(a, b), want):
            np.testing.assert_allclose(got.numpy(), expected, rtol=1e-14)


def test_a_function_reading_variables_returns_their_gradients():
    w = tt.Variable([2.0, -1.0], dtype=tt.float64)

    @tt.custom_gradient
    def scaled(x):
        def grad(upstream, variables=None):
            (v,) = variables
            return upstream * 10.0, [upstream * x * 100.0]

        return x * w, grad

    x = tt.constant([1.0, 3.0], tt.float64)

    def run(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(scaled(x))
        return tape.gradient(y, [x, w])

    for f in [run] + [tt.function(run, backend=b) for b in BACKENDS]:
        gx, gw = f(x)
        np.testing.assert_array_equal(gx.numpy(), [10.0, 10.0])
        np.testing.assert_array_equal(gw.numpy(), [100.0, 300.0])


def test_a_function_reading_variables_needs_a_variables_argument():
    w = tt.Variable(2.0)

    @tt.custom_gradient
    def scaled(x):
        return x * w, lambda upstream: upstream

    with tt.GradientTape() as tape:
        x = tt.constant(1.0)
        tape.watch(x)
        with pytest.raises(TypeError, match="keyword argument 'variables'"):
            scaled(x)


def test_a_wrong_number_of_gradients_is_named():
    @tt.custom_gradient
    def f(a, b):
        return a * b, lambda upstream: upstream

    a, b = tt.constant(1.0), tt.constant(2.0)
    with tt.GradientTape() as tape:
        tape.watch([a, b])
        y = f(a, b)
    with pytest.raises(ValueError, match=r"custom_gradient\(f\).*1 gradients for 2 arguments"):
        tape.gradient(y, [a, b])


@pytest.mark.parametrize("use_pfor", [True, False])
def test_jacobians_use_the_custom_gradient(use_pfor):
    x = tt.constant([-1.0, 0.5, 3.0], tt.float64)

    def jacobian(x):
        with tt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = log1pexp(x) * x
        return tape.jacobian(y, x, experimental_use_pfor=use_pfor)

    s = 1 / (1 + np.exp(-x.numpy()))
    want = np.diag(s * x.numpy() + np.log1p(np.exp(x.numpy())))
    for run in [jacobian] + [tt.function(jacobian, backend=b) for b in BACKENDS]:
        np.testing.assert_allclose(run(x).numpy(), want, rtol=1e-13)


def test_without_a_tape_the_function_costs_nothing_extra():
    y = log1pexp(tt.constant(0.0))
    assert y.numpy() == np.float32(np.log(2.0))


def test_the_gradient_caches_keep_few_custom_gradient_functions_alive():
    """Each call makes a new gradient function, which no later tape finds again: the caches
    keep the last few (a persistent tape may differentiate twice), not one per call with
    what each captured."""
    import gc
    import weakref

    captured = []

    @tt.custom_gradient
    def double(x):
        activation = np.ones(1000)  # what a user's gradient function keeps

        def grad(dy):
            return dy * 2.0 * activation[0]

        captured.append(weakref.ref(grad))
        return x * 2.0, grad

    x = tt.constant(np.linspace(0.0, 1.0, 5))
    for _ in range(30):
        with tt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tt.reduce_sum(double(x) * x)
        first, second = tape.gradient(y, x), tape.gradient(y, x)  # both eagerly
        np.testing.assert_allclose(first.numpy(), 4.0 * x.numpy(), rtol=1e-12)
        np.testing.assert_array_equal(second.numpy(), first.numpy())
        del tape, y
    gc.collect()
    assert sum(ref() is not None for ref in captured) <= 4


def test_a_print_inside_a_compiled_gradient_function_is_refused_clearly():
    @tt.custom_gradient
    def clipped(x):
        def grad(g):
            tt.print("upstream", g)
            return tt.clip_by_value(g, -1.0, 1.0)

        return tt.identity(x), grad

    def f(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = clipped(x) * 3.0
        return tape.gradient(y, x)

    assert float(f(tt.constant(2.0))) == 1.0  # eagerly the gradient function prints
    with pytest.raises(NotImplementedError, match="tt.print inside the gradient function of"):
        tt.function(f)(tt.constant(2.0))


@pytest.mark.parametrize("backend", ["eager", "c", "interpreter"])
def test_forward_mode_sees_through_a_custom_gradient_as_tensorflow_does(backend):
    """A ForwardAccumulator differentiates the ops that computed a custom gradient's results
    (TensorFlow's 2x for x * x), eager and compiled alike; the user's gradient function is
    reverse mode's (5x here), which a compiled jvp took, transposed."""

    @tt.custom_gradient
    def square(x):
        return x * x, lambda dy: dy * 5.0 * x

    def tangent_of_square(x):
        with tt.autodiff.ForwardAccumulator(x, tt.ones_like(x)) as accumulator:
            y = square(x)
        return accumulator.jvp(y)

    def gradient_of_square(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(square(x))
        return tape.gradient(y, x)

    run = (lambda f: f) if backend == "eager" else (lambda f: tt.function(f, backend=backend))
    x = tt.constant([1.0, 2.0])
    np.testing.assert_array_equal(run(tangent_of_square)(x).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(run(gradient_of_square)(x).numpy(), [5.0, 10.0])


def test_an_argument_the_gradient_function_gives_none_has_a_none_gradient():
    """TensorFlow 2.21 gives None for an argument whose gradient the gradient function
    returns as None (eagerly and in a tf.function); tracer gave zeros."""

    @tt.custom_gradient
    def product(a, b):
        return a * b, lambda dy: (dy * b, None)

    def gradients(x, y):
        with tt.GradientTape() as tape:
            tape.watch([x, y])
            z = product(x, y)
        return tape.gradient(z, [x, y])

    x, y = tt.constant([1.0, 2.0]), tt.constant([3.0, 4.0])
    for run in (gradients, tt.function(gradients)):
        dx, dy = run(x, y)
        np.testing.assert_array_equal(dx.numpy(), [3.0, 4.0])
        assert dy is None


def test_a_tape_around_a_function_gives_none_where_no_gradient_reaches_an_input():
    """As TensorFlow's tape around a tf.function: None for an input the function does not
    differentiate in (floor's has no gradient, an unused one none), values for the rest."""
    x, y = tt.constant([1.3, -2.7]), tt.constant([2.0, 3.0])
    floor = tt.function(lambda x: tt.floor(x))
    mixed = tt.function(lambda x, y: tt.floor(x) + y * x)
    unused = tt.function(lambda x, y: x * 2.0)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        floored, both, doubled = floor(x), mixed(x, y), unused(x, y)
    assert tape.gradient(floored, x) is None
    dx, dy = tape.gradient(both, [x, y])
    np.testing.assert_array_equal(dx.numpy(), [2.0, 3.0])
    np.testing.assert_allclose(dy.numpy(), [1.3, -2.7])
    dx, dy = tape.gradient(doubled, [x, y])
    np.testing.assert_array_equal(dx.numpy(), [2.0, 2.0])
    assert dy is None
