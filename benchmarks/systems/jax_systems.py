"""JAX, with jax.jit around grad, jacrev and hessian (float32 on the CPU)."""

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from data import ADAM, BLOCK_PARAMS, LAYER_NORM_EPSILON, MOBILE_PARAMS


def mlp(d):
    args = [jnp.asarray(d[k]) for k in ("w1", "b1", "w2", "b2")]
    x, y = jnp.asarray(d["x"]), jnp.asarray(d["y"])

    def loss(params, x, y):
        w1, b1, w2, b2 = params
        logits = jax.nn.relu(x @ w1 + b1) @ w2 + b2
        return jnp.mean(
            jax.nn.logsumexp(logits, axis=1) - jnp.take_along_axis(logits, y[:, None], axis=1)[:, 0]
        )

    step = jax.jit(jax.value_and_grad(loss))

    def run():
        value, grads = step(args, x, y)
        return [value, *grads]

    return run


def _adam(params, ms, vs, t, grads):
    """A hand-written Keras Adam step: the new parameters, moments and step count."""
    lr, b1, b2, eps = (ADAM[k] for k in ("learning_rate", "beta_1", "beta_2", "epsilon"))
    t = t + 1
    rate = lr * jnp.sqrt(1 - b2**t) / (1 - b1**t)
    ms = [b1 * m + (1 - b1) * g for m, g in zip(ms, grads)]
    vs = [b2 * v + (1 - b2) * g * g for v, g in zip(vs, grads)]
    params = [p - rate * m / (jnp.sqrt(v) + eps) for p, m, v in zip(params, ms, vs)]
    return params, ms, vs, t


def train_step(d):
    """B9: value_and_grad and a hand-written Keras Adam in one jax.jit, the old state donated."""
    x, y = jnp.asarray(d["x"]), jnp.asarray(d["y"])
    params = [jnp.asarray(d[k]) for k in ("w1", "b1", "w2", "b2")]
    state = [params, [jnp.zeros_like(p) for p in params], [jnp.zeros_like(p) for p in params], 0]

    def loss(params, x, y):
        w1, b1_, w2, b2_ = params
        logits = jax.nn.relu(x @ w1 + b1_) @ w2 + b2_
        return jnp.mean(
            jax.nn.logsumexp(logits, axis=1) - jnp.take_along_axis(logits, y[:, None], axis=1)[:, 0]
        )

    @functools.partial(jax.jit, donate_argnums=(0, 1, 2))
    def step(params, ms, vs, t, x, y):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        return value, *_adam(params, ms, vs, t, grads)

    def run():
        value, *state[:] = step(*state, x, y)
        return [value, *state[0]]

    return run


def fused(d):
    x = jnp.asarray(d["x"])
    grad = jax.jit(jax.grad(lambda v: jnp.sum(jnp.sin(v) * jnp.exp(-v * v) + jnp.tanh(v) * v)))
    return lambda: grad(x)


def jacobian(batched):
    def build(d):
        w, b, x = (jnp.asarray(d[k]) for k in ("w", "b", "x"))

        def f(v):
            return jnp.tanh(w @ v + b)

        run = jax.jit(jax.vmap(jax.jacrev(f)) if batched else jax.jacrev(f))
        return lambda: run(x)

    return build


def hessian(d):
    x = jnp.asarray(d["x"])
    run = jax.jit(jax.hessian(lambda v: jnp.sum(jnp.sin(v) * v**2)))
    return lambda: run(x)


def scalar(d):
    run = jax.jit(jax.grad(lambda v: v * v))
    x = jnp.float32(d["x"])
    return lambda: run(x)


def euler(d):
    """B10: lax.fori_loop (a scan, with a static trip count) under value_and_grad, jitted."""
    x0, theta, steps, dt = jnp.asarray(d["x0"]), jnp.asarray(d["theta"]), d["steps"], d["dt"]

    def loss(x0, theta):
        step = lambda i, x: x + dt * (jnp.sin(theta * x) - 0.5 * x * x * x)  # noqa: E731
        x = jax.lax.fori_loop(0, steps, step, x0)
        return 0.5 * jnp.sum(x * x)

    run = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))

    def call():
        value, grads = run(x0, theta)
        return [value, *grads]

    return call


def hvp(d):
    """B12: jax.jit(jax.jvp of jax.grad), forward over reverse."""
    x, v = jnp.asarray(d["x"]), jnp.asarray(d["v"])
    grad = jax.grad(lambda u: jnp.sum(jnp.sin(u) * u**2))
    run = jax.jit(lambda x, v: jax.jvp(grad, (x,), (v,))[1])
    return lambda: run(x, v)


