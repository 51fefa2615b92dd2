"""B3's vector-math bound: the time of B3's transcendental calls alone.

B3's gradient calls tanh, sin, cos and exp once per element, in one fused loop that glibc's
libmvec vectorizes. A loop making only those calls on B3's data, compiled by tracer the
same way (the same vector declarations, threads and schedule), is a time B3 cannot go
below however its arithmetic is arranged; `run.py` prints it beside the DRAM bound, and
B3's distance to the larger of the two.

    python3 benchmarks/vector_math_bound.py [--quick]      # prints JSON last
"""

import json
import sys

from data import make
from timing import median_seconds

import tracer as tt


def calls_alone(x):
    return tt.tanh(x) + tt.sin(x) + tt.exp(-x * x) + tt.cos(x)


def main():
    quick = "--quick" in sys.argv
    x = tt.constant(make("B3", quick)["x"])
    run = tt.function(calls_alone, backend="c")
    seconds = median_seconds(lambda: run(x), 5 if quick else 25)
    print(json.dumps({"status": "ok", "seconds": seconds}))


if __name__ == "__main__":
    main()
