"""B16: the cheap-gradient ratio, value-and-gradient time over forward-only time, compiled.

Reverse mode costs about 5x the function in theory; good systems reach 2-4x. For three
workloads, each compiled system times its forward pass alone and its value with the
gradient (the median of later calls, in a process of its own), and the ratio is reported:

    mlp          B2's MLP loss, 128x784 -> 512 relu -> 10, softmax cross-entropy; gradient
                 of the 4 parameters
    elementwise  B3's sum(sin(x) exp(-x^2) + tanh(x) x) on 4M float32; gradient of x
    rnn          50 steps of h = tanh(h W + x_t U), batch 32, 128 units; loss sum(h);
                 gradient of W and U

Systems: tracer (`tt.function`, C) and jax.jit when installed. Each value and gradient is
checked against the other system's, or numpy's forward value, before it is timed.

    python3 benchmarks/cheap_gradient.py [--quick]      # prints JSON last
"""

import json
import sys

from programs import environment, run_program

CALLS = 30
QUICK_CALLS = 3
WORKLOADS = ("mlp", "elementwise", "rnn")

PROGRAM = """
import json, sys, time
import numpy as np
QUICK = {quick}
rng = np.random.default_rng(0)
f32 = np.float32
batch, inputs, hidden, classes = (8, 16, 12, 5) if QUICK else (128, 784, 512, 10)
mlp_data = [rng.standard_normal((batch, inputs)).astype(f32) * 0.5,
            (rng.standard_normal((inputs, hidden)) / np.sqrt(inputs)).astype(f32),
            np.zeros(hidden, f32),
            (rng.standard_normal((hidden, classes)) / np.sqrt(hidden)).astype(f32),
            np.zeros(classes, f32)]
labels = np.eye(classes, dtype=f32)[rng.integers(0, classes, batch)]
x4m = rng.standard_normal(4096 if QUICK else 4 * 1024 * 1024).astype(f32)
steps, rnn_batch, units = (5, 4, 8) if QUICK else (50, 32, 128)
rnn_data = [(rng.standard_normal((units, units)) / np.sqrt(units)).astype(f32),
            (rng.standard_normal((units, units)) / np.sqrt(units)).astype(f32),
            rng.standard_normal((steps, rnn_batch, units)).astype(f32)]
{system}
def timed(run):
    run(); run()
    times = []
    for _ in range({calls}):
        start = time.perf_counter(); run(); times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]
report = {{}}
for name, (forward, both) in WORKLOADS.items():
    if name != {workload!r}:
        continue
    value = float(np.asarray(forward()))
    value_again, grads = both()
    report[name] = {{"forward_seconds": timed(forward), "value_and_grad_seconds": timed(both),
                     "value": value, "value_again": float(np.asarray(value_again)),
                     "grad_sums": [float(np.sum(np.asarray(g, np.float64))) for g in grads]}}
print(json.dumps(report))
"""

