"""B27: the first result of a real program. GradBench's Gaussian mixture at its eval's
middle size (d 20, k 10, n 1,000, float64): the log posterior and its gradient with respect
to alpha, mu, q and l, compiled. Per system, in a fresh process with an empty cache: the
first call of the objective, the first call of the gradient (each traced and compiled
then), and the gradient's steady time (the median of 20 later calls). Then the program
edited (a penalty on the means, 0.5 * sum(tanh(mu)^2), taken off the log posterior) and run
again in a fresh process on the same cache: its first calls, as a user who changes a line
and runs the script again waits for them (jax.jit with its defaults: no compilation cache
kept between processes; tf.function keeps none). tracer runs the
log posterior of its GradBench tool (benchmarks/gradbench/tracer_tool/gmm.py) under
tt.function, as that tool does; jax.jit and tf.function run the same formula, written with
their ops. jax.jit's and tf.function's objective and gradient must agree with tracer's
(whose log posterior tests/test_gradbench_gmm.py checks against numpy) to 1e-8.

    python3 benchmarks/gmm_first_call.py [--quick]      # prints JSON last
"""

import json
import os
import sys
import tempfile

from programs import environment, run_program

SIZES = {"d": 20, "k": 10, "n": 1000}
QUICK_SIZES = {"d": 3, "k": 2, "n": 20}

SETUP = """
import json, math, os, time
import numpy as np
{imports}
D, K, N = {d}, {k}, {n}
rng = np.random.default_rng(0)
x0 = rng.standard_normal((N, D))
alpha0, mu0 = rng.standard_normal(K), rng.standard_normal((K, D))
q0 = rng.standard_normal((K, D)) * 0.1
l0 = rng.standard_normal((K, D * (D - 1) // 2)) * 0.1
index = np.zeros((D, D), dtype=np.int32)
rows, columns = np.tril_indices(D, -1)
order = np.lexsort((rows, columns))
index[rows[order], columns[order]] = np.arange(1, len(order) + 1)
INDEX = index.reshape(-1)
M, GAMMA = 0, 1.0
WEIGHT = float(os.environ.get("GMM_PENALTY", "0"))  # the edit, where it is not 0
WISHART = D + M + 1
CONSTANT = -N * D / 2 * math.log(2 * math.pi) + K * (
    WISHART * D * math.log(GAMMA / math.sqrt(2))
    - (D * (D - 1) / 4 * math.log(math.pi)
       + sum(math.lgamma(WISHART / 2 + (1 - j) / 2) for j in range(1, D + 1))))
{build}
t0 = time.perf_counter(); value = objective(); t1 = time.perf_counter()
gradient = gradient_of(); t2 = time.perf_counter()
times = []
for _ in range(20):
    s = time.perf_counter(); gradient_of(); times.append(time.perf_counter() - s)
print(json.dumps({{"first_objective_seconds": t1 - t0, "first_gradient_seconds": t2 - t1,
    "steady_gradient_seconds": sorted(times)[10], "value": float(np.asarray(value)),
    "gradient_norm": float(sum(np.sum(np.asarray(g) ** 2) for g in gradient)) ** 0.5}}))
"""

