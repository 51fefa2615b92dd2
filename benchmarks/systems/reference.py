"""The hand-written numpy reference of every workload: forward and backward written out."""

import numpy as np
from data import ADAM


def chain(d):
    x, ops = d["x"], d["ops"]

    def run():
        y, cosines = x, []
        for _ in range(ops // 2):
            cosines.append(np.cos(y))
            y = np.sin(y) * np.float32(1.01)
        g = np.float32(1.0)
        for c in reversed(cosines):
            g = g * np.float32(1.01) * c
        return g

    return run


def mlp(d):
    return _loss_and_grads(d["x"], d["y"], *(d[k] for k in ("w1", "b1", "w2", "b2")))


def _loss_and_grads(x, y, w1, b1, w2, b2):
    batch = x.shape[0]
    rows = np.arange(batch)

    def run():
        h = x @ w1 + b1
        r = np.maximum(h, 0)
        logits = r @ w2 + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        total = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(total[:, 0]) - shifted[rows, y])
        d_logits = e / total
        d_logits[rows, y] -= 1
        d_logits /= batch
        dh = (d_logits @ w2.T) * (h > 0)
        return [loss, x.T @ dh, dh.sum(axis=0), r.T @ d_logits, d_logits.sum(axis=0)]

    return run


def train_step(d):
    """B9: the B2 step, then Adam on the 4 variables, in place; returns the loss and them."""
    params = [d[k].copy() for k in ("w1", "b1", "w2", "b2")]
    moments = [[np.zeros_like(p), np.zeros_like(p)] for p in params]
    grads = _loss_and_grads(d["x"], d["y"], *params)
    lr, b1, b2, eps = (ADAM[k] for k in ("learning_rate", "beta_1", "beta_2", "epsilon"))
    step = [0]

    def run():
        loss, *gs = grads()
        step[0] += 1
        t = step[0]
        rate = np.float32(lr * np.sqrt(1 - b2**t) / (1 - b1**t))
        for p, g, (m, v) in zip(params, gs, moments):
            m *= np.float32(b1)
            m += np.float32(1 - b1) * g
            v *= np.float32(b2)
            v += np.float32(1 - b2) * g * g
            p -= rate * m / (np.sqrt(v) + np.float32(eps))
        return [loss, *params]

    return run


def fused(d):
    x = d["x"]

    def run():
        e = np.exp(-x * x)
        t = np.tanh(x)
        return np.cos(x) * e - 2 * x * np.sin(x) * e + t + x * (1 - t * t)

    return run


def jacobian(d):
    w, b, x = d["w"], d["b"], d["x"]

    def run():
        y = np.tanh(w @ x + b)
        return (1 - y * y)[:, None] * w

    return run


def batch_jacobian(d):
    w, b, x = d["w"], d["b"], d["x"]

    def run():
        y = np.tanh(x @ w.T + b)
        return (1 - y * y)[:, :, None] * w[None]

    return run


def hessian(d):
    x = d["x"]

    def run():
        return np.diag(2 * np.sin(x) + 4 * x * np.cos(x) - x * x * np.sin(x))

    return run


def scalar_grad(d):
    x = d["x"]
    return lambda: np.float32(2.0) * x


def euler(d):
    """B10: the states kept going forward, then the adjoint loop back through them."""
    x0, theta, steps, dt = d["x0"], d["theta"], d["steps"], np.float32(d["dt"])
    half = np.float32(0.5)

    def run():
        x, states = x0, []
        for _ in range(steps):
            states.append(x)
            x = x + dt * (np.sin(theta * x) - half * x * x * x)
        loss = half * np.sum(x * x)
        g, g_theta = x, np.zeros_like(theta)
        for x in reversed(states):
            c = np.cos(theta * x)
            g_theta = g_theta + g * dt * x * c
            g = g * (np.float32(1) + dt * (theta * c - np.float32(1.5) * x * x))
        return [loss, g, g_theta]

    return run


def hvp(d):
    """B12: the B5 Hessian is diagonal; its product with v, written out."""
    x, v = d["x"], d["v"]
    return lambda: (2 * np.sin(x) + 4 * x * np.cos(x) - x * x * np.sin(x)) * v


