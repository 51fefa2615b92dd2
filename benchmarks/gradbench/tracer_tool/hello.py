"""GradBench's `hello`: x² and its derivative."""

import numpy as np

import tracer as tt
from benchmarks.gradbench.tracer_tool.runs import repeated


@tt.function
def _square(x):
    return x * x


@tt.function
def _double(x):
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = _square(x)
    return tape.gradient(y, x)


def square(input):
    x = tt.constant(np.float64(input))
    result, timings = repeated({}, lambda: _square(x))
    return float(result), timings


def double(input):
    x = tt.constant(np.float64(input))
    result, timings = repeated({}, lambda: _double(x))
    return float(result), timings
