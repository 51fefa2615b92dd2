"""Whether this CPU makes float32 subnormals slowly, which decides whether a module's loops
that square float32 values are also written on float's grid (codegen/lower.py,
templates/grid_mode.c.j2).

Intel's cores take a microcode assist of a hundred cycles or more for each vector
instruction that makes or reads a subnormal; AMD's EPYC takes them at little cost (a
product whose result is subnormal about twice a normal one's time). Where they are slow, a
loop on float's grid (the squares and what they flow into in double, no subnormal made) is
several times faster on such values, and the module holds both versions and times them;
where they are cheap, the plain loops win every time, and writing the grid's versions only
costs the compiler: B9's module compiles in three fifths of the time without them.

Measured once a process, at its first compiled module (the stored plans' key holds the
answer: codegen/plans.py): numpy's product of 16,384 float32 values whose products are
subnormal against one of normal values, the best of seven alternated runs of each (0.2 ms
on the AMD EPYC, where the ratio is about 2; Intel's assists make it tens, so a busy
moment does not flip it). Both versions give numpy's bits, so the answer changes only a
module's compile and its time on subnormal values, never a value.
"""

import functools
import time

import numpy as np

SLOW_RATIO = 4  # a product making subnormals this many times slower than a normal one
_SIZE = 1 << 14
_RUNS = 7


@functools.cache
def slow():
    """Whether a float32 product whose result is subnormal takes SLOW_RATIO times a normal
    one's time on this CPU."""
    subnormal = np.full(_SIZE, 1e-20, np.float32)  # its square is 1e-40
    normal = np.full(_SIZE, 1.5, np.float32)
    out = np.empty(_SIZE, np.float32)
    with np.errstate(all="ignore"):
        times = {id(subnormal): [], id(normal): []}
        for _ in range(_RUNS):  # alternated: a busy moment slows both alike
            for values in (subnormal, normal):
                start = time.perf_counter_ns()
                np.multiply(values, values, out=out)
                times[id(values)].append(time.perf_counter_ns() - start)
    return min(times[id(subnormal)]) > SLOW_RATIO * min(times[id(normal)])