def lstm(d):
    """B18: the LSTM objective forward, then back through the steps by hand."""
    main, extra, state, sequence = (d[k] for k in ("main", "extra", "state", "sequence"))
    layers, symbols = main.shape[0] // 2, sequence.shape[1]
    count = (sequence.shape[0] - 1) * symbols

    def sigmoid(a):
        return 1 / (1 + np.exp(-a))

    def run():
        hidden, cell = list(state[0::2]), list(state[1::2])
        saved, total = [], 0.0
        for t in range(sequence.shape[0] - 1):
            x, steps = sequence[t] * extra[0], []
            for i in range(layers):
                inputs = np.concatenate([x, hidden[i], x, hidden[i]])
                gates = inputs * main[2 * i] + main[2 * i + 1]
                f, g_in, g_out = (sigmoid(gates[k * symbols : (k + 1) * symbols]) for k in range(3))
                change = np.tanh(gates[3 * symbols :])
                new_cell = cell[i] * f + g_in * change
                squashed = np.tanh(new_cell)
                steps.append((inputs, cell[i], f, g_in, g_out, change, squashed))
                hidden[i], cell[i] = g_out * squashed, new_cell
                x = hidden[i]
            predicted = x * extra[1] + extra[2]
            e = np.exp(predicted)
            total += np.sum(sequence[t + 1] * (predicted - np.log(e.sum())))
            saved.append((steps, x, e / e.sum()))
        d_main, d_extra = np.zeros_like(main), np.zeros_like(extra)
        d_hidden = [np.zeros(symbols, np.float32) for _ in range(layers)]
        d_cell = [np.zeros(symbols, np.float32) for _ in range(layers)]
        for t in reversed(range(sequence.shape[0] - 1)):
            steps, top, softmax = saved[t]
            d_norm = sequence[t + 1] * np.float32(-1.0 / count)
            d_pred = d_norm - softmax * d_norm.sum()
            d_extra[1] += d_pred * top
            d_extra[2] += d_pred
            d_x = d_pred * extra[1]
            for i in reversed(range(layers)):
                inputs, old_cell, f, g_in, g_out, change, squashed = steps[i]
                d_h = d_x + d_hidden[i]
                d_new_cell = d_cell[i] + d_h * g_out * (1 - squashed**2)
                d_gates = np.concatenate(
                    [
                        d_new_cell * old_cell * f * (1 - f),
                        d_new_cell * change * g_in * (1 - g_in),
                        d_h * squashed * g_out * (1 - g_out),
                        d_new_cell * g_in * (1 - change**2),
                    ]
                )
                d_main[2 * i] += d_gates * inputs
                d_main[2 * i + 1] += d_gates
                d_inputs = d_gates * main[2 * i]
                d_x = d_inputs[:symbols] + d_inputs[2 * symbols : 3 * symbols]
                d_hidden[i] = d_inputs[symbols : 2 * symbols] + d_inputs[3 * symbols :]
                d_cell[i] = d_new_cell * f
            d_extra[0] += d_x * sequence[t]
        return [-total / count, d_main, d_extra]

    return run


def _conv_same(x, w):
    """A 3x3 SAME convolution (NHWC, HWIO) as one matmul of the 9 shifted copies of x; the
    copies are returned too, for the backward pass."""
    n, h, wd, c = x.shape
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    columns = np.stack(
        [padded[:, i : i + h, j : j + wd, :] for i in range(3) for j in range(3)], axis=3
    ).reshape(n * h * wd, 9 * c)
    return (columns @ w.reshape(9 * c, -1)).reshape(n, h, wd, -1), columns


def _conv_same_input_grad(g, w, shape):
    n, h, wd, c = shape
    d_columns = (g.reshape(n * h * wd, -1) @ w.reshape(9 * c, -1).T).reshape(n, h, wd, 9, c)
    padded = np.zeros((n, h + 2, wd + 2, c), g.dtype)
    for k in range(9):
        i, j = divmod(k, 3)
        padded[:, i : i + h, j : j + wd, :] += d_columns[:, :, :, k, :]
    return padded[:, 1:-1, 1:-1, :]


