"""The hand-written numpy reference of every workload: forward and backward written out."""

import math

import numpy as np
from data import ADAM, BLOCK_PARAMS, LAYER_NORM_EPSILON, MOBILE_PARAMS


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


def _cross_entropy(logits, y):
    """The mean softmax cross-entropy of `logits` with integer labels `y`, and its gradient."""
    rows = np.arange(len(y))
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    total = e.sum(axis=1, keepdims=True)
    d_logits = e / total
    d_logits[rows, y] -= 1
    return np.mean(np.log(total[:, 0]) - shifted[rows, y]), d_logits / len(y)


def _loss_and_grads(x, y, w1, b1, w2, b2):
    def run():
        h = x @ w1 + b1
        r = np.maximum(h, 0)
        logits = r @ w2 + b2
        loss, d_logits = _cross_entropy(logits, y)
        dh = (d_logits @ w2.T) * (h > 0)
        return [loss, x.T @ dh, dh.sum(axis=0), r.T @ d_logits, d_logits.sum(axis=0)]

    return run


def inference(d):
    """B30: relu(x w1 + b1) w2 + b2, the logits."""

    def run():
        hidden = np.maximum(d["x"] @ d["w1"] + d["b1"], np.float32(0))
        return hidden @ d["w2"] + d["b2"]

    return run


def train_step(d):
    """B9: the B2 step, then Adam on the 4 variables, in place; returns the loss and them."""
    params = [d[k].copy() for k in ("w1", "b1", "w2", "b2")]
    return _adam(params, _loss_and_grads(d["x"], d["y"], *params))


def _adam(params, grads):
    """Keras's Adam on `params`, in place, from `grads()`, which returns the loss and the
    gradients of the parameters as they are now; returns the loss and the updated parameters."""
    moments = [[np.zeros_like(p), np.zeros_like(p)] for p in params]
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


def text_and_numbers(d):
    """B28: the lines parsed, the loop, the values' text with 3 decimals (C's %.3f)."""
    lines, steps = d["lines"], d["steps"]

    def run():
        v = np.array([float(line) for line in lines])
        for _ in range(steps):
            v = 0.99 * v + 0.01 * np.sin(v)
        return [np.sum(v), float(sum(len(b"%.3f" % x) for x in v))]

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
    batch = x.shape[0]

    def run():
        h1, cols1 = _conv_same(x, w1)
        r1 = np.maximum(h1 + b1, 0)
        p1, mask1 = _pool(r1)
        h2, cols2 = _conv_same(p1, w2)
        r2 = np.maximum(h2 + b2, 0)
        p2, mask2 = _pool(r2)
        flat = p2.reshape(batch, -1)
        logits = flat @ w3 + b3
        loss, d_logits = _cross_entropy(logits, y)
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


def _depthwise_same(x, w):
    """A 3x3 SAME depthwise convolution (filters (3, 3, C, 1)) as the sum of the 9 shifted
    copies of x times their taps; the padded x is returned too, for the backward pass."""
    h, wd = x.shape[1:3]
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    out = sum(padded[:, i : i + h, j : j + wd] * w[i, j, :, 0] for i in range(3) for j in range(3))
    return out, padded


def _depthwise_same_grads(g, w, padded):
    h, wd = g.shape[1:3]
    d_w = np.zeros_like(w)
    d_padded = np.zeros_like(padded)
    for i in range(3):
        for j in range(3):
            d_w[i, j, :, 0] = np.sum(padded[:, i : i + h, j : j + wd] * g, axis=(0, 1, 2))
            d_padded[:, i : i + h, j : j + wd] += g * w[i, j, :, 0]
    return d_padded[:, 1:-1, 1:-1], d_w


def _pool_3x3_2_same(x):
    """3x3 max pooling two apart, SAME on an even side (one row and column of -inf after the
    image), and each window's first largest tap."""
    n, h, wd, c = x.shape
    padded = np.pad(x, ((0, 0), (0, 1), (0, 1), (0, 0)), constant_values=-np.inf)
    taps = np.stack(
        [padded[:, i : i + h - 1 : 2, j : j + wd - 1 : 2] for i in range(3) for j in range(3)]
    )
    first = np.argmax(taps, axis=0)
    return np.take_along_axis(taps, first[None], axis=0)[0], first


def _pool_3x3_2_same_grad(g, first, shape):
    n, h, wd, c = shape
    padded = np.zeros((n, h + 1, wd + 1, c), g.dtype)
    for k in range(9):
        i, j = divmod(k, 3)
        padded[:, i : i + h - 1 : 2, j : j + wd - 1 : 2] += np.where(first == k, g, 0)
    return padded[:, :h, :wd]


