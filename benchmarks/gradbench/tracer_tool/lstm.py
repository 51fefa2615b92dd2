"""GradBench's `lstm`: the mean log-loss of ADBench's diagonal-weight LSTM over a sequence,
and its gradient with respect to the main and extra parameters.

The time steps are one `tt.foldl` over the sequence, so the compiled code holds one body
whatever the sequence's length, and its gradient is one reverse loop."""

import numpy as np

import tracer as tt
from benchmarks.gradbench.tracer_tool.runs import repeated


def _cell(weight, bias, hidden, cell, x):
    """One LSTM layer: the four gates read `x` and `hidden` through diagonal weights."""
    gates = tt.concat([x, hidden, x, hidden], 0) * weight + bias
    n = hidden.shape[0]
    forget = tt.sigmoid(gates[:n])
    ingate = tt.sigmoid(gates[n : 2 * n])
    outgate = tt.sigmoid(gates[2 * n : 3 * n])
    change = tt.tanh(gates[3 * n :])
    cell = cell * forget + ingate * change
    return outgate * tt.tanh(cell), cell


def _predict(main_params, extra_params, state, x):
    """The prediction for the next character and the layers' new state (hidden, cell pairs)."""
    x = x * extra_params[0]
    rows = []
    for i in range(0, state.shape[0], 2):
        hidden, cell = _cell(main_params[i], main_params[i + 1], state[i], state[i + 1], x)
        x = hidden
        rows += [hidden, cell]
    return x * extra_params[1] + extra_params[2], tt.stack(rows, 0)


def _loss(main_params, extra_params, state, sequence):
    """Minus the mean log-probability the model gives each character after the first."""

    def step(carry, target):
        state, x, total = carry
        ypred, state = _predict(main_params, extra_params, state, x)
        ynorm = ypred - tt.math.log(tt.reduce_sum(tt.exp(ypred)) + 2.0)
        return state, target, total + tt.reduce_sum(target * ynorm)

    start = (state, sequence[0], tt.constant(0.0, tt.float64))
    _, _, total = tt.foldl(step, sequence[1:], initializer=start)
    return -total / float((sequence.shape[0] - 1) * sequence.shape[1])


@tt.function
def _objective(main_params, extra_params, state, sequence):
    return _loss(main_params, extra_params, state, sequence)


@tt.function
def _gradient(main_params, extra_params, state, sequence):
    with tt.GradientTape() as tape:
        tape.watch([main_params, extra_params])
        loss = _loss(main_params, extra_params, state, sequence)
    d_main, d_extra = tape.gradient(loss, [main_params, extra_params])
    return tt.concat([tt.reshape(d_main, [-1]), tt.reshape(d_extra, [-1])], 0)


def _tensors(input):
    names = ("main_params", "extra_params", "state")
    params = [tt.constant(np.asarray(input[name], dtype=np.float64)) for name in names]
    return params + [tt.constant(np.asarray(input["sequence"], dtype=np.float64))]


def objective(input):
    args = _tensors(input)
    result, timings = repeated(input, lambda: _objective(*args))
    return float(result), timings


def jacobian(input):
    args = _tensors(input)
    result, timings = repeated(input, lambda: _gradient(*args))
    return result.numpy().tolist(), timings
