"""B26: a compiled function called with a new shape at every call, as GradBench's lse eval
calls it: logsumexp of a vector and its gradient for 20 lengths in a row (1,000 to 39,000
elements), each length once, in a fresh process with an empty cache. Reported per system:
the total time of the 20 calls, how many traces (compiles) they made, and the time of the
last ten calls (after any generalization). tracer as tt.function does by default (automatic
dynamic shapes: the second length makes the length symbolic, later ones reuse that
module) and with backend="tiered", against jax.jit (a compile per shape) and tf.function
(reduce_retracing off, its default: a retrace per shape for the first, then a generalized
one). Every result is checked against numpy in float64.

Then the same for a function of a square matrix (`report["square"]`): the sum of its inverse
and of its square, and the gradient, at 10 sizes in a row (8 x 8 to 80 x 80, float64): a
trace that leaves the sides unknown must take them for one size (tracer: automatic dynamic
shapes trace the second size with the sides one symbol, d1 as d0).

    python3 benchmarks/retrace.py [--quick]      # prints JSON last
"""

import json
import sys
import tempfile

import numpy as np
from programs import environment, run_program

SIZES = [1000 + 2000 * k for k in range(20)]
QUICK_SIZES = SIZES[:4]
SQUARE_SIZES = [8 + 8 * k for k in range(10)]
QUICK_SQUARE_SIZES = SQUARE_SIZES[:4]
VECTORS = "[rng.standard_normal(n).astype(np.float32) for n in {sizes}]"
SQUARES = "[rng.standard_normal((n, n)) + n * np.eye(n) for n in {sizes}]"

SETUP = """
import json, time
import numpy as np
{imports}
{build}
rng = np.random.default_rng(0)
inputs = {inputs}
values, gradients, times = [], [], []
for x in inputs:
    start = time.perf_counter()
    value, gradient = run(x)
    times.append(time.perf_counter() - start)
    values.append(float(value)); gradients.append(float(np.sum(np.asarray(gradient) ** 2)))
print(json.dumps({{"total_seconds": sum(times), "last_ten_seconds": sum(times[-10:]),
    "traces": traces(), "values": values, "gradient_squares": gradients}}))
"""

PROGRAMS = {
    "tracer": (
        "import tracer as tt",
        """
@tt.function(backend=BACKEND)
def step(x):
    with tt.GradientTape() as tape:
        tape.watch(x)
        value = tt.reduce_logsumexp(x)
    return value, tape.gradient(value, x)
run = lambda x: step(tt.constant(x))
traces = step.experimental_get_tracing_count
""",
    ),
    "jax-jit": (
        "import jax, jax.numpy as jnp",
        """
step = jax.jit(jax.value_and_grad(jax.scipy.special.logsumexp))
run = lambda x: jax.block_until_ready(step(jnp.asarray(x)))
traces = step._cache_size
""",
    ),
    "tf-function": (
        "import tensorflow as tf",
        """
@tf.function
def step(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        value = tf.reduce_logsumexp(x)
    return value, tape.gradient(value, x)
run = lambda x: [t.numpy() for t in step(tf.constant(x))]
traces = step.experimental_get_tracing_count
""",
    ),
}


SQUARE_PROGRAMS = {
    "tracer": (
        "import tracer as tt",
        """
@tt.function(backend=BACKEND)
def step(a):
    with tt.GradientTape() as tape:
        tape.watch(a)
        value = tt.reduce_sum(tt.linalg.inv(a) + tt.matmul(a, a))
    return value, tape.gradient(value, a)
run = lambda a: step(tt.constant(a))
traces = step.experimental_get_tracing_count
""",
    ),
    "jax-jit": (
        "import jax, jax.numpy as jnp\njax.config.update('jax_enable_x64', True)",
        """
step = jax.jit(jax.value_and_grad(lambda a: jnp.sum(jnp.linalg.inv(a) + a @ a)))
run = lambda a: jax.block_until_ready(step(jnp.asarray(a)))
traces = step._cache_size
""",
    ),
    "tf-function": (
        "import tensorflow as tf",
        """
@tf.function
def step(a):
    with tf.GradientTape() as tape:
        tape.watch(a)
        value = tf.reduce_sum(tf.linalg.inv(a) + tf.matmul(a, a))
    return value, tape.gradient(value, a)
run = lambda a: [t.numpy() for t in step(tf.constant(a))]
traces = step.experimental_get_tracing_count
""",
    ),
}


def program(system, sizes, backend="auto", programs=PROGRAMS, inputs=VECTORS):
    imports, build = programs[system]
    build = build.replace("BACKEND", repr(backend))
    return SETUP.format(imports=imports, build=build, inputs=inputs.format(sizes=sizes))


def checked(result, sizes):
    """The result, "wrong" where a value or a gradient differs from numpy's (float64)."""
    if result["status"] != "ok":
        return result
    rng = np.random.default_rng(0)
    for n, value, squares in zip(sizes, result.pop("values"), result.pop("gradient_squares")):
        x = rng.standard_normal(n).astype(np.float32).astype(np.float64)
        top = x.max()
        want = top + np.log(np.sum(np.exp(x - top)))
        softmax = np.exp(x - want)
        if abs(value - want) > 1e-4 * abs(want) or abs(squares - np.sum(softmax**2)) > 1e-4:
            return {"status": "wrong", "detail": f"length {n} differs from numpy"}
    return result


def checked_square(result, sizes):
    """The result of the square program, "wrong" where a value or a gradient differs from
    numpy's: sum(inv(a) + a @ a), whose gradient is -inv(a)' 1 inv(a)' + 1 a' + a' 1."""
    if result["status"] != "ok":
        return result
    rng = np.random.default_rng(0)
    for n, value, squares in zip(sizes, result.pop("values"), result.pop("gradient_squares")):
        a = rng.standard_normal((n, n)) + n * np.eye(n)
        inverse, ones = np.linalg.inv(a), np.ones((n, n))
        want = np.sum(inverse + a @ a)
        gradient = -inverse.T @ ones @ inverse.T + ones @ a.T + a.T @ ones
        if abs(value - want) > 1e-9 * abs(want) or not np.isclose(
            squares, np.sum(gradient**2), rtol=1e-9
        ):
            return {"status": "wrong", "detail": f"size {n} differs from numpy"}
    return result


def main():
    quick = "--quick" in sys.argv
    sizes = QUICK_SIZES if quick else SIZES
    squares = QUICK_SQUARE_SIZES if quick else SQUARE_SIZES
    base = environment(TF_CPP_MIN_LOG_LEVEL="3")
    report = {"sizes": sizes, "square": {"sizes": squares}}
    for name, system, backend in [
        ("tracer", "tracer", "auto"),
        ("tracer-tiered", "tracer", "tiered"),
        ("jax-jit", "jax-jit", "auto"),
        ("tf-function", "tf-function", "auto"),
    ]:
        with tempfile.TemporaryDirectory(prefix="tracer-b26-") as cache:
            env = dict(base, TRACER_CACHE_DIR=cache)
            report[name] = checked(run_program(program(system, sizes, backend), env), sizes)
        if name == "tracer-tiered":
            continue
        with tempfile.TemporaryDirectory(prefix="tracer-b26-") as cache:
            env = dict(base, TRACER_CACHE_DIR=cache)
            text = program(system, squares, backend, SQUARE_PROGRAMS, SQUARES)
            report["square"][name] = checked_square(run_program(text, env), squares)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
