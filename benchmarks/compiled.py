"""Compiled against eager, measured in one run (the figures issue 4 asks for).

    python3 benchmarks/compiled.py

- MLP training step: batch 128, 784-512 relu-10, softmax cross-entropy, gradients of all four
  parameters (eager tape, tt.function, and a hand-written numpy step).
- Fused elementwise gradient of sum(sin(x)*exp(-x*x) + tanh(x)*x) on 4M float32.
- Cold compile time of that function (a fresh cache) and per-call time of a compiled scalar gradient.
"""

import os
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TRACER_CACHE_DIR", tempfile.mkdtemp(prefix="tracer-bench-"))

import tracer as tt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timing import median_seconds  # noqa: E402


def mlp_step_functions():
    rng = np.random.default_rng(0)
    x = tt.constant(rng.standard_normal((128, 784)).astype(np.float32))
    y = tt.constant(rng.integers(0, 10, 128).astype(np.int32))
    w1 = tt.Variable(rng.standard_normal((784, 512)).astype(np.float32) * 0.05)
    b1 = tt.Variable(np.zeros(512, np.float32))
    w2 = tt.Variable(rng.standard_normal((512, 10)).astype(np.float32) * 0.05)
    b2 = tt.Variable(np.zeros(10, np.float32))
    params = [w1, b1, w2, b2]

    def step(x, y):
        with tt.GradientTape() as tape:
            logits = tt.matmul(tt.nn.relu(tt.matmul(x, w1) + b1), w2) + b2
            loss = tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        return loss, tape.gradient(loss, params)

    xs, ys, p = x.numpy(), y.numpy(), [v.numpy() for v in params]

    def numpy_step():
        h = xs @ p[0] + p[1]
        r = np.maximum(h, 0)
        logits = r @ p[2] + p[3]
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        softmax = e / e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(e.sum(axis=1)) - shifted[np.arange(128), ys])
        d = softmax
        d[np.arange(128), ys] -= 1
        d /= 128
        gw2, gb2 = r.T @ d, d.sum(axis=0)
        dh = (d @ p[2].T) * (h > 0)
        return loss, [xs.T @ dh, dh.sum(axis=0), gw2, gb2]

    return step, tt.function(step), numpy_step, (x, y)


def fused_functions(n=4 * 1024 * 1024):
    x = tt.constant(np.random.default_rng(1).standard_normal(n).astype(np.float32))

    def grad(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.sin(x) * tt.exp(-x * x) + tt.tanh(x) * x)
        return tape.gradient(y, x)

    xs = x.numpy()

    def numpy_grad():
        e = np.exp(-xs * xs)
        t = np.tanh(xs)
        return np.cos(xs) * e - 2 * xs * np.sin(xs) * e + t + xs * (1 - t * t)

    return grad, x, numpy_grad


def main():
    rows = []
    eager, compiled, numpy_step, args = mlp_step_functions()
    loss_e, grads_e = eager(*args)
    loss_c, grads_c = compiled(*args)
    loss_n, grads_n = numpy_step()
    np.testing.assert_allclose(float(loss_c), float(loss_e), rtol=1e-5)
    np.testing.assert_allclose(float(loss_c), loss_n, rtol=1e-5)
    for gc, gn in zip(grads_c, grads_n):
        np.testing.assert_allclose(gc.numpy(), gn, rtol=2e-3, atol=1e-6)
    t_eager = median_seconds(lambda: eager(*args), 20)
    t_compiled = median_seconds(lambda: compiled(*args), 50)
    t_numpy = median_seconds(numpy_step, 50)
    rows.append(("MLP step 128x784-512-10", t_eager, t_compiled, t_numpy))

    grad, x, numpy_grad = fused_functions()
    start = time.perf_counter()
    compiled_grad = tt.function(grad)
    compiled_grad(x)
    cold = time.perf_counter() - start
    np.testing.assert_allclose(compiled_grad(x).numpy(), numpy_grad(), rtol=1e-4, atol=1e-5)
    t_eager = median_seconds(lambda: grad(x), 5, warmup=1)
    t_compiled = median_seconds(lambda: compiled_grad(x), 10)
    t_numpy = median_seconds(numpy_grad, 5)
    rows.append(("fused gradient, 4M float32", t_eager, t_compiled, t_numpy))

    scalar = tt.function(lambda x: tt.grad(lambda v: v * v)(x))
    s = tt.constant(3.0)
    assert float(scalar(s)) == 6.0
    per_call = median_seconds(lambda: scalar(s), 2000, warmup=50)

    print(f"{'workload':30} {'eager':>10} {'compiled':>10} {'numpy':>10} {'eager/compiled':>15} {'compiled/numpy':>15}")
    for name, te, tc, tn in rows:
        print(f"{name:30} {te * 1e3:8.2f}ms {tc * 1e3:8.2f}ms {tn * 1e3:8.2f}ms {te / tc:14.1f}x {tc / tn:14.2f}x")
    print(f"cold compile + first call of the fused gradient: {cold:.2f} s")
    print(f"compiled scalar gradient of x*x, per call: {per_call * 1e6:.1f} us")


if __name__ == "__main__":
    main()
