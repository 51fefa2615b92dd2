"""GradBench's `lse`: LogSumExp of a vector and its gradient.

LSE is written from its primitives (a maximum, a sum of exponentials, a logarithm), as the
eval asks, so that its gradient is the tape's work and not a hand-written rule. Every message
brings a vector of a new length: the functions take a `[None]` signature, so one compiled
module serves every size.
"""

import numpy as np

import tracer as tt
from benchmarks.gradbench.tracer_tool.runs import repeated

VECTOR = [tt.TensorSpec([None], tt.float64)]


def logsumexp(x):
    """log(sum(exp(x))), shifted by max(x) so that no exponential overflows."""
    a = tt.reduce_max(x)
    return a + tt.math.log(tt.reduce_sum(tt.exp(x - a)))


@tt.function(input_signature=VECTOR)
def _primal(x):
    return logsumexp(x)


@tt.function(input_signature=VECTOR)
def _gradient(x):
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = logsumexp(x)
    return tape.gradient(y, x)


def _vector(input):
    return tt.constant(np.asarray(input["x"], dtype=np.float64))


def primal(input):
    x = _vector(input)
    result, timings = repeated(input, lambda: _primal(x))
    return float(result), timings


def gradient(input):
    x = _vector(input)
    result, timings = repeated(input, lambda: _gradient(x))
    return result.numpy().tolist(), timings
