"""tracer's GradBench `lse` tool: LogSumExp against numpy, including inputs whose plain
exponentials overflow, its gradient against central differences, and the eval's output
format across sizes served by one compiled module."""

import numpy as np

from benchmarks.gradbench.tracer_tool import lse


def _lse(x):
    a = np.max(x)
    return a + np.log(np.sum(np.exp(x - a)))


def test_primal_matches_numpy_and_is_stable_where_exp_overflows():
    rng = np.random.default_rng(0)
    for x in (rng.normal(size=7), rng.normal(size=1), np.array([1000.0, 999.0, -5.0])):
        value, timings = lse.primal({"x": x.tolist()})
        assert isinstance(value, float) and len(timings) == 1
        np.testing.assert_allclose(value, _lse(x), rtol=1e-14)


def test_gradient_matches_central_differences():
    x = np.random.default_rng(1).normal(size=6)
    gradient, _ = lse.gradient({"x": x.tolist(), "min_runs": 2})
    assert isinstance(gradient, list) and len(gradient) == 6
    h = 1e-6
    expected = [(_lse(x + h * e) - _lse(x - h * e)) / (2 * h) for e in np.eye(6)]
    np.testing.assert_allclose(gradient, expected, rtol=1e-7, atol=1e-9)


def test_one_compiled_module_serves_every_size():
    for n in (3, 5, 11):
        x = np.linspace(-1.0, 2.0, n)
        gradient, _ = lse.gradient({"x": x.tolist()})
        np.testing.assert_allclose(gradient, np.exp(x - _lse(x)), rtol=1e-13)
    assert lse._gradient.experimental_get_tracing_count() == 1
