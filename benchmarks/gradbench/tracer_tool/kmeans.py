"""GradBench's `kmeans`: the k-means cost and the Newton direction J H^-1.

The cost sums, over the points, the squared distance to the nearest centroid. Its Hessian
with respect to the centroids is diagonal, so H·1 is that diagonal: one forward-mode pass
(tangent all ones) over the reverse-mode gradient gives J and diag(H) together, and the
direction is their elementwise quotient. Every message brings new sizes; the functions
are traced for each (`reduce_retracing=False`: tracer's unknown dimensions are shared by
all arguments on the same axis, and points and centroids differ on axis 0).
"""

import numpy as np

import tracer as tt
from benchmarks.gradbench.tracer_tool.runs import repeated


def objective(points, centroids):
    """sum_i min_j |c_j - p_i|^2, with the distances expanded as |p|^2 + |c|^2 - 2 p·c so
    that the n×k distance matrix comes from one matrix product."""
    p2 = tt.reduce_sum(points * points, axis=1)[:, None]
    c2 = tt.reduce_sum(centroids * centroids, axis=1)[None, :]
    distances = p2 + c2 - 2.0 * tt.matmul(points, centroids, transpose_b=True)
    return tt.reduce_sum(tt.reduce_min(distances, axis=1))


@tt.function(reduce_retracing=False)
def _cost(points, centroids):
    return objective(points, centroids)


@tt.function(reduce_retracing=False)
def _dir(points, centroids):
    with tt.autodiff.ForwardAccumulator(centroids, tt.ones_like(centroids)) as acc:
        with tt.GradientTape() as tape:
            tape.watch(centroids)
            f = objective(points, centroids)
        jacobian = tape.gradient(f, centroids)
    hessian_diagonal = acc.jvp(jacobian)
    return jacobian / hessian_diagonal


def _arguments(input):
    points = tt.constant(np.asarray(input["points"], dtype=np.float64))
    centroids = tt.constant(np.asarray(input["centroids"], dtype=np.float64))
    return points, centroids


def cost(input):
    points, centroids = _arguments(input)
    result, timings = repeated(input, lambda: _cost(points, centroids))
    return float(result), timings


def dir(input):
    points, centroids = _arguments(input)
    result, timings = repeated(input, lambda: _dir(points, centroids))
    return result.numpy().tolist(), timings
