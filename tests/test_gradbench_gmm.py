"""tracer's GradBench `gmm` tool: the log posterior against a direct numpy evaluation of
the definition (mixture of Gaussian densities, Wishart densities of the precision
matrices), its gradient against central differences, and the eval's output format."""

import math

import numpy as np

from benchmarks.gradbench.tracer_tool import gmm


def _factor(q, lower, d):
    """Q = diag(exp(q)) with `lower` filling the strictly lower triangle column by column."""
    matrix, used = np.diag(np.exp(q)), 0
    for column in range(d):
        for row in range(column + 1, d):
            matrix[row, column] = lower[used]
            used += 1
    return matrix


def _log_posterior(input):
    d, k, m, gamma = input["d"], input["k"], input["m"], input["gamma"]
    x, alpha = np.array(input["x"]), np.array(input["alpha"])
    phi = np.exp(alpha) / np.exp(alpha).sum()
    precisions = [_factor(input["q"][j], input["l"][j], d) for j in range(k)]
    precisions = [f.T @ f for f in precisions]
    log_likelihood = 0.0
    for xi in x:
        density = 0.0
        for j in range(k):
            r = xi - np.array(input["mu"][j])
            normal = np.exp(-0.5 * r @ precisions[j] @ r)
            density += phi[j] * normal / np.sqrt((2 * np.pi) ** d / np.linalg.det(precisions[j]))
        log_likelihood += np.log(density)
    n = d + m + 1
    log_multigamma = d * (d - 1) / 4 * math.log(math.pi) + sum(
        math.lgamma(n / 2 + (1 - j) / 2) for j in range(1, d + 1)
    )
    log_prior = 0.0
    for p in precisions:  # V = I / gamma^2
        log_prior += (
            (n - d - 1) / 2 * np.log(np.linalg.det(p))
            - gamma * gamma * np.trace(p) / 2
            - n * d / 2 * np.log(2)
            + n * d * np.log(gamma)
            - log_multigamma
        )
    return log_likelihood + log_prior


def _input(seed=0, d=3, k=2, n=5, m=1, gamma=1.5):
    rng = np.random.default_rng(seed)
    return {
        "d": d,
        "k": k,
        "n": n,
        "x": rng.normal(size=(n, d)).tolist(),
        "m": m,
        "gamma": gamma,
        "alpha": rng.normal(size=k).tolist(),
        "mu": rng.random((k, d)).tolist(),
        "q": (0.3 * rng.normal(size=(k, d))).tolist(),
        "l": (0.5 * rng.normal(size=(k, d * (d - 1) // 2))).tolist(),
    }


def test_objective_matches_the_definition():
    input = _input()
    value, timings = gmm.objective(input)
    assert isinstance(value, float) and len(timings) == 1
    np.testing.assert_allclose(value, _log_posterior(input), rtol=1e-10)


def test_jacobian_matches_central_differences():
    input = _input(2) | {"min_runs": 2}
    jacobian, _ = gmm.jacobian(input)
    assert set(jacobian) == {"alpha", "mu", "q", "l"}
    h = 1e-6
    for name in ("alpha", "mu", "q", "l"):
        value = np.array(input[name])
        assert np.shape(jacobian[name]) == value.shape
        expected = np.zeros_like(value)
        for index in np.ndindex(value.shape):
            step = np.zeros_like(value)
            step[index] = h
            plus = _log_posterior(input | {name: (value + step).tolist()})
            minus = _log_posterior(input | {name: (value - step).tolist()})
            expected[index] = (plus - minus) / (2 * h)
        np.testing.assert_allclose(jacobian[name], expected, rtol=1e-6, atol=1e-7)