def lstm(looped):
    """B18: jax.jit of value_and_grad with the Python loop over time steps (unrolled in the
    trace); B18w: the time steps a lax.scan."""

    def build(d):
        args = [jnp.asarray(d[k]) for k in ("main", "extra", "state", "sequence")]
        symbols = d["sequence"].shape[1]

        def layer(weight, bias, hidden, cell, x):
            gates = jnp.concatenate([x, hidden, x, hidden]) * weight + bias
            forget, ingate, outgate = (
                jax.nn.sigmoid(gates[k * symbols : (k + 1) * symbols]) for k in range(3)
            )
            cell = cell * forget + ingate * jnp.tanh(gates[3 * symbols :])
            return outgate * jnp.tanh(cell), cell

        def step_loss(main, extra, state, x, target):
            x, new_state = x * extra[0], []
            for i in range(state.shape[0] // 2):
                hidden, cell = layer(
                    main[2 * i], main[2 * i + 1], state[2 * i], state[2 * i + 1], x
                )
                new_state += [hidden, cell]
                x = hidden
            predicted = x * extra[1] + extra[2]
            normalized = predicted - jnp.log(jnp.sum(jnp.exp(predicted)))
            return jnp.sum(target * normalized), jnp.stack(new_state)

        def objective(main, extra, state, sequence):
            total = 0.0
            if looped:

                def scanned(state, pair):
                    term, state = step_loss(main, extra, state, *pair)
                    return state, term

                _, terms = jax.lax.scan(scanned, state, (sequence[:-1], sequence[1:]))
                total = jnp.sum(terms)
            else:
                for t in range(sequence.shape[0] - 1):
                    term, state = step_loss(main, extra, state, sequence[t], sequence[t + 1])
                    total += term
            return -total / ((sequence.shape[0] - 1) * symbols)

        run = jax.jit(jax.value_and_grad(objective, argnums=(0, 1)))

        def call():
            value, grads = run(*args)
            return [value, *grads]

        return call

    return build


def cnn(d):
    """B19: lax.conv_general_dilated and lax.reduce_window (NHWC), value_and_grad, jitted."""
    x, y = jnp.asarray(d["x"]), jnp.asarray(d["y"])
    params = [jnp.asarray(d[k]) for k in ("w1", "b1", "w2", "b2", "w3", "b3")]
    numbers = ("NHWC", "HWIO", "NHWC")

    def pool(h):
        return jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def loss(params, x, y):
        w1, b1, w2, b2, w3, b3 = params
        h = jax.lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=numbers)
        h = pool(jax.nn.relu(h + b1))
        h = jax.lax.conv_general_dilated(h, w2, (1, 1), "SAME", dimension_numbers=numbers)
        h = pool(jax.nn.relu(h + b2))
        logits = h.reshape(h.shape[0], -1) @ w3 + b3
        return jnp.mean(
            jax.nn.logsumexp(logits, axis=1) - jnp.take_along_axis(logits, y[:, None], axis=1)[:, 0]
        )

    step = jax.jit(jax.value_and_grad(loss))

    def run():
        value, grads = step(params, x, y)
        return [value, *grads]

    return run


def mobile_block(d):
    """B33: lax.conv_general_dilated (the depthwise one with a feature group a channel) and
    lax.reduce_window (NHWC), value_and_grad, jitted."""
    x, y = jnp.asarray(d["x"]), jnp.asarray(d["y"])
    params = [jnp.asarray(d[k]) for k in MOBILE_PARAMS]
    numbers = ("NHWC", "HWIO", "NHWC")
    channels = d["dw"].shape[2]

    def loss(params, x, y):
        w1, b1, dw, b2, pw, b3, wd, bd = params
        h = jax.lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=numbers)
        h = jax.nn.relu(h + b1)
        h = jax.lax.conv_general_dilated(
            h,
            dw.reshape(3, 3, 1, channels),
            (1, 1),
            "SAME",
            dimension_numbers=numbers,
            feature_group_count=channels,
        )
        h = jax.nn.relu(h + b2)
        h = jax.lax.conv_general_dilated(h, pw, (1, 1), "SAME", dimension_numbers=numbers)
        h = jax.nn.relu(h + b3)
        h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        logits = jnp.mean(h, axis=(1, 2)) @ wd + bd
        return jnp.mean(
            jax.nn.logsumexp(logits, axis=1) - jnp.take_along_axis(logits, y[:, None], axis=1)[:, 0]
        )

    step = jax.jit(jax.value_and_grad(loss))

    def run():
        value, grads = step(params, x, y)
        return [value, *grads]

    return run


def kmeans_cost(d):
    """B31: the k-means cost, jitted, in float64."""
    jax.config.update("jax_enable_x64", True)
    points, centroids = (jnp.asarray(d[k], jnp.float64) for k in ("points", "centroids"))

    @jax.jit
    def cost(points, centroids):
        p2 = jnp.sum(points * points, axis=1)[:, None]
        c2 = jnp.sum(centroids * centroids, axis=1)[None, :]
        return jnp.sum(jnp.min(p2 + c2 - 2.0 * points @ centroids.T, axis=1))

    return lambda: [cost(points, centroids)]


