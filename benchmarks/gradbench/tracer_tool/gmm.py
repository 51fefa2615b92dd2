"""GradBench's `gmm`: the log posterior of a Gaussian mixture with a Wishart prior on its
precision matrices, and its gradient with respect to alpha, mu, q and l.

Written with whole-array ops over the k components and n points: each precision factor
Q_k = diag(exp(q_k)) + L_k, where the strictly lower triangle L_k is filled from l_k column
by column (one gather); beta[k, i] = alpha_k + sum(q_k) - |Q_k (x_i - mu_k)|^2 / 2; the
likelihood is a log-sum-exp over the components, computed from its primitives. The
gradient is one tape over that objective. Every message brings new sizes; the functions
are traced for each (`reduce_retracing=False`: tracer's unknown dimensions are shared by
all arguments on the same axis, and the arguments' sizes differ on an axis).
"""

import functools
import math

import numpy as np

import tracer as tt
from benchmarks.gradbench.tracer_tool.runs import repeated

INDEPENDENT = ("alpha", "mu", "q", "l")


@functools.cache
def _lower_triangle_index(d):
    """Where each entry of a d×d matrix comes from in [0, l_1, l_2, ...]: the strictly lower
    triangle, filled column by column, from l; everything else from the leading 0."""
    index = np.zeros((d, d), dtype=np.int32)
    rows, columns = np.tril_indices(d, -1)
    order = np.lexsort((rows, columns))  # column by column, down each column
    index[rows[order], columns[order]] = np.arange(1, len(order) + 1)
    return index.reshape(-1)


def _log_multigamma(a, p):
    """log Γ_p(a), the multivariate gamma function."""
    return p * (p - 1) / 4 * math.log(math.pi) + sum(
        math.lgamma(a + (1 - j) / 2) for j in range(1, p + 1)
    )


def _logsumexp(v, axis):
    """log(sum(exp(v))) along `axis`, shifted by the maximum so that no exponential overflows."""
    top = tt.reduce_max(v, axis=axis)
    return top + tt.math.log(tt.reduce_sum(tt.exp(v - tt.expand_dims(top, axis)), axis=axis))


def log_posterior(x, alpha, mu, q, lower_entries, m, gamma):
    """The log posterior F_X(theta, phi); `lower_entries` is the eval's l, `m` and `gamma`
    are Python numbers."""
    n, d = x.shape
    k = alpha.shape[0]
    padded = tt.concat([tt.zeros([k, 1], dtype=tt.float64), lower_entries], axis=1)
    lower = tt.reshape(tt.gather(padded, _lower_triangle_index(d), axis=1), [k, d, d])
    diagonal = tt.exp(q)
    centred = x[None, :, :] - mu[:, None, :]  # [k, n, d]
    # Q_k (x_i - mu_k) for every k and i: the diagonal part and the lower triangle's.
    scaled = diagonal[:, None, :] * centred + tt.matmul(centred, lower, transpose_b=True)
    sum_q = tt.reduce_sum(q, axis=1)
    beta = (alpha + sum_q)[:, None] - 0.5 * tt.reduce_sum(scaled * scaled, axis=2)  # [k, n]
    likelihood = tt.reduce_sum(_logsumexp(beta, axis=0)) - n * _logsumexp(alpha, axis=0)
    wishart_n = d + m + 1
    constant = -n * d / 2 * math.log(2 * math.pi) + k * (
        wishart_n * d * math.log(gamma / math.sqrt(2)) - _log_multigamma(wishart_n / 2, d)
    )
    frobenius = tt.reduce_sum(diagonal * diagonal) + tt.reduce_sum(lower_entries * lower_entries)
    prior = -0.5 * gamma * gamma * frobenius + m * tt.reduce_sum(sum_q)
    return constant + likelihood + prior


@tt.function(reduce_retracing=False)
def _objective(x, independent, m, gamma):
    return log_posterior(x, *(independent[name] for name in INDEPENDENT), m, gamma)


@tt.function(reduce_retracing=False)
def _jacobian(x, independent, m, gamma):
    with tt.GradientTape() as tape:
        tape.watch(independent)
        f = log_posterior(x, *(independent[name] for name in INDEPENDENT), m, gamma)
    return tape.gradient(f, independent)


def _arguments(input):
    """(x, the independent variables as a dict of tensors, m, gamma)."""
    d = input["d"]

    def matrix(name, columns):
        # np.reshape keeps an empty l (d = 1) two-dimensional.
        return tt.constant(np.asarray(input[name], dtype=np.float64).reshape(-1, columns))

    independent = {
        "alpha": tt.constant(np.asarray(input["alpha"], dtype=np.float64)),
        "mu": matrix("mu", d),
        "q": matrix("q", d),
        "l": matrix("l", d * (d - 1) // 2),
    }
    return matrix("x", d), independent, int(input["m"]), float(input["gamma"])


def objective(input):
    arguments = _arguments(input)
    result, timings = repeated(input, lambda: _objective(*arguments))
    return float(result), timings


def jacobian(input):
    arguments = _arguments(input)
    result, timings = repeated(input, lambda: _jacobian(*arguments))
    return {name: result[name].numpy().tolist() for name in INDEPENDENT}, timings