SYSTEMS = {
    "tracer": """
import tracer as tt
def mlp(x, w1, b1, w2, b2, y):
    logits = tt.matmul(tt.nn.relu(tt.matmul(x, w1) + b1), w2) + b2
    return tt.reduce_mean(tt.nn.softmax_cross_entropy_with_logits(y, logits))
def elementwise(x):
    return tt.reduce_sum(tt.sin(x) * tt.exp(-x * x) + tt.tanh(x) * x)
def rnn(w, u, xs):
    h = tt.zeros((xs.shape[1], xs.shape[2]))
    for t in range(xs.shape[0]):
        h = tt.tanh(tt.matmul(h, w) + tt.matmul(xs[t], u))
    return tt.reduce_sum(h)
def value_and_grad(f, count):
    def both(*args):
        with tt.GradientTape() as tape:
            tape.watch(args[:count])
            value = f(*args)
        return value, tape.gradient(value, list(args[:count]))
    return tt.function(both)
mlp_args = [tt.constant(a) for a in mlp_data[1:]]
x0, y0 = tt.constant(mlp_data[0]), tt.constant(labels)
x4 = tt.constant(x4m)
rnn_args = [tt.constant(a) for a in rnn_data]
f_mlp, g_mlp = tt.function(mlp), value_and_grad(lambda w1, b1, w2, b2, x, y: mlp(x, w1, b1, w2, b2, y), 4)
f_el, g_el = tt.function(elementwise), value_and_grad(elementwise, 1)
f_rnn, g_rnn = tt.function(rnn), value_and_grad(rnn, 2)
WORKLOADS = {
    "mlp": (lambda: f_mlp(x0, *mlp_args, y0).numpy(), lambda: g_mlp(*mlp_args, x0, y0)),
    "elementwise": (lambda: f_el(x4).numpy(), lambda: g_el(x4)),
    "rnn": (lambda: f_rnn(*rnn_args).numpy(), lambda: g_rnn(*rnn_args)),
}
""",
    "jax-jit": """
import jax, jax.numpy as jnp
def mlp(w1, b1, w2, b2, x, y):
    logits = jax.nn.relu(x @ w1 + b1) @ w2 + b2
    return jnp.mean(-jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))
def elementwise(x):
    return jnp.sum(jnp.sin(x) * jnp.exp(-x * x) + jnp.tanh(x) * x)
def rnn(w, u, xs):
    h = jnp.zeros(xs.shape[1:])
    for t in range(xs.shape[0]):
        h = jnp.tanh(h @ w + xs[t] @ u)
    return jnp.sum(h)
def pair(f, count, args):
    forward = jax.jit(f)
    both = jax.jit(jax.value_and_grad(f, argnums=tuple(range(count))))
    return (lambda: jax.block_until_ready(forward(*args)),
            lambda: jax.block_until_ready(both(*args)))
mlp_args = [jnp.asarray(a) for a in mlp_data[1:]] + [jnp.asarray(mlp_data[0]), jnp.asarray(labels)]
WORKLOADS = {
    "mlp": pair(mlp, 4, mlp_args),
    "elementwise": pair(elementwise, 1, [jnp.asarray(x4m)]),
    "rnn": pair(rnn, 2, [jnp.asarray(a) for a in rnn_data]),
}
""",
}


def measure(system, workload, quick):
    code = PROGRAM.format(
        quick=quick,
        system=SYSTEMS[system],
        calls=QUICK_CALLS if quick else CALLS,
        workload=workload,
    )
    result = run_program(code, environment(), timeout=1800)
    measured = result.pop(workload, {})  # the program reports {workload: figures}
    return {**result, **measured}


def checked(results):
    """The ratios, once each system's value with the gradient equals its forward value and
    its gradients' sums equal the first system's (relative 1e-3: float32, sums over 4M terms)."""
    for name in WORKLOADS:
        measured = [r["workloads"][name] for r in results.values()]
        first = next((w for w in measured if w["status"] == "ok"), None)
        for w in measured:
            if w["status"] != "ok":
                continue
            errors = [abs(w["value_again"] - w["value"]) / (abs(w["value"]) + 1)]
            errors += [
                abs(a - b) / (abs(b) + 1) for a, b in zip(w["grad_sums"], first["grad_sums"])
            ]
            w["ratio"] = w["value_and_grad_seconds"] / w["forward_seconds"]
            if max(errors) > 1e-3:
                w["status"] = f"wrong: differs by {max(errors):.2g}"
    return results


def main():
    """Each workload of each system in a process of its own: the threads a GEMM leaves
    spinning (OpenBLAS's, for a while after each call) do not slow the next workload."""
    quick = "--quick" in sys.argv
    results = {}
    for system in SYSTEMS:
        measured = {name: measure(system, name, quick) for name in WORKLOADS}
        statuses = {w["status"] for w in measured.values()}
        status = "ok" if "ok" in statuses else statuses.pop()
        detail = next((w.get("detail") for w in measured.values() if "detail" in w), "")
        results[system] = {"status": status, "detail": detail, "workloads": measured}
    print(json.dumps(checked(results)))


if __name__ == "__main__":
    main()
