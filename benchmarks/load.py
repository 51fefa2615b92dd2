"""Other processes that keep the machine busy while the suite measures: what a laptop
running a data loader, a second job or a test suite beside the program looks like.

    busy_processes(4)   two numpy matmul loops (numpy's own BLAS threads) and two
                        pure-Python loops, until the block ends
    one_busy_core()     one pure-Python loop pinned to the last core (--contended)
"""

import contextlib
import os
import subprocess
import sys

MATMUL_LOOP = (
    "import numpy as np\na = np.random.default_rng(0).random((512, 512))\nwhile True:\n    a @ a"
)
PYTHON_LOOP = "x = 0\nwhile True:\n    x += 1"


@contextlib.contextmanager
def busy_processes(count):
    """`count` busy processes, alternately a numpy matmul loop and a pure-Python loop, for
    the duration of the block; all of them are ended when it exits, however it exits."""
    programs = [MATMUL_LOOP if i % 2 == 0 else PYTHON_LOOP for i in range(count)]
    processes = [subprocess.Popen([sys.executable, "-c", p]) for p in programs]
    try:
        yield processes
    finally:
        _end(processes)


@contextlib.contextmanager
def one_busy_core():
    """A pure-Python loop pinned to the last core, for the duration of the block."""

    def last_core():
        os.sched_setaffinity(0, [max(os.sched_getaffinity(0))])

    process = subprocess.Popen([sys.executable, "-c", PYTHON_LOOP], preexec_fn=last_core)
    try:
        yield [process]
    finally:
        _end([process])


def _end(processes):
    for process in processes:
        process.kill()
    for process in processes:
        process.wait()
