"""A script's printed result on one thread and on two, for the tests that hold a kernel's
bits independent of its threads (each run a fresh process: OpenMP reads its thread count
once)."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def results_on_one_thread_and_two(script):
    """The JSON value `script` prints last, run with OMP_NUM_THREADS=1 and then 2."""
    results = []
    for threads in ("1", "2"):
        environment = dict(os.environ, OMP_NUM_THREADS=threads, PYTHONPATH=ROOT)
        done = subprocess.run(
            [sys.executable, "-c", script], env=environment, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        results.append(json.loads(done.stdout.splitlines()[-1]))
    return results
