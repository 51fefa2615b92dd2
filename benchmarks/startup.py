"""B6: import time, time to the first result in a fresh process with a cold cache, and with a
warm one (a second process). Each measurement is a new Python process; each is taken three
times (a new cold cache each time) and the median reported.

    python3 benchmarks/startup.py [--quick]
"""

import json
import os
import subprocess
import sys
import tempfile

PROGRAMS = {
    "tracer": (
        "import tracer as tt, numpy as np",
        "f = tt.function(lambda x: tt.grad(lambda v: tt.reduce_sum(tt.sin(v) * tt.exp(-v * v) + tt.tanh(v) * v))(x));"
        "f(tt.constant(np.linspace(-1, 1, 4096).astype(np.float32))).numpy()",
    ),
    "jax-jit": (
        "import jax, jax.numpy as jnp, numpy as np",
        "f = jax.jit(jax.grad(lambda v: jnp.sum(jnp.sin(v) * jnp.exp(-v * v) + jnp.tanh(v) * v)));"
        "np.asarray(f(jnp.asarray(np.linspace(-1, 1, 4096).astype(np.float32))))",
    ),
}


def timed(system, env):
    setup, work = PROGRAMS[system]
    code = (
        f"import time; t0 = time.perf_counter(); {setup}; t1 = time.perf_counter(); {work}; "
        "t2 = time.perf_counter(); print(t1 - t0, t2 - t1)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600
    )
    if result.returncode != 0:
        missing = "ModuleNotFoundError" in result.stderr
        return {
            "status": "skipped" if missing else "failed",
            "detail": result.stderr.strip().splitlines()[-1][:200],
        }
    import_s, first_s = map(float, result.stdout.split())
    return {"status": "ok", "import_seconds": import_s, "first_result_seconds": first_s}


def main():
    repeats = 1 if "--quick" in sys.argv else 3
    # NOTE: as after an install, modules load from their bytecode: without it each import
    # compiles the Python source of every package (tracer's and jax's) again.
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for system in PROGRAMS:
        timed(system, base)  # writes the bytecode
    cold, warm, jax = [], [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(
            prefix="tracer-b6-"
        ) as cache:  # a cold cache for each first process
            env = dict(base, TRACER_CACHE_DIR=cache)
            cold.append(timed("tracer", env))
            warm.append(timed("tracer", env))
        jax.append(timed("jax-jit", base))
    report = {
        "tracer cold": median(cold),
        "tracer warm (second process)": median(warm),
        "jax-jit": median(jax),
    }
    print(json.dumps(report))


def median(results):
    """The run with the median first result (a failed or skipped run is reported instead)."""
    failed = [r for r in results if r["status"] != "ok"]
    if failed:
        return failed[0]
    ordered = sorted(results, key=lambda r: r["first_result_seconds"])
    return ordered[len(ordered) // 2]


if __name__ == "__main__":
    main()
