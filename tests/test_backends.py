"""The numpy interpreter and the generated C agree on every op of the catalogue: values, first
and second derivatives, traced into one compiled function per case.

float64 results agree to 1e-10 and float32 results to 1e-5, relative, and both match eager mode.
"""

import numpy as np
import pytest

import tracer as tt
from tests.test_gradients import ALL_CASES

rng = np.random.default_rng(11)


def derivatives(function, count):
    """A function returning f(xs), d<f, w>/dxs and d<d<f, w>/dxs, v>/dxs, with w, v fixed."""

    def run(*xs):
        with tt.GradientTape(persistent=True) as outer:
            outer.watch(list(xs))
            with tt.GradientTape() as inner:
                inner.watch(list(xs))
                value = function(*xs)
                weight = tt.cast(tt.constant(_fixed(value.shape, 1)), value.dtype)
                loss = tt.reduce_sum(tt.math.real(value * weight)) if value.dtype.is_complex else tt.reduce_sum(value * weight)
            grads = inner.gradient(loss, list(xs), unconnected_gradients="zero")
            along = tt.add_n([tt.reduce_sum(tt.cast(g, tt.float64) * _fixed(g.shape, 2)) for g in grads])
        second = outer.gradient(along, list(xs), unconnected_gradients="zero")
        return [value, *grads, *second]

    return run


def _fixed(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def _compare(results, reference, dtype):
    tolerance = 1e-10 if dtype == np.float64 else 1e-5
    for got, want in zip(results, reference):
        got, want = np.asarray(got), np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * 1e-3)


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_interpreter_and_c_agree_on_values_and_two_orders_of_derivatives(name):
    function, args = ALL_CASES[name]
    inputs = [tt.constant(a, dtype=np.asarray(a).dtype) for a in args]
    run = derivatives(function, len(args))
    eager = run(*inputs)
    compiled = tt.function(run, backend="c")
    interpreted = tt.function(run, backend="interpreter")
    c_results = compiled(*inputs)
    assert compiled.get_concrete_function(*inputs).backend == "c"
    dtype = np.result_type(*[np.asarray(a) for a in args])
    _compare(c_results, interpreted(*inputs), dtype)
    _compare(c_results, eager, dtype)


FLOAT32_CASES = ["add", "mul", "div", "exp", "log", "tanh", "sigmoid", "softplus", "matmul", "reduce_sum",
                 "reduce_max", "softmax", "log_softmax", "sparse_softmax_cross_entropy", "gather", "concat", "tile"]


@pytest.mark.parametrize("name", FLOAT32_CASES)
def test_float32_agrees_to_1e_5(name):
    function, args = ALL_CASES[name]
    inputs = [tt.constant(np.asarray(a, dtype=np.float32)) for a in args]
    run = derivatives(function, len(args))
    c_results = tt.function(run, backend="c")(*inputs)
    _compare(c_results, tt.function(run, backend="interpreter")(*inputs), np.float32)


def test_ops_standing_alone_outside_any_fused_kernel_lower_to_c():
    """The C backend also runs graphs the fusion pass has not seen: each op is its own loop."""
    from codegen.compile import compile_graph
    from runtime.interpreter import evaluate

    def f(x, y):
        return tt.reduce_sum(tt.maximum(x, y) * y - x, axis=1), tt.transpose(x)[1:, ::2]

    x, y = tt.constant(rng.standard_normal((3, 4))), tt.constant(rng.standard_normal((3, 4)))
    unfused = tt.function(f, backend="interpreter").get_concrete_function(x, y).stages["deduplicated"]
    assert not any(n.op == "fused" for n in unfused.nodes)
    compiled = compile_graph(unfused, "unfused")([x.numpy(), y.numpy()])
    for got, want in zip(compiled, evaluate(unfused, [x.numpy(), y.numpy()])):
        np.testing.assert_allclose(got, want, rtol=1e-12)
