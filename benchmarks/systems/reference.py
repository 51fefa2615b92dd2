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
    }
}
