"""B23: the jacobian of a loop's final state with respect to its initial state, compiled,
vectorized and row by row, tracer against its peers.

The loop is 100 steps of s = tanh(s * w) + 0.1 * s on 256 float64; the jacobian is 256 x 256.
Each system is written the way its users write it:

    tracer       tt.function(backend="c") of tape.jacobian through tt.while_loop:
                 vectorized (one batched loop, pfor's default) and row by row
                 (experimental_use_pfor=False: a loop over the rows around the loop)
    jax-jit      jax.jit(jax.jacrev(f)), f the steps in jax.lax.fori_loop (vmap of the vjp)
    tf-function  tf.function of tape.jacobian through tf.while_loop: pfor, and
                 experimental_use_pfor=False
    torch-eager  torch.func.jacrev over a Python loop (vmap of the vjp), and
                 torch.autograd.functional.jacobian (vectorize=False: one backward per row)

Each system runs in a process of its own (benchmarks/programs.py) with an empty compile
cache; each form's result is checked against numpy's jacobian (each step is elementwise, so
it is diagonal: the product of the steps' derivatives) element by element, relative to each
element, before it is timed (the median of later calls). A peer that is not installed is
skipped. Every system runs ROUNDS times, round after round, and keeps each form's fastest
round (as benchmarks/run.py does); the JSON keeps every round.

    python3 benchmarks/loop_jacobian.py [--quick]      # prints JSON last
"""

import json
import subprocess
import sys
import tempfile

from programs import environment, run_program

ROUNDS, QUICK_ROUNDS = 3, 1
# the most relative difference of any element from numpy's (100 products of derivatives;
# the entries span 1e-280 to 0.25, so each is compared with itself)
TOLERANCE = 1e-9

PROGRAM = """
import json, time
import numpy as np
QUICK = {quick}
size, steps, calls = (8, 5, 3) if QUICK else (256, 100, 20)
rng = np.random.default_rng(0)
x0 = rng.standard_normal(size) * 0.5
w0 = rng.standard_normal(size)

def reference():
    s, d = x0.copy(), np.ones(size)
    for _ in range(steps):
        t = np.tanh(s * w0)
        d *= w0 * (1 - t * t) + 0.1
        s = t + 0.1 * s
    return np.diag(d)
{system}
def timed(run):
    run()
    times, spent = [], 0.0
    while len(times) < calls and (len(times) < 3 or spent < 10.0):  # slow forms: 10 s
        start = time.perf_counter(); run(); times.append(time.perf_counter() - start)
        spent += times[-1]
    return sorted(times)[len(times) // 2], len(times)

expected = reference()
report = {{}}
for form, run in FORMS.items():
    value = np.asarray(run(), np.float64)
    error = float(np.max(np.abs(value - expected) / (np.abs(expected) + np.finfo(float).tiny)))
    seconds, count = timed(run)
    report[form] = {{"seconds": seconds, "calls": count, "error": error}}
print(json.dumps({{"size": size, "steps": steps, "forms": report}}))
"""

SYSTEMS = {
    "tracer": """
import tracer as tt
x, w = tt.constant(x0), tt.constant(w0)

def jacobian(x, w, use_pfor):
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        step = lambda i, s: (i + 1, tt.tanh(s * w) + 0.1 * s)
        y = tt.while_loop(lambda i, s: i < steps, step, (0, x), maximum_iterations=steps)[1]
    return tape.jacobian(y, x, experimental_use_pfor=use_pfor)

@tt.function(backend="c")
def vectorized(x, w):
    return jacobian(x, w, True)

@tt.function(backend="c")
def row_by_row(x, w):
    return jacobian(x, w, False)

FORMS = {"vectorized": lambda: vectorized(x, w), "row by row": lambda: row_by_row(x, w)}
""",
    "jax-jit": """
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
x, w = jnp.asarray(x0), jnp.asarray(w0)

def final(x, w):
    return jax.lax.fori_loop(0, steps, lambda i, s: jnp.tanh(s * w) + 0.1 * s, x)

jacobian = jax.jit(jax.jacrev(final))
FORMS = {"vectorized": lambda: jacobian(x, w).block_until_ready()}
""",
    "tf-function": """
import tensorflow as tf
x, w = tf.constant(x0), tf.constant(w0)

def jacobian(x, w, use_pfor):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        step = lambda i, s: (i + 1, tf.tanh(s * w) + 0.1 * s)
        y = tf.while_loop(lambda i, s: i < steps, step, (0, x), maximum_iterations=steps)[1]
    return tape.jacobian(y, x, experimental_use_pfor=use_pfor)

@tf.function
def vectorized(x, w):
    return jacobian(x, w, True)

@tf.function
def row_by_row(x, w):
    return jacobian(x, w, False)

FORMS = {"vectorized": lambda: vectorized(x, w), "row by row": lambda: row_by_row(x, w)}
""",
    "torch-eager": """
import torch
x, w = torch.tensor(x0), torch.tensor(w0)

def final(x):
    s = x
    for _ in range(steps):
        s = torch.tanh(s * w) + 0.1 * s
    return s

FORMS = {
    "vectorized": lambda: torch.func.jacrev(final)(x),
    "row by row": lambda: torch.autograd.functional.jacobian(final, x),
}
""",
}


def measure(system, quick):
    """One process of `system`: {"status", "forms": {form: seconds, calls, error}} or a
    status (skipped: not installed) with its detail."""
    code = PROGRAM.format(quick=quick, system=SYSTEMS[system])
    with tempfile.TemporaryDirectory(prefix="tracer-bench-cache-") as cache:
        env = environment(TRACER_CACHE_DIR=cache, TF_CPP_MIN_LOG_LEVEL="3")
        try:
            return run_program(code, env, timeout=600)
        except subprocess.TimeoutExpired:
            return {"status": "failed", "detail": "timed out after 600 s"}


def fastest(measured):
    """Each form's fastest round, with every round's seconds; the last round when one was
    not ok (a failure is never hidden), 'wrong' when a form's jacobian is not numpy's."""
    if measured[-1]["status"] != "ok":
        return {key: measured[-1][key] for key in ("status", "detail") if key in measured[-1]}
    kept = {"status": "ok"}
    for form in measured[-1]["forms"]:
        rounds = [r["forms"][form] for r in measured]
        best = dict(min(rounds, key=lambda r: r["seconds"]))
        best["round_seconds"] = [r["seconds"] for r in rounds]
        best["error"] = max(r["error"] for r in rounds)
        kept[form] = best
        if best["error"] > TOLERANCE:
            kept["status"] = "wrong"
            kept["detail"] = f"{form}: differs from numpy's jacobian by {best['error']:.2g}"
    return kept


def main():
    quick = "--quick" in sys.argv
    every_round = {system: [] for system in SYSTEMS}
    for number in range(1, (QUICK_ROUNDS if quick else ROUNDS) + 1):
        print(f"B23 round {number} ...", file=sys.stderr, flush=True)
        for system, measured in every_round.items():
            if measured and measured[-1]["status"] != "ok":  # skipped or failed: once
                continue
            measured.append(measure(system, quick))
    report = {system: fastest(measured) for system, measured in every_round.items()}
    shape = next((r for m in every_round.values() for r in m if r["status"] == "ok"), {})
    report["size"], report["steps"] = shape.get("size"), shape.get("steps")
    report["rounds"] = QUICK_ROUNDS if quick else ROUNDS
    print(json.dumps(report))


if __name__ == "__main__":
    main()