def ode(d):
    """B32: lax.fori_loop over the Runge-Kutta steps, jax.grad of the last component, both
    in one jitted function (float64)."""
    jax.config.update("jax_enable_x64", True)
    x, steps = jnp.asarray(d["x"], jnp.float64), d["steps"]
    h = 2.0 / steps

    def rate(x, y):
        return jnp.concatenate([x[:1], x[1:] * y[:-1]])

    def solve(x):
        def step(_, y):
            k1 = rate(x, y)
            k2 = rate(x, y + h / 2 * k1)
            k3 = rate(x, y + h / 2 * k2)
            k4 = rate(x, y + h * k3)
            return y + h / 6 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

        return jax.lax.fori_loop(0, steps, step, jnp.zeros_like(x))

    both = jax.jit(lambda x: (solve(x), jax.grad(lambda x: solve(x)[-1])(x)))
    return lambda: list(both(x))


def gp(d):
    """B20: jnp.linalg.cholesky and jax.scipy.linalg.cho_solve under value_and_grad, jitted,
    in float64 (x64 is switched on here only: the other workloads stay float32)."""
    jax.config.update("jax_enable_x64", True)
    x, y, params = (jnp.asarray(d[k], jnp.float64) for k in ("x", "y", "params"))
    n = x.shape[0]

    def nll(params, x, y):
        squared = (x[:, None] - x[None, :]) ** 2
        kernel = jnp.exp(params[1]) * jnp.exp(-squared / (2 * jnp.exp(2 * params[0])))
        chol = jnp.linalg.cholesky(kernel + jnp.exp(params[2]) * jnp.eye(n))
        alpha = jax.scipy.linalg.cho_solve((chol, True), y)
        return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(chol))) + 0.5 * n * np.log(2 * np.pi)

    step = jax.jit(jax.value_and_grad(nll))

    def run():
        return list(step(params, x, y))

    return run


def block_step(d):
    """B24: the transformer block (layer norm from jnp.mean, jax.nn.softmax, jax.nn.gelu),
    value_and_grad and the B9 Adam in one jax.jit, the old state donated."""
    x, target, mask = (jnp.asarray(d[k]) for k in ("x", "target", "mask"))
    heads = d["heads"]
    params = [jnp.asarray(d[k]) for k in BLOCK_PARAMS]
    state = [params, [jnp.zeros_like(p) for p in params], [jnp.zeros_like(p) for p in params], 0]

    def layer_norm(x, gamma, beta):
        mean = jnp.mean(x, axis=-1, keepdims=True)
        variance = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
        return (x - mean) * jax.lax.rsqrt(variance + LAYER_NORM_EPSILON) * gamma + beta

    def loss(params, x, target, mask):
        g1, beta1, w_qkv, b_qkv, w_o, b_o, g2, beta2, w_1, b_1, w_2, b_2 = params
        batch, seq, width = x.shape
        size = width // heads

        def split_heads(t):  # (batch * seq, width) -> (batch, heads, seq, size)
            return t.reshape(batch, seq, heads, size).transpose(0, 2, 1, 3)

        rows = x.reshape(batch * seq, width)
        qkv = layer_norm(rows, g1, beta1) @ w_qkv + b_qkv
        q, k, v = (split_heads(t) for t in jnp.split(qkv, 3, axis=1))
        scores = q @ k.transpose(0, 1, 3, 2) * (1 / math.sqrt(size)) + mask
        attended = jax.nn.softmax(scores, axis=-1) @ v
        attended = attended.transpose(0, 2, 1, 3).reshape(batch * seq, width)
        h = rows + attended @ w_o + b_o
        u = layer_norm(h, g2, beta2) @ w_1 + b_1
        y = h + jax.nn.gelu(u, approximate=False) @ w_2 + b_2
        return jnp.mean(jnp.square(y - target.reshape(batch * seq, width)))

    @functools.partial(jax.jit, donate_argnums=(0, 1, 2))
    def step(params, ms, vs, t, x, target, mask):
        value, grads = jax.value_and_grad(loss)(params, x, target, mask)
        return value, *_adam(params, ms, vs, t, grads)

    def run():
        value, *state[:] = step(*state, x, target, mask)
        return [value, *state[0]]

    return run


def to_numpy(value):
    if isinstance(value, (list, tuple)):
        return [to_numpy(v) for v in value]
    return np.asarray(jax.block_until_ready(value))


BUILDERS = {
    "jax-jit": {
        "B2": mlp,
        "B3": fused,
        "B4": jacobian(False),
        "B4b": jacobian(True),
        "B5": hessian,
        "B7": scalar,
        "B9": train_step,
        "B9b": train_step,
        "B10": euler,
        "B12": hvp,
        "B18": lstm(looped=False),
        "B18w": lstm(looped=True),
        "B19": cnn,
        "B33": mobile_block,
        "B20": gp,
        "B31": kmeans_cost,
        "B32": ode,
        "B24": block_step,
        "B24L": block_step,
    }
}
