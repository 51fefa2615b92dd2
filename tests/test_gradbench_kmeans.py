"""tracer's GradBench `kmeans` tool: the cost against numpy's nearest-centroid distances,
and the Newton direction J / diag(H) against central differences of the cost (first
and second), in the eval's output format."""

import numpy as np

from benchmarks.gradbench.tracer_tool import kmeans


def _cost(points, centroids):
    distances = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
    return distances.min(axis=1).sum()


def _problem(seed=0, n=12, k=3, d=2):
    points = np.random.default_rng(seed).random((n, d))
    return points, points[-k:].copy()  # each centroid is its own point's nearest


def test_cost_matches_numpy():
    points, centroids = _problem()
    value, timings = kmeans.cost({"points": points.tolist(), "centroids": centroids.tolist()})
    assert isinstance(value, float) and len(timings) == 1
    np.testing.assert_allclose(value, _cost(points, centroids), rtol=1e-12)


def test_dir_is_gradient_over_hessian_diagonal_by_finite_differences():
    points, centroids = _problem(1, n=10, k=3, d=2)
    direction, _ = kmeans.dir(
        {"points": points.tolist(), "centroids": centroids.tolist(), "min_runs": 2}
    )
    assert np.shape(direction) == (3, 2) and isinstance(direction[0], list)
    h = 1e-4  # small enough that no point changes its nearest centroid
    f0 = _cost(points, centroids)
    expected = np.zeros_like(centroids)
    for index in np.ndindex(centroids.shape):
        step = np.zeros_like(centroids)
        step[index] = h
        plus, minus = _cost(points, centroids + step), _cost(points, centroids - step)
        first = (plus - minus) / (2 * h)
        second = (plus - 2 * f0 + minus) / (h * h)
        expected[index] = first / second
    np.testing.assert_allclose(direction, expected, rtol=1e-5, atol=1e-8)
