"""B1 (first cut): microseconds per op for a 200-op scalar chain, recorded and differentiated.

    python3 benchmarks/eager_overhead.py

Compared with the same arithmetic in plain numpy (no tape, no gradient) and with numpy
doing forward plus a hand-written backward pass.
"""

import numpy as np

import tracer as tt
from timing import median_seconds

OPS = 200


def chain_tracer(x):
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = x
        for i in range(OPS // 2):
            y = tt.sin(y) * 1.01
    return tape.gradient(y, x)


def chain_numpy_forward(x):
    y = x
    for i in range(OPS // 2):
        y = np.sin(y) * np.float32(1.01)
    return y


def chain_numpy_forward_backward(x):
    y, cosines = x, []
    for i in range(OPS // 2):
        cosines.append(np.cos(y))
        y = np.sin(y) * np.float32(1.01)
    g = np.float32(1.0)
    for c in reversed(cosines):
        g = g * np.float32(1.01) * c
    return g


def per_op_microseconds(function, arg, repeats=30):
    return median_seconds(lambda: function(arg), repeats, warmup=1) / OPS * 1e6


def main():
    x_np = np.float32(0.5)
    x_tt = tt.constant(0.5)
    expected = chain_numpy_forward_backward(x_np)
    np.testing.assert_allclose(float(chain_tracer(x_tt)), float(expected), rtol=1e-4)
    rows = [
        ("tracer eager: record + gradient", per_op_microseconds(chain_tracer, x_tt)),
        ("numpy: forward only", per_op_microseconds(chain_numpy_forward, x_np)),
        ("numpy: forward + hand-written backward", per_op_microseconds(chain_numpy_forward_backward, x_np)),
    ]
    reference = rows[2][1]
    print(f"{'workload (200-op scalar chain)':42} {'us/op':>8} {'vs numpy f+b':>13}")
    for name, us in rows:
        print(f"{name:42} {us:8.2f} {us / reference:12.1f}x")


if __name__ == "__main__":
    main()
