"""The hand-written numpy reference of every workload: forward and backward written out."""

import numpy as np


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
    x, y, w1, b1, w2, b2 = (d[k] for k in ("x", "y", "w1", "b1", "w2", "b2"))
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


BUILDERS = {
    "numpy": {
        "B1": chain,
        "B2": mlp,
        "B3": fused,
        "B4": jacobian,
        "B4b": batch_jacobian,
        "B5": hessian,
        "B7": scalar_grad,
    }
}
