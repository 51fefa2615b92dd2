"""Forward mode over the whole catalogue: every op's JVP rule against central differences
in float64 and against reverse mode (<u, J v> = <J^T u, v>), forward over reverse against
reverse over reverse, eager = interpreter = C; and ForwardAccumulator as TensorFlow
documents it."""

import numpy as np
import pytest

import tracer as tt
from tests.test_gradients import ALL_CASES

BACKENDS = ["interpreter", "c"]


def _case(name, seed):
    function, args = ALL_CASES[name]
    rng = np.random.default_rng(seed)
    xs = [tt.constant(a, dtype=np.asarray(a).dtype) for a in args]
    vs = [tt.constant(rng.standard_normal(np.shape(a)), dtype=np.asarray(a).dtype) for a in args]
    return function, xs, vs, rng


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_jvp_matches_finite_differences_and_reverse_mode(name):
    function, xs, vs, rng = _case(name, 0)
    y, t = tt.jvp(function, xs, vs)
    y, t = tt.math.real(y) if y.dtype.is_complex else y, t
    eps = 1e-6
    if xs[0].dtype == tt.float64:
        plus = function(*[x + eps * v for x, v in zip(xs, vs)])
        minus = function(*[x - eps * v for x, v in zip(xs, vs)])
        numeric = (np.asarray(plus) - np.asarray(minus)) / (2 * eps)
        np.testing.assert_allclose(np.asarray(t), numeric, rtol=1e-6, atol=1e-8)
    u = tt.constant(rng.standard_normal(y.shape), dtype=t.dtype)
    with tt.GradientTape() as tape:
        tape.watch(xs)
        out = function(*xs)
    grads = tape.gradient(out, xs, output_gradients=u)
    reverse = sum(
        float(np.sum(np.asarray(g) * np.asarray(v))) for g, v in zip(grads, vs) if g is not None
    )
    forward = float(np.sum(np.asarray(t) * np.asarray(u)))
    np.testing.assert_allclose(forward, reverse, rtol=1e-5 if xs[0].dtype == tt.float32 else 1e-10)


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_compiled_jvps_equal_eager_ones(name):
    function, xs, vs, _ = _case(name, 1)
    _, want = tt.jvp(function, xs, vs)
    for backend in BACKENDS:
        compiled = tt.function(
            lambda *a: tt.jvp(function, a[: len(xs)], a[len(xs) :])[1], backend=backend
        )
        got = compiled(*xs, *vs)
        np.testing.assert_allclose(
            np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-12, err_msg=backend
        )


def _forward_over_reverse(function, xs, vs, u):
    with tt.autodiff.ForwardAccumulator(xs, vs) as accumulator:
        with tt.GradientTape() as tape:
            tape.watch(xs)
            y = tt.reduce_sum(function(*xs) * u)
        grads = tape.gradient(y, xs, unconnected_gradients="zero")
    return accumulator.jvp(grads, unconnected_gradients="zero")


def _reverse_over_reverse(function, xs, vs, u):
    with tt.GradientTape() as outer:
        outer.watch(xs)
        with tt.GradientTape() as inner:
            inner.watch(xs)
            y = tt.reduce_sum(function(*xs) * u)
        grads = inner.gradient(y, xs, unconnected_gradients="zero")
        along = tt.add_n([tt.reduce_sum(g * v) for g, v in zip(grads, vs)])
    return outer.gradient(along, xs, unconnected_gradients="zero")


SECOND_ORDER = sorted(n for n in ALL_CASES if np.asarray(ALL_CASES[n][1][0]).dtype == np.float64)


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_forward_over_reverse_equals_reverse_over_reverse(name):
    """Hessian-vector products both ways (the Hessian of <f, u> is symmetric)."""
    function, xs, vs, rng = _case(name, 2)
    y = function(*xs)
    u = tt.constant(rng.standard_normal(y.shape), dtype=y.dtype)
    forward = _forward_over_reverse(function, xs, vs, u)
    reverse = _reverse_over_reverse(function, xs, vs, u)
    for a, b in zip(forward, reverse):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-11)


# --- TensorFlow's documented behaviour -------------------------------------------------


def test_forward_accumulator_as_in_tensorflows_docs():
    v = tt.Variable([1.0, 2.0])
    with tt.autodiff.ForwardAccumulator(v, tt.constant([1.0, 3.0])) as acc:
        y = tt.reduce_sum(v * v * v)
    assert acc.jvp(y).numpy() == 1 * 3 * 1**2 + 3 * 3 * 2**2  # 39


def test_hessian_vector_product_of_the_guide():
    """Forward over reverse, as TensorFlow's advanced autodiff guide computes an HVP."""
    x = tt.constant([1.0, 2.0], tt.float64)
    v = tt.constant([1.0, 0.0], tt.float64)

    def hvp(x, v):
        with tt.autodiff.ForwardAccumulator(x, v) as acc:
            with tt.GradientTape() as grad_tape:
                grad_tape.watch(x)
                y = tt.reduce_sum(x**3) + x[0] * x[1]
            g = grad_tape.gradient(y, x)
        return acc.jvp(g)

    for run in [hvp] + [tt.function(hvp, backend=b) for b in BACKENDS]:
        np.testing.assert_allclose(run(x, v).numpy(), [6.0, 1.0])


