"""numpy imported with its OpenBLAS's idle threads spinning briefly: tracer imports this
module before anything else of its own, so that it is numpy's first import where the
program has not imported numpy yet.

numpy's OpenBLAS (not the compiled modules' BLAS, runtime/thread_pools.py) starts a thread
per core when numpy is imported, and each of them, then and after every call numpy runs on
them, spins for 2^28 cycles, a tenth of a second at 2.5 GHz, before it sleeps: a core's
tenth of a second at every process's start, which another process, or tracer's own pool,
wanted. OpenBLAS reads how long (OPENBLAS_THREAD_TIMEOUT, a power of two of cycles) when it
loads, so the variable is set for numpy's import alone: child processes keep the
environment as it was. A user's own setting wins, and where numpy was imported first
nothing can change it (docs/threads.md, rule 12).
"""

import os
import sys

# 2^20 cycles, about half a millisecond: as long as an idle thread of tracer's own pool spins
# on a quiet machine (runtime/thread_pools.py's QUIET_SPIN_COUNT), so that numpy's calls in a
# row still find their threads awake
SPIN_POWER = 20
VARIABLE = "OPENBLAS_THREAD_TIMEOUT"

if "numpy" not in sys.modules and VARIABLE not in os.environ:
    os.environ[VARIABLE] = str(SPIN_POWER)
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ[VARIABLE]
