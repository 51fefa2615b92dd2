"""B22: what users wait on first. A chain of N layers x = tanh(x @ W_i) on (64, 64) float32,
its loss sum(x) and the gradients of all W_i, compiled; for N = 10, 100, 500, 2000: the
first call in a fresh process with an empty cache, the first call in a second process
(tracer's cache warm; also with backend="tiered"), the same with the program edited above
the function and run from another folder (the stored plan's lines renamed), the first call where the cache holds another function's module (the
compiler's and the link's records are there: a changed function on a machine that has
compiled before), and later calls. tracer as tt.function does by default (the C module
built before the first result) and with backend="tiered" (the interpreter at once, C when
built in the background: the time to C is reported too), against jax.jit and tf.function.
Each measurement is a new process running the program from a file, as a user's script runs
(benchmarks/programs.py: tf.function's autograph reads the function's source there, and not
under `python -c`); at small N the median of REPEATS; each result is checked against numpy.

    python3 benchmarks/compile_time.py [--quick]      # prints JSON last
"""

import json
import os
import sys
import tempfile

import numpy as np
from programs import environment, run_program

SIZES = (10, 100, 500, 2000)
QUICK_SIZES = (2,)
LATER_CALLS = 20
# new processes per measurement, the median's taken: a first call of 0.1 s varies by 20%
# from one process to the next on a shared machine
REPEATS = {10: 5, 100: 3}
NEW_MODULE = "tracer new module (cache of an earlier build)"
MOVED = "tracer warm, code moved (lines added, another folder)"
TIERED_WARM = "tracer-tiered warm (second process)"

SETUP = """
import sys, time, json
t0 = time.perf_counter()
{imports}
import numpy as np
t1 = time.perf_counter()
N = {n}
rng = np.random.default_rng(0)
ws0 = [(rng.standard_normal((64, 64)) / 8).astype(np.float32) for _ in range(N)]
x0 = rng.standard_normal((64, 64)).astype(np.float32)
{build}
t2 = time.perf_counter()
loss, grads = run()
t3 = time.perf_counter()
{after_first}
times = []
for _ in range({later}):
    s = time.perf_counter(); run(); times.append(time.perf_counter() - s)
print(json.dumps({{"import_seconds": t1 - t0, "first_seconds": t3 - t2,
    "later_seconds": sorted(times)[len(times) // 2], "loss": float(loss),
    "grad_sums": [float(np.sum(np.asarray(g))) for g in grads], **extra}}))
"""

PROGRAMS = {
    "tracer": (
        "import tracer as tt",
        """
ws = [tt.Variable(w) for w in ws0]
x = tt.constant(x0)
@tt.function(backend=BACKEND)
def step(x):
    with tt.GradientTape() as tape:
        y = x
        for w in ws:
            y = tt.tanh(y @ w)
        loss = tt.reduce_sum(y)
    return loss, tape.gradient(loss, ws)
run = lambda: step(x)
""",
    ),
    "jax-jit": (
        "import jax, jax.numpy as jnp",
        """
ws = [jnp.asarray(w) for w in ws0]
x = jnp.asarray(x0)
def objective(ws, x):
    y = x
    for w in ws:
        y = jnp.tanh(y @ w)
    return jnp.sum(y)
step = jax.jit(jax.value_and_grad(objective))
run = lambda: jax.block_until_ready(step(ws, x))
""",
    ),
    "tf-function": (
        "import tensorflow as tf",
        """
ws = [tf.Variable(w) for w in ws0]
x = tf.constant(x0)
@tf.function
def step(x):
    with tf.GradientTape() as tape:
        y = x
        for w in ws:
            y = tf.tanh(y @ w)
        loss = tf.reduce_sum(y)
    return loss, tape.gradient(loss, ws)
run = lambda: [t.numpy() if hasattr(t, "numpy") else [g.numpy() for g in t] for t in step(x)]
""",
    ),
}


