"""Run one workload on one system, in this process: its first call, checked against the numpy
reference, then its time (warm-up, then the median of repeated runs). Prints one JSON line.

The reference is computed after the first call, on a copy of the data: numpy's BLAS threads
spin for tens of milliseconds after a product, and a first call made then shares the cores
with them (a first call that runs the C compiler on every core took 40 ms longer).

    python3 benchmarks/worker.py B2 tracer-compiled [--quick] [--first-call-only]

With --quick, several workloads may be named (B2,B3,B9): each is measured in turn, in this
process, and prints its line (the suite's smoke test starts one process per system, not
one per measurement).
"""

import argparse
import copy
import importlib
import json
import os
import statistics
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from data import TOLERANCE, make
from systems import MODULES
from systems.reference import BUILDERS as REFERENCE

TIME_BUDGET = 2.0  # seconds of timed runs per measurement, at most
# --quick (the suite's tests): one warm-up and three timed runs, whatever they take: the
# harness runs, timings matter not
QUICK_REPEATS = 3
MAX_REPEATS = 2000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("workload")
    parser.add_argument("system")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--first-call-only", action="store_true")
    options = parser.parse_args()
    workloads = options.workload.split(",")
    if len(workloads) > 1 and not options.quick:
        parser.error("several workloads are measured in one process only with --quick")
    for workload in workloads:
        result = measure(workload, options.system, options.quick, options.first_call_only)
        print(json.dumps(result), flush=True)


def measure(workload, system, quick, first_call_only=False):
    try:
        module = importlib.import_module(MODULES[system])
    except ImportError as error:
        return {"status": "skipped", "detail": f"not installed ({error.name})"}
    builder = module.BUILDERS[system].get(workload)
    if builder is None:
        return {"status": "n/a"}
    data = make(workload, quick)
    reference_data = copy.deepcopy(data)  # the system may update its variables in place
    convert = getattr(module, "to_numpy", _to_numpy)
    start = time.perf_counter()
    run = builder(data)
    got = _flat(convert(run()))
    first = time.perf_counter() - start
    expected = _flat(REFERENCE["numpy"][workload](reference_data)())
    error = max(_relative_error(g, e) for g, e in zip(got, expected))
    if len(got) != len(expected) or error > TOLERANCE[workload]:
        return {"status": "wrong", "detail": f"differs from numpy by {error:.2e} (relative)"}
    if first_call_only:
        return {"status": "ok", "first_call_seconds": first}
    run()  # the second call, at which tracer's eager convolutions ask for their modules
    _wait_for_background_builds()
    timed = (lambda: convert(run())) if system == "jax-jit" else run
    return {
        "status": "ok",
        "seconds": _median(timed, quick),
        "first_call_seconds": first,
        "error": error,
    }


def _wait_for_background_builds():
    """Let tracer finish the builds its first calls left running (a module with its own
    convolution kernels, to replace the one that called the installed ones: docs/first-call.md;
    the modules of eager convolutions, tracer/eager_convolutions.py), so that its steady state
    is timed, as the peers' is, after its compiler is done."""
    for thread in threading.enumerate():
        if thread.name.startswith("tracer build of"):
            thread.join()


def _median(function, quick):
    for _ in range(1 if quick else 3):
        function()
    times, spent = [], 0.0
    least, budget = (QUICK_REPEATS, 0.0) if quick else (5, TIME_BUDGET)
    while len(times) < least or (spent < budget and len(times) < MAX_REPEATS):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
        spent += times[-1]
    return statistics.median(times)


def _to_numpy(value):
    if isinstance(value, (list, tuple)):
        return [_to_numpy(v) for v in value]
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value)


def _flat(value):
    if isinstance(value, (list, tuple)):
        return [np.asarray(v, dtype=np.float64) for v in value]
    return [np.asarray(value, dtype=np.float64)]


def _relative_error(got, expected):
    if got.shape != expected.shape:
        return np.inf
    scale = max(float(np.max(np.abs(expected))), 1e-30) if expected.size else 1.0
    return float(np.max(np.abs(got - expected))) / scale if expected.size else 0.0


if __name__ == "__main__":
    main()