def input_pipeline(d):
    """B34: the sums of one pass's batches, which any order of the rows gives: the scaled
    features' (each batch summed in float64, as every system sums them) and the labels'."""
    x, y = d["x"], d["y"]

    def run():
        return [np.sum(x * np.float32(0.5), dtype=np.float64), np.sum(y)]

    return run


def mobile_block(d):
    """B33: the block forward, then back through it by hand (ties in the pooling's windows are
    relu's zeros, whose gradient is zero anyway)."""
    x, y = d["x"], d["y"]
    w1, b1, dw, b2, pw, b3, wd, bd = (d[k] for k in MOBILE_PARAMS)

    def run():
        h1, cols1 = _conv_same(x, w1)
        r1 = np.maximum(h1 + b1, 0)
        h2, padded2 = _depthwise_same(r1, dw)
        r2 = np.maximum(h2 + b2, 0)
        r3 = np.maximum(r2 @ pw[0, 0] + b3, 0)
        pooled, first = _pool_3x3_2_same(r3)
        features = pooled.mean(axis=(1, 2))
        logits = features @ wd + bd
        loss, d_logits = _cross_entropy(logits, y)
        d_pooled = np.broadcast_to(
            (d_logits @ wd.T)[:, None, None, :] / (pooled.shape[1] * pooled.shape[2]), pooled.shape
        )
        d_h3 = _pool_3x3_2_same_grad(d_pooled, first, r3.shape) * (r3 > 0)
        d_pw = (r2.reshape(-1, r2.shape[-1]).T @ d_h3.reshape(-1, d_h3.shape[-1]))[None, None]
        d_h2 = (d_h3 @ pw[0, 0].T) * (r2 > 0)
        d_r1, d_dw = _depthwise_same_grads(d_h2, dw, padded2)
        d_h1 = d_r1 * (r1 > 0)
        d_w1 = (cols1.T @ d_h1.reshape(-1, d_h1.shape[-1])).reshape(w1.shape)
        return [
            loss,
            d_w1,
            d_h1.sum(axis=(0, 1, 2)),
            d_dw,
            d_h2.sum(axis=(0, 1, 2)),
            d_pw,
            d_h3.sum(axis=(0, 1, 2)),
            features.T @ d_logits,
            d_logits.sum(axis=0),
        ]

    return run


def kmeans_cost(d):
    """B31: the squared distances expanded, each point's nearest, their sum."""
    points, centroids = d["points"], d["centroids"]

    def run():
        p2 = np.sum(points * points, axis=1)[:, None]
        c2 = np.sum(centroids * centroids, axis=1)[None, :]
        return [np.sum(np.min(p2 + c2 - 2.0 * points @ centroids.T, axis=1))]

    return run


def _ode_rate(x, y):
    return np.concatenate([x[:1], x[1:] * y[:-1]])


def ode(d):
    """B32: the Runge-Kutta steps, then their adjoint by hand: each stage's rate is linear
    in y, its transpose shifts the cotangent back one place and scales it by x."""
    x, steps = d["x"], d["steps"]
    h = 2.0 / steps

    def rate_vjp(y, g):  # (cotangent of y, of x) of rate(x, y)'s cotangent g
        gy = np.zeros_like(y)
        gy[:-1] = x[1:] * g[1:]
        gx = g.copy()
        gx[1:] *= y[:-1]
        return gy, gx

    def run():
        y, tape = np.zeros_like(x), []
        for _ in range(steps):
            y1 = y
            k1 = _ode_rate(x, y1)
            y2 = y + h / 2 * k1
            k2 = _ode_rate(x, y2)
            y3 = y + h / 2 * k2
            k3 = _ode_rate(x, y3)
            y4 = y + h * k3
            k4 = _ode_rate(x, y4)
            tape.append((y1, y2, y3, y4))
            y = y + h / 6 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        g, gx = np.zeros_like(x), np.zeros_like(x)
        g[-1] = 1.0
        for y1, y2, y3, y4 in reversed(tape):
            gk4 = h / 6 * g
            gy, gx4 = rate_vjp(y4, gk4)
            gk3 = h / 3 * g + h * gy
            gy3, gx3 = rate_vjp(y3, gk3)
            gk2 = h / 3 * g + h / 2 * gy3
            gy2, gx2 = rate_vjp(y2, gk2)
            gk1 = h / 6 * g + h / 2 * gy2
            gy1, gx1 = rate_vjp(y1, gk1)
            g = g + gy + gy3 + gy2 + gy1
            gx += gx1 + gx2 + gx3 + gx4
        return [y, gx]

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


