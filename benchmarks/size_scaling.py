"""B17: an elementwise gradient from 10^3 to 10^7 elements, in nanoseconds per element.

The gradient of B3's sum(sin(x) exp(-x^2) + tanh(x) x) with respect to x (float32),
compiled, for each size in a process of its own: tracer (`tt.function`) and jax.jit when
installed, each checked against numpy in float64 first, against the bandwidth bound (reading
x and writing its gradient at the bandwidth numpy copies with). Small sizes show the fixed
cost of a call, large ones the loop's throughput and where threads start to pay.

    python3 benchmarks/size_scaling.py [--quick]      # prints JSON last
"""

import json
import sys

from programs import environment, run_program

SIZES = (10**3, 10**4, 10**5, 10**6, 10**7)
QUICK_SIZES = (10**3, 10**4)

PROGRAM = """
import json, time
import numpy as np
n = {n}
x0 = np.random.default_rng(0).standard_normal(n).astype(np.float32)
{system}
grad()
budget, times = {budget}, []
start = time.perf_counter()
while time.perf_counter() - start < budget or len(times) < 5:
    s = time.perf_counter(); grad(); times.append(time.perf_counter() - s)
g = np.asarray(grad(), np.float64)
x = x0.astype(np.float64)
want = np.cos(x) * np.exp(-x * x) - 2 * x * np.sin(x) * np.exp(-x * x) + np.tanh(x) + x * (1 - np.tanh(x) ** 2)
error = float(np.max(np.abs(g - want)) / (np.max(np.abs(want)) + 1))
print(json.dumps({{"seconds": sorted(times)[len(times) // 2], "error": error}}))
"""

SYSTEMS = {
    "tracer": """
import tracer as tt
x = tt.constant(x0)
@tt.function
def gradient(x):
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(tt.sin(x) * tt.exp(-x * x) + tt.tanh(x) * x)
    return tape.gradient(y, x)
grad = lambda: gradient(x).numpy()
""",
    "jax-jit": """
import jax, jax.numpy as jnp
x = jnp.asarray(x0)
step = jax.jit(jax.grad(lambda x: jnp.sum(jnp.sin(x) * jnp.exp(-x * x) + jnp.tanh(x) * x)))
grad = lambda: jax.block_until_ready(step(x))
""",
}


def measure(system, n, quick):
    """{seconds, error, status, ns_per_element}: the median call of at least 5 in a second
    (two from 10^7 elements), 5 calls alone with --quick (a smoke test: no budget to fill)."""
    budget = 0.0 if quick else (1.0 if n < 10**7 else 2.0)
    result = run_program(PROGRAM.format(n=n, system=SYSTEMS[system], budget=budget), environment())
    if result["status"] != "ok":
        return result
    status = "ok" if result["error"] <= 1e-4 else f"wrong: differs by {result['error']:.2g}"
    return {**result, "status": status, "ns_per_element": result["seconds"] / n * 1e9}


def bound_ns_per_element(quick):
    """Reading 4 bytes and writing 4 per element at numpy's copy bandwidth (64 MiB copies;
    4 MiB with --quick)."""
    import time

    import numpy as np

    source = np.ones((1 if quick else 16) * 1024 * 1024, np.float32)
    target = np.empty_like(source)
    times = []
    for _ in range(7):
        start = time.perf_counter()
        np.copyto(target, source)
        times.append(time.perf_counter() - start)
    return sorted(times)[3] / source.size * 1e9


def main():
    quick = "--quick" in sys.argv
    report = {"bound_ns_per_element": bound_ns_per_element(quick)}
    for n in QUICK_SIZES if quick else SIZES:
        report[str(n)] = {system: measure(system, n, quick) for system in SYSTEMS}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
