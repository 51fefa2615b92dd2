"""How tracer's GradBench tool runs a function: as often as the eval's input asks."""

import time


def repeated(input, compute):
    """Call `compute()` at least `min_runs` times and until `min_seconds` have passed (the
    eval's `Runs` fields; once where absent); its last result, and each call's nanoseconds.
    The first call includes tracing and compiling, as a first call of jax.jit's does."""
    min_runs = input.get("min_runs", 1)
    min_seconds = input.get("min_seconds", 0)
    timings, elapsed, result = [], 0, None
    while len(timings) < min_runs or elapsed < min_seconds * 1e9:
        start = time.perf_counter_ns()
        result = compute()
        took = time.perf_counter_ns() - start
        timings.append(took)
        elapsed += took
    return result, timings