def _layer_norm(x, gamma, beta):
    """Layer norm over the rows of x, and what its backward pass needs."""
    centred = x - x.mean(axis=1, keepdims=True)
    inv_std = 1 / np.sqrt((centred * centred).mean(axis=1, keepdims=True) + LAYER_NORM_EPSILON)
    normed = centred * inv_std
    return normed * gamma + beta, (normed, inv_std)


def _layer_norm_grad(g, gamma, saved):
    """The gradients of x, gamma and beta: with n = (x - mean) / std, dx is
    (dn - mean(dn) - n mean(dn n)) / std, the means over the row."""
    normed, inv_std = saved
    d_normed = g * gamma
    d_x = inv_std * (
        d_normed
        - d_normed.mean(axis=1, keepdims=True)
        - normed * (d_normed * normed).mean(axis=1, keepdims=True)
    )
    return d_x, (g * normed).sum(axis=0), g.sum(axis=0)


def _block_loss_and_grads(d, params):
    """B24's block forward on the (batch * seq, width) rows, then back through it by hand:
    the loss and the gradients of `params` (BLOCK_PARAMS' order) as they are at the call."""
    # NOTE: scipy is imported here only, so that the other workloads do not need it.
    from scipy.special import erf

    x, target, mask, heads = d["x"], d["target"], d["mask"], d["heads"]
    batch, seq, width = x.shape
    size = width // heads
    scale = 1 / math.sqrt(size)  # a Python float, so that float32 stays float32
    rows, target = x.reshape(-1, width), target.reshape(-1, width)

    def split(t):  # (batch * seq, width) -> (batch, heads, seq, size)
        return t.reshape(batch, seq, heads, size).transpose(0, 2, 1, 3)

    def merge(t):  # the inverse of split
        return t.transpose(0, 2, 1, 3).reshape(batch * seq, width)

    def swap(t):  # the last two axes' transpose
        return t.transpose(0, 1, 3, 2)

    def run():
        g1, beta1, w_qkv, b_qkv, w_o, b_o, g2, beta2, w_1, b_1, w_2, b_2 = params
        a, saved1 = _layer_norm(rows, g1, beta1)
        q, k, v = (split(t) for t in np.split(a @ w_qkv + b_qkv, 3, axis=1))
        scores = (q @ swap(k)) * scale + mask
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        p = e / e.sum(axis=-1, keepdims=True)
        attended = merge(p @ v)
        h = rows + attended @ w_o + b_o
        c, saved2 = _layer_norm(h, g2, beta2)
        u = c @ w_1 + b_1
        cdf = 0.5 * (1 + erf(u / math.sqrt(2)))
        hidden = u * cdf
        diff = h + hidden @ w_2 + b_2 - target
        loss = np.mean(diff * diff)
        d_y = diff * (2 / diff.size)
        # gelu'(u) = cdf(u) + u pdf(u)
        d_u = (d_y @ w_2.T) * (cdf + u * np.exp(-0.5 * u * u) / math.sqrt(2 * math.pi))
        d_h2, d_g2, d_beta2 = _layer_norm_grad(d_u @ w_1.T, g2, saved2)
        d_h = d_y + d_h2
        d_attended = split(d_h @ w_o.T)
        d_p = d_attended @ swap(v)
        # softmax's backward; the masked scores have p = 0, so their gradient is 0
        d_scores = p * (d_p - (d_p * p).sum(axis=-1, keepdims=True)) * scale
        d_qkv = np.concatenate(
            [merge(d_scores @ k), merge(swap(d_scores) @ q), merge(swap(p) @ d_attended)], axis=1
        )
        _, d_g1, d_beta1 = _layer_norm_grad(d_qkv @ w_qkv.T, g1, saved1)
        return [
            loss,
            d_g1,
            d_beta1,
            a.T @ d_qkv,
            d_qkv.sum(axis=0),
            attended.T @ d_h,
            d_h.sum(axis=0),
            d_g2,
            d_beta2,
            c.T @ d_u,
            d_u.sum(axis=0),
            hidden.T @ d_y,
            d_y.sum(axis=0),
        ]

    return run


def block_step(d):
    """B24: the transformer block's loss and gradients by hand, then Adam on its 12 parameters,
    in place; returns the loss and them."""
    params = [d[k].copy() for k in BLOCK_PARAMS]
    return _adam(params, _block_loss_and_grads(d, params))


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
        "B33": mobile_block,
        "B34": input_pipeline,
        "B20": gp,
        "B24": block_step,
        "B24L": block_step,
        "B28": text_and_numbers,
        "B29": train_step,  # B9's arithmetic, at B29's sizes
        "B30": inference,
        "B31": kmeans_cost,
        "B32": ode,
    }
}