def program(system, n, backend="auto"):
    imports, build = PROGRAMS[system]
    after_first = "extra = {}"
    if system == "tracer" and backend == "auto":  # how the module was linked, if it was built
        after_first = (
            "meta = getattr(step.get_concrete_function(x)._executable, 'meta', {})\n"
            "extra = {'link': meta.get('link')}"
        )
    if backend == "tiered":  # later calls are timed once the module is in use
        after_first = (
            "concrete = step.get_concrete_function(x)\n"
            "concrete._executable.wait()\n"
            "extra = {'c_ready_seconds': time.perf_counter() - t2, 'backend': concrete.backend}\n"
            "run()"
        )
    build = build.replace("BACKEND", repr(backend))
    return SETUP.format(
        imports=imports, n=n, build=build, after_first=after_first, later=LATER_CALLS
    )


def reference(n):
    """The loss and the sums of the gradients, in float64 numpy."""
    rng = np.random.default_rng(0)
    ws = [
        (rng.standard_normal((64, 64)) / 8).astype(np.float32).astype(np.float64) for _ in range(n)
    ]
    ys = [rng.standard_normal((64, 64)).astype(np.float32).astype(np.float64)]
    for w in ws:
        ys.append(np.tanh(ys[-1] @ w))
    g, sums = np.ones_like(ys[-1]), []
    for k in reversed(range(n)):
        gz = g * (1 - ys[k + 1] ** 2)
        sums.append(np.sum(ys[k].T @ gz))
        g = gz @ ws[k].T
    return float(np.sum(ys[-1])), sums[::-1]


def checked(result, n):
    if result["status"] != "ok":
        return result
    loss, sums = reference(n)
    error = max(
        abs(result["loss"] - loss) / (abs(loss) + 1),
        max(abs(a - b) / (abs(b) + 1) for a, b in zip(result.pop("grad_sums"), sums)),
    )
    if error > 1e-3:
        return {"status": "wrong", "detail": f"differs from numpy by {error:.2g}"}
    return {**result, "error": error}


def new_module(n, base):
    """The first call of the chain where the cache holds another function's module: what a
    changed function costs on a machine that has compiled before."""
    with tempfile.TemporaryDirectory(prefix="tracer-b22-") as cache:
        env = dict(base, TRACER_CACHE_DIR=cache)
        run_program(program("tracer", 2 if n != 2 else 3), env)
        return run_program(program("tracer", n), env)


def median(results):
    """The result of the median first call, or the first that is not ok."""
    bad = [r for r in results if r["status"] != "ok"]
    if bad:
        return bad[0]
    return sorted(results, key=lambda r: r["first_seconds"])[len(results) // 2]


def main():
    quick = "--quick" in sys.argv
    base = environment(TF_CPP_MIN_LOG_LEVEL="3")
    report = {}
    for n in QUICK_SIZES if quick else SIZES:
        row = {}
        for _ in range(1 if quick else REPEATS.get(n, 1)):
            for backend in ("auto", "tiered"):
                name = "tracer" if backend == "auto" else "tracer-tiered"
                with tempfile.TemporaryDirectory(prefix="tracer-b22-") as work:
                    env = dict(base, TRACER_CACHE_DIR=os.path.join(work, "cache"))
                    row.setdefault(name, []).append(
                        checked(run_program(program("tracer", n, backend), env, folder=work), n)
                    )
                    if backend == "auto":  # the same program from the same file
                        row.setdefault("tracer warm (second process)", []).append(
                            checked(run_program(program("tracer", n), env, folder=work), n)
                        )
                        moved = "# an edit above the function\n" * 3 + program("tracer", n)
                        row.setdefault(MOVED, []).append(checked(run_program(moved, env), n))
                    else:
                        again = program("tracer", n, backend)
                        row.setdefault(TIERED_WARM, []).append(
                            checked(run_program(again, env, folder=work), n)
                        )
                if backend == "auto":
                    row.setdefault(NEW_MODULE, []).append(checked(new_module(n, base), n))
            for system in ("jax-jit", "tf-function"):
                row.setdefault(system, []).append(checked(run_program(program(system, n), base), n))
        report[str(n)] = {system: median(results) for system, results in row.items()}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