PROGRAMS = {
    "tracer": (
        "import tracer as tt\nfrom benchmarks.gradbench.tracer_tool.gmm import log_posterior",
        """
x = tt.constant(x0)
params = [tt.constant(p) for p in (alpha0, mu0, q0, l0)]
def penalized(x, alpha, mu, q, l):
    f = log_posterior(x, alpha, mu, q, l, M, GAMMA)
    return f - WEIGHT * tt.reduce_sum(tt.tanh(mu) ** 2) if WEIGHT else f
@tt.function
def value_of(x, alpha, mu, q, l):
    return penalized(x, alpha, mu, q, l)
@tt.function
def grad_of(x, alpha, mu, q, l):
    with tt.GradientTape() as tape:
        tape.watch([alpha, mu, q, l])
        f = penalized(x, alpha, mu, q, l)
    return tape.gradient(f, [alpha, mu, q, l])
objective = lambda: value_of(x, *params).numpy()
gradient_of = lambda: [g.numpy() for g in grad_of(x, *params)]
""",
    ),
    "jax-jit": (
        "import jax, jax.numpy as jnp\njax.config.update('jax_enable_x64', True)",
        """
def log_posterior(x, alpha, mu, q, l):
    padded = jnp.concatenate([jnp.zeros((K, 1)), l], axis=1)
    lower = padded[:, INDEX].reshape(K, D, D)
    diagonal = jnp.exp(q)
    centred = x[None, :, :] - mu[:, None, :]
    scaled = diagonal[:, None, :] * centred + centred @ jnp.swapaxes(lower, 1, 2)
    sum_q = jnp.sum(q, axis=1)
    beta = (alpha + sum_q)[:, None] - 0.5 * jnp.sum(scaled * scaled, axis=2)
    likelihood = jnp.sum(jax.scipy.special.logsumexp(beta, axis=0)) - N * jax.scipy.special.logsumexp(alpha)
    frobenius = jnp.sum(diagonal * diagonal) + jnp.sum(l * l)
    f = CONSTANT + likelihood - 0.5 * GAMMA * GAMMA * frobenius + M * jnp.sum(sum_q)
    return f - WEIGHT * jnp.sum(jnp.tanh(mu) ** 2) if WEIGHT else f
x = jnp.asarray(x0)
params = [jnp.asarray(p) for p in (alpha0, mu0, q0, l0)]
value_jit = jax.jit(log_posterior)
grad_jit = jax.jit(jax.grad(log_posterior, argnums=(1, 2, 3, 4)))
objective = lambda: jax.block_until_ready(value_jit(x, *params))
gradient_of = lambda: jax.block_until_ready(grad_jit(x, *params))
""",
    ),
    "tf-function": (
        "import tensorflow as tf",
        """
def log_posterior(x, alpha, mu, q, l):
    padded = tf.concat([tf.zeros((K, 1), tf.float64), l], axis=1)
    lower = tf.reshape(tf.gather(padded, INDEX, axis=1), (K, D, D))
    diagonal = tf.exp(q)
    centred = x[None, :, :] - mu[:, None, :]
    scaled = diagonal[:, None, :] * centred + tf.matmul(centred, lower, transpose_b=True)
    sum_q = tf.reduce_sum(q, axis=1)
    beta = (alpha + sum_q)[:, None] - 0.5 * tf.reduce_sum(scaled * scaled, axis=2)
    likelihood = tf.reduce_sum(tf.reduce_logsumexp(beta, axis=0)) - N * tf.reduce_logsumexp(alpha)
    frobenius = tf.reduce_sum(diagonal * diagonal) + tf.reduce_sum(l * l)
    f = CONSTANT + likelihood - 0.5 * GAMMA * GAMMA * frobenius + M * tf.reduce_sum(sum_q)
    return f - WEIGHT * tf.reduce_sum(tf.tanh(mu) ** 2) if WEIGHT else f
x = tf.constant(x0)
params = [tf.constant(p) for p in (alpha0, mu0, q0, l0)]
value_of = tf.function(log_posterior)
@tf.function
def grad_of(x, alpha, mu, q, l):
    with tf.GradientTape() as tape:
        tape.watch([alpha, mu, q, l])
        f = log_posterior(x, alpha, mu, q, l)
    return tape.gradient(f, [alpha, mu, q, l])
objective = lambda: value_of(x, *params).numpy()
gradient_of = lambda: [g.numpy() for g in grad_of(x, *params)]
""",
    ),
}


def program(system, sizes):
    imports, build = PROGRAMS[system]
    return SETUP.format(imports=imports, build=build, **sizes)


def main():
    sizes = QUICK_SIZES if "--quick" in sys.argv else SIZES
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    base = environment(TF_CPP_MIN_LOG_LEVEL="3")
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [root, base.get("PYTHONPATH")]))
    report = {"sizes": sizes}
    for system in PROGRAMS:
        with tempfile.TemporaryDirectory(prefix="tracer-b27-") as cache:
            env = dict(base, TRACER_CACHE_DIR=cache)
            report[system] = run_program(program(system, sizes), env)
            if report[system]["status"] == "ok":
                edited = dict(env, GMM_PENALTY=str(PENALTY))
                report[system]["edited"] = run_program(program(system, sizes), edited)
    _check(report, lambda r: r)
    _check(report, lambda r: r.get("edited", {"status": "missing"}))
    print(json.dumps(report))


PENALTY = 0.5


def _check(report, part):
    """Mark a peer's `part` of its result wrong where its value or gradient is not
    tracer's, to 1e-8."""
    reference = part(report["tracer"])
    for system in ("jax-jit", "tf-function"):
        result = part(report[system])
        if result.get("status") == "ok" and reference.get("status") == "ok":
            for field in ("value", "gradient_norm"):
                if abs(result[field] - reference[field]) > 1e-8 * (1 + abs(reference[field])):
                    result.clear()
                    result.update(status="wrong", detail=f"{field} differs from tracer's")


if __name__ == "__main__":
    main()
