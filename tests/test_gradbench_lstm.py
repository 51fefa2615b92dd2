"""tracer's GradBench `lstm` tool: the loss and its gradient, against a numpy LSTM and
finite differences, for a bit sequence (the eval's) and a real-valued one."""

import numpy as np

from benchmarks.gradbench.tracer_tool import lstm


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _loss(main, extra, state, sequence):
    total, x, n = 0.0, sequence[0], state.shape[1]
    for target in sequence[1:]:
        x, new = x * extra[0], []
        for i in range(0, state.shape[0], 2):
            gates = np.concatenate([x, state[i], x, state[i]]) * main[i] + main[i + 1]
            cell = state[i + 1] * _sigmoid(gates[:n]) + _sigmoid(gates[n : 2 * n]) * np.tanh(
                gates[3 * n :]
            )
            x = _sigmoid(gates[2 * n : 3 * n]) * np.tanh(cell)
            new += [x, cell]
        state = np.stack(new)
        ypred = x * extra[1] + extra[2]
        total += np.sum(target * (ypred - np.log(np.sum(np.exp(ypred)) + 2)))
        x = target
    return -total / ((len(sequence) - 1) * n)


def _input(bits):
    rng = np.random.default_rng(0)
    layers, b, c = 2, 3, 6
    sequence = rng.random((c, b))
    if bits:
        sequence = (sequence > 0.5) * 1.0
    return {
        "main_params": rng.random((2 * layers, 4 * b)),
        "extra_params": rng.random((3, b)),
        "state": rng.random((2 * layers, b)),
        "sequence": sequence,
    }


def test_objective_and_gradient():
    input = _input(bits=True)
    args = [input[k] for k in ("main_params", "extra_params", "state", "sequence")]
    value, timings = lstm.objective({k: v.tolist() for k, v in input.items()})
    assert len(timings) == 1
    assert abs(value - _loss(*args)) < 1e-12
    gradient, _ = lstm.jacobian({k: v.tolist() for k, v in input.items()})
    assert len(gradient) == args[0].size + args[1].size
    eps = 1e-6
    for which, k in ((0, 0), (0, 29), (1, 4)):
        up, down = [a.copy() for a in args], [a.copy() for a in args]
        up[which].reshape(-1)[k] += eps
        down[which].reshape(-1)[k] -= eps
        fd = (_loss(*up) - _loss(*down)) / (2 * eps)
        offset = 0 if which == 0 else args[0].size
        assert abs(fd - gradient[offset + k]) < 1e-8