def test_unconnected_and_nested_structures():
    x, z = tt.constant(2.0), tt.constant(5.0)
    with tt.autodiff.ForwardAccumulator({"a": x}, {"a": tt.constant(1.0)}) as acc:
        y = [x * x, z * 3.0]
    assert acc.jvp(y)[0].numpy() == 4.0 and acc.jvp(y)[1] is None
    assert acc.jvp(y, unconnected_gradients="zero")[1].numpy() == 0.0


def test_forward_over_forward_gives_second_derivatives():
    x = tt.constant(0.7, tt.float64)
    with tt.autodiff.ForwardAccumulator(x, tt.constant(1.0, tt.float64)) as outer:
        with tt.autodiff.ForwardAccumulator(x, tt.constant(1.0, tt.float64)) as inner:
            y = tt.sin(x) * x
        dy = inner.jvp(y)
    np.testing.assert_allclose(dy.numpy(), np.cos(0.7) * 0.7 + np.sin(0.7))
    np.testing.assert_allclose(outer.jvp(dy).numpy(), -np.sin(0.7) * 0.7 + 2 * np.cos(0.7))


def test_mismatched_tangents_are_refused():
    with pytest.raises(
        ValueError, match="tangent of float32\\[3\\] for a primal of float32\\[2\\]"
    ):
        tt.autodiff.ForwardAccumulator(tt.ones(2), tt.ones(3))


def test_forward_mode_through_compiled_loops_and_custom_gradients():
    def f(x):
        _, s = tt.while_loop(
            lambda i, s: i < 3, lambda i, s: (i + 1, tt.sin(s) * s), (0, x), maximum_iterations=3
        )
        return s

    x = tt.constant([0.3, 0.9], tt.float64)
    v = tt.constant([1.0, -2.0], tt.float64)
    eps = 1e-6
    numeric = (f(x + eps * v).numpy() - f(x - eps * v).numpy()) / (2 * eps)
    for backend in BACKENDS:
        compiled = tt.function(lambda x, v: tt.jvp(f, [x], [v])[1], backend=backend)
        np.testing.assert_allclose(compiled(x, v).numpy(), numeric, rtol=1e-7)


@pytest.mark.parametrize("backend", ["interpreter", "c"])
def test_tangents_reach_loops_and_branches_through_the_values_they_capture(backend):
    """A compiled loop or branch reads x as a capture (an input of its op in a Tensor of its
    own): its tangent is x's, so y0 x^4 has the derivative 4 y0 x^3 (it was 0)."""

    def f(x, y0):
        with tt.autodiff.ForwardAccumulator(x, tt.constant(1.0)) as acc:
            y = y0
            for _ in tt.range(4):
                y = y * x
            z = tt.cond(x > 0.0, lambda: y0 * x * x, lambda: y0)
            w = tt.while_loop(
                lambda i, w: i < 3, lambda i, w: (i + 1, w + x), (0, x), maximum_iterations=5
            )[1]
        return acc.jvp([y, z, w])

    x, y0 = 0.5, 2.0
    want = [4 * y0 * x**3, 2 * y0 * x, 4.0]
    eager = f(tt.constant(x), tt.constant(y0))
    compiled = tt.function(f, backend=backend)(tt.constant(x), tt.constant(y0))
    np.testing.assert_allclose([float(t) for t in eager], want, rtol=1e-6)
    np.testing.assert_allclose([float(t) for t in compiled], want, rtol=1e-6)


@pytest.mark.parametrize("backend", ["interpreter", "c"])
def test_a_read_of_a_watched_variable_gives_its_tangent_to_the_read_alone(backend):
    """After v.assign(y), reading v carries v's tangent; y itself, and a loop that reads y,
    keep y's own (none): as eagerly."""
    v = tt.Variable(1.0)

    def f(x):
        v.assign(1.0)
        with tt.autodiff.ForwardAccumulator(v, tt.constant(1.0)) as accumulator:
            y = x * 3.0
            v.assign(y)
            read = v.read_value() * 1.0
            z = y * 2.0
            w = tt.while_loop(
                lambda i, s: i < 2, lambda i, s: (i + 1, s + y), [0, 0.0], maximum_iterations=2
            )[1]
        zero = tt.UnconnectedGradients.ZERO
        return [accumulator.jvp(t, unconnected_gradients=zero) for t in (read, z, w)]

    x = tt.constant(0.5)
    assert [float(t) for t in f(x)] == [1.0, 0.0, 0.0]
    assert [float(t) for t in tt.function(f, backend=backend)(x)] == [1.0, 0.0, 0.0]
