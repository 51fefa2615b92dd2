"""B4 (first cut): the 256x256 jacobian of tanh(W @ x + b), vectorized against looped.

    python3 benchmarks/jacobian.py
"""

import numpy as np

import tracer as tt
from timing import median_seconds

N = 256


def jacobian(w, b, x, use_pfor):
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = tt.tanh(tt.matmul(w, x[:, None])[:, 0] + b)
    return tape.jacobian(y, x, experimental_use_pfor=use_pfor)


def median_ms(function, repeats):
    return median_seconds(function, repeats, warmup=1) * 1e3


def main():
    rng = np.random.default_rng(0)
    w = tt.constant(rng.standard_normal((N, N)).astype(np.float32) / 16)
    b = tt.constant(rng.standard_normal(N).astype(np.float32))
    x = tt.constant(rng.standard_normal(N).astype(np.float32))
    y = np.tanh(w.numpy() @ x.numpy() + b.numpy())
    expected = (1 - y**2)[:, None] * w.numpy()
    for use_pfor in (True, False):
        np.testing.assert_allclose(jacobian(w, b, x, use_pfor).numpy(), expected, rtol=1e-4, atol=1e-6)
    vectorized = median_ms(lambda: jacobian(w, b, x, True), 20)
    looped = median_ms(lambda: jacobian(w, b, x, False), 3)
    numpy_ms = median_ms(lambda: (1 - np.tanh(w.numpy() @ x.numpy() + b.numpy()) ** 2)[:, None] * w.numpy(), 20)
    print(f"256x256 jacobian of tanh(W@x+b): vectorized {vectorized:.2f} ms, looped {looped:.1f} ms "
          f"({looped / vectorized:.0f}x), numpy closed form {numpy_ms:.2f} ms")


if __name__ == "__main__":
    main()