def _pool(x):
    """2x2 max pooling, stride 2, and where each window's maximum came from."""
    n, h, wd, c = x.shape
    windows = x.reshape(n, h // 2, 2, wd // 2, 2, c)
    out = windows.max(axis=(2, 4))
    return out, windows == out[:, :, None, :, None, :]


def _pool_grad(g, mask):
    n, h2, _, w2, _, c = mask.shape
    return (mask * g[:, :, None, :, None, :]).reshape(n, 2 * h2, 2 * w2, c)


def cnn(d):
    """B19: the CNN forward, then back through it by hand (a window's tie would share its
    gradient, but ties only happen at relu's zeros, whose gradient is zero anyway)."""
    x, y = d["x"], d["y"]
    w1, b1, w2, b2, w3, b3 = (d[k] for k in ("w1", "b1", "w2", "b2", "w3", "b3"))
    batch, rows = x.shape[0], np.arange(x.shape[0])

    def run():
        h1, cols1 = _conv_same(x, w1)
        r1 = np.maximum(h1 + b1, 0)
        p1, mask1 = _pool(r1)
        h2, cols2 = _conv_same(p1, w2)
        r2 = np.maximum(h2 + b2, 0)
        p2, mask2 = _pool(r2)
        flat = p2.reshape(batch, -1)
        logits = flat @ w3 + b3
        shifted = logits - logits.max(axis=1, keepdims=True)
        e = np.exp(shifted)
        total = e.sum(axis=1, keepdims=True)
        loss = np.mean(np.log(total[:, 0]) - shifted[rows, y])
        d_logits = e / total
        d_logits[rows, y] -= 1
        d_logits /= batch
        d_r2 = _pool_grad((d_logits @ w3.T).reshape(p2.shape), mask2) * (r2 > 0)
        d_w2 = (cols2.T @ d_r2.reshape(-1, d_r2.shape[-1])).reshape(w2.shape)
        d_p1 = _conv_same_input_grad(d_r2, w2, p1.shape)
        d_r1 = _pool_grad(d_p1, mask1) * (r1 > 0)
        d_w1 = (cols1.T @ d_r1.reshape(-1, d_r1.shape[-1])).reshape(w1.shape)
        return [
            loss,
            d_w1,
            d_r1.sum(axis=(0, 1, 2)),
            d_w2,
            d_r2.sum(axis=(0, 1, 2)),
            flat.T @ d_logits,
            d_logits.sum(axis=0),
        ]

    return run


def gp(d):
    """B20: the GP's negative log marginal likelihood and, with W = K^-1 - alpha alpha^T, its
    gradient 0.5 tr(W dK/dtheta) for each hyperparameter."""
    x, y, params = d["x"], d["y"], d["params"]
    squared = (x[:, None] - x[None, :]) ** 2
    n = x.shape[0]

    def run():
        lengthscale2, signal, noise = np.exp(2 * params[0]), np.exp(params[1]), np.exp(params[2])
        kernel = signal * np.exp(-squared / (2 * lengthscale2))
        chol = np.linalg.cholesky(kernel + noise * np.eye(n))
        chol_inv = np.linalg.inv(chol)
        k_inv = chol_inv.T @ chol_inv
        alpha = k_inv @ y
        nll = 0.5 * y @ alpha + np.sum(np.log(np.diag(chol))) + 0.5 * n * np.log(2 * np.pi)
        w = k_inv - np.outer(alpha, alpha)
        grad = 0.5 * np.array(
            [np.sum(w * kernel * squared) / lengthscale2, np.sum(w * kernel), noise * np.trace(w)]
        )
        return [nll, grad]

    return run


BUILDERS = {
    "numpy": {
        "B1": chain,
        "B2": mlp,
        "B3": fused,
        "B4": jacobian,
        "B4b": batch_jacobian,
        "B5": hessian,
        "B7": scalar_grad,
        "B9": train_step,
        "B9b": train_step,
        "B9u": train_step,
        "B10": euler,
        "B12": hvp,
        "B18": lstm,
        "B18w": lstm,
        "B19": cnn,
        "B20": gp,
    }
}
