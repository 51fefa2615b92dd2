"""TensorFlow: the eager GradientTape and tf.function around it."""

import math

import numpy as np
import tensorflow as tf
from data import ADAM, BLOCK_PARAMS, LAYER_NORM_EPSILON, MOBILE_PARAMS


def chain(d):
    ops = d["ops"]

    def run():
        x = tf.constant(float(d["x"]))
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(ops // 2):
                y = tf.sin(y) * 1.01
        return tape.gradient(y, x)

    return run


def mlp(compiled):
    def build(d):
        x, y = tf.constant(d["x"]), tf.constant(d["y"])
        params = [tf.Variable(d[k]) for k in ("w1", "b1", "w2", "b2")]

        def step(x, y):
            with tf.GradientTape() as tape:
                logits = (
                    tf.matmul(tf.nn.relu(tf.matmul(x, params[0]) + params[1]), params[2])
                    + params[3]
                )
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            return [loss, *tape.gradient(loss, params)]

        run = tf.function(step) if compiled else step
        return lambda: run(x, y)

    return build


def _adam(params):
    """A hand-written Keras Adam with variable assignments: the function that updates the
    variables `params` from their gradients."""
    lr, b1, b2, eps = (ADAM[k] for k in ("learning_rate", "beta_1", "beta_2", "epsilon"))
    ms = [tf.Variable(tf.zeros_like(p)) for p in params]
    vs = [tf.Variable(tf.zeros_like(p)) for p in params]
    t = tf.Variable(0.0)

    def apply(grads):
        t.assign_add(1.0)
        rate = lr * tf.sqrt(1 - b2**t) / (1 - b1**t)
        for p, g, m, v in zip(params, grads, ms, vs):
            m.assign(b1 * m + (1 - b1) * g)
            v.assign(b2 * v + (1 - b2) * g * g)
            p.assign_sub(rate * m / (tf.sqrt(v) + eps))

    return apply


def train_step(compiled, any_batch=False):
    """B9: GradientTape and a hand-written Keras Adam with variable assignments (compiled
    for any batch size with `any_batch`: B9u)."""

    def build(d):
        x, y = tf.constant(d["x"]), tf.constant(d["y"])
        params = [tf.Variable(d[k]) for k in ("w1", "b1", "w2", "b2")]
        adam = _adam(params)

        def step(x, y):
            with tf.GradientTape() as tape:
                logits = (
                    tf.matmul(tf.nn.relu(tf.matmul(x, params[0]) + params[1]), params[2])
                    + params[3]
                )
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            adam(tape.gradient(loss, params))
            return loss

        specs = [tf.TensorSpec([None, x.shape[1]]), tf.TensorSpec([None], tf.int32)]
        run = tf.function(step, input_signature=specs if any_batch else None) if compiled else step
        return lambda: [run(x, y), *params]

    return build


def fused(compiled):
    def build(d):
        def grad(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = tf.reduce_sum(tf.sin(x) * tf.exp(-x * x) + tf.tanh(x) * x)
            return tape.gradient(y, x)

        run = tf.function(grad) if compiled else grad
        x = tf.constant(d["x"])
        return lambda: run(x)

    return build


def jacobian(compiled, batched=False):
    def build(d):
        w, b, x = (tf.constant(d[k]) for k in ("w", "b", "x"))

        def jac(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = (
                    tf.tanh(tf.matmul(x, w, transpose_b=True) + b)
                    if batched
                    else tf.tanh(tf.linalg.matvec(w, x) + b)
                )
            return tape.batch_jacobian(y, x) if batched else tape.jacobian(y, x)

        run = tf.function(jac) if compiled else jac
        return lambda: run(x)

    return build


def hessian(compiled):
    def build(d):
        def hess(x):
            with tf.GradientTape() as outer:
                outer.watch(x)
                with tf.GradientTape() as inner:
                    inner.watch(x)
                    y = tf.reduce_sum(tf.sin(x) * x**2)
                g = inner.gradient(y, x)
            return outer.jacobian(g, x)

        run = tf.function(hess) if compiled else hess
        x = tf.constant(d["x"])
        return lambda: run(x)

    return build


def scalar(compiled):
    def build(d):
        def grad(x):
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = x * x
            return tape.gradient(y, x)

        run = tf.function(grad) if compiled else grad
        x = tf.constant(d["x"])
        return lambda: run(x)

    return build


def euler(compiled):
    """B10: tf.while_loop under a GradientTape (eagerly, a Python loop on the tape)."""

    def build(d):
        x0, theta = tf.constant(d["x0"]), tf.constant(d["theta"])
        steps, dt = d["steps"], d["dt"]

        def value_and_grads(x0, theta):
            with tf.GradientTape() as tape:
                tape.watch([x0, theta])
                _, x = tf.while_loop(
                    lambda i, x: i < steps,
                    lambda i, x: (i + 1, x + dt * (tf.sin(theta * x) - 0.5 * x * x * x)),
                    (tf.constant(0), x0),
                    maximum_iterations=steps,
                )
                loss = 0.5 * tf.reduce_sum(x * x)
            return [loss, *tape.gradient(loss, [x0, theta])]

        run = tf.function(value_and_grads) if compiled else value_and_grads
        return lambda: run(x0, theta)

    return build


def hvp(compiled):
    """B12: forward over reverse, tf.autodiff.ForwardAccumulator around a tape."""

    def build(d):
        def product(x, v):
            with tf.autodiff.ForwardAccumulator(x, v) as accumulator:
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    y = tf.reduce_sum(tf.sin(x) * x**2)
                g = tape.gradient(y, x)
            return accumulator.jvp(g)

        run = tf.function(product) if compiled else product
        x, v = tf.constant(d["x"]), tf.constant(d["v"])
        return lambda: run(x, v)

    return build


def lstm(compiled, looped=False):
    """B18: a Python loop over the time steps under a GradientTape (tf.function: unrolled in
    the graph); B18w: a `for` over tf.range, which autograph makes a tf.while_loop."""

    def build(d):
        args = [tf.constant(d[k]) for k in ("main", "extra", "state", "sequence")]
        symbols = d["sequence"].shape[1]

        def layer(weight, bias, hidden, cell, x):
            gates = tf.concat([x, hidden, x, hidden], 0) * weight + bias
            forget, ingate, outgate = (
                tf.sigmoid(gates[k * symbols : (k + 1) * symbols]) for k in range(3)
            )
            cell = cell * forget + ingate * tf.tanh(gates[3 * symbols :])
            return outgate * tf.tanh(cell), cell

        def step_loss(main, extra, state, sequence, t):
            x, new_state = sequence[t] * extra[0], []
            for i in range(len(state) // 2):
                hidden, cell = layer(
                    main[2 * i], main[2 * i + 1], state[2 * i], state[2 * i + 1], x
                )
                new_state += [hidden, cell]
                x = hidden
            predicted = x * extra[1] + extra[2]
            normalized = predicted - tf.math.log(tf.reduce_sum(tf.exp(predicted)))
            return tf.reduce_sum(sequence[t + 1] * normalized), new_state

        def value_and_grads(main, extra, state, sequence):
            with tf.GradientTape() as tape:
                tape.watch([main, extra])
                total, state = tf.constant(0.0), [state[i] for i in range(state.shape[0])]
                steps = tf.range(sequence.shape[0] - 1) if looped else range(sequence.shape[0] - 1)
                for t in steps:
                    term, state = step_loss(main, extra, state, sequence, t)
                    total += term
                loss = -total / ((sequence.shape[0] - 1) * symbols)
            return [loss, *tape.gradient(loss, [main, extra])]

        run = tf.function(value_and_grads) if compiled else value_and_grads
        return lambda: run(*args)

    return build


def cnn(compiled):
    """B19: tf.nn.conv2d and tf.nn.max_pool2d (NHWC) on a GradientTape, the loss and 6
    gradients."""

    def build(d):
        x, y = tf.constant(d["x"]), tf.constant(d["y"])
        params = [tf.Variable(d[k]) for k in ("w1", "b1", "w2", "b2", "w3", "b3")]
        w1, b1, w2, b2, w3, b3 = params

        def step(x, y):
            with tf.GradientTape() as tape:
                h = tf.nn.relu(tf.nn.conv2d(x, w1, 1, "SAME") + b1)
                h = tf.nn.max_pool2d(h, 2, 2, "VALID")
                h = tf.nn.relu(tf.nn.conv2d(h, w2, 1, "SAME") + b2)
                h = tf.nn.max_pool2d(h, 2, 2, "VALID")
                logits = tf.matmul(tf.reshape(h, (h.shape[0], -1)), w3) + b3
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            return [loss, *tape.gradient(loss, params)]

        run = tf.function(step) if compiled else step
        return lambda: run(x, y)

    return build


def input_pipeline(d):
    """B34: a tf.data pipeline (its map traced by tf.data), one pass, each batch's sums."""
    dataset = (
        tf.data.Dataset.from_tensor_slices((d["x"], d["y"]))
        .shuffle(d["buffer"], seed=0)
        .map(lambda features, label: (features * 0.5, label))
        .batch(d["batch"])
    )

    def one_pass():
        total, labels = 0.0, 0
        for features, label in dataset:
            total += np.sum(features.numpy(), dtype=np.float64)
            labels += int(np.sum(label.numpy()))
        return [total, labels]

    return one_pass


def mobile_block(compiled):
    """B33: tf.nn.conv2d, depthwise_conv2d and max_pool2d (NHWC) on a tape, the loss and 8
    gradients."""

    def build(d):
        x, y = tf.constant(d["x"]), tf.constant(d["y"])
        params = [tf.Variable(d[k]) for k in MOBILE_PARAMS]
        w1, b1, dw, b2, pw, b3, wd, bd = params

        def step(x, y):
            with tf.GradientTape() as tape:
                h = tf.nn.relu(tf.nn.conv2d(x, w1, 1, "SAME") + b1)
                h = tf.nn.relu(tf.nn.depthwise_conv2d(h, dw, [1, 1, 1, 1], "SAME") + b2)
                h = tf.nn.relu(tf.nn.conv2d(h, pw, 1, "SAME") + b3)
                h = tf.reduce_mean(tf.nn.max_pool2d(h, 3, 2, "SAME"), axis=[1, 2])
                logits = tf.matmul(h, wd) + bd
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            return [loss, *tape.gradient(loss, params)]

        run = tf.function(step) if compiled else step
        return lambda: run(x, y)

    return build


def kmeans_cost(compiled):
    """B31: the k-means cost from tf.matmul and tf.reduce_min (float64)."""

    def build(d):
        points, centroids = tf.constant(d["points"]), tf.constant(d["centroids"])

        def cost(points, centroids):
            p2 = tf.reduce_sum(points * points, axis=1)[:, None]
            c2 = tf.reduce_sum(centroids * centroids, axis=1)[None, :]
            products = tf.matmul(points, centroids, transpose_b=True)
            return [tf.reduce_sum(tf.reduce_min(p2 + c2 - 2.0 * products, axis=1))]

        run = tf.function(cost) if compiled else cost
        return lambda: run(points, centroids)

    return build


def ode(compiled):
    """B32: tf.while_loop over the Runge-Kutta steps on a GradientTape, the last component's
    gradient (float64)."""

    def build(d):
        x, steps = tf.constant(d["x"]), d["steps"]
        h = 2.0 / steps

        def rate(x, y):
            return tf.concat([x[:1], x[1:] * y[:-1]], 0)

        def both(x):
            def step(i, y):
                k1 = rate(x, y)
                k2 = rate(x, y + h / 2 * k1)
                k3 = rate(x, y + h / 2 * k2)
                k4 = rate(x, y + h * k3)
                return i + 1, y + h / 6 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

            with tf.GradientTape() as tape:
                tape.watch(x)
                start = (tf.constant(0), tf.zeros_like(x))
                _, y = tf.while_loop(lambda i, y: i < steps, step, start, maximum_iterations=steps)
                last = y[-1]
            return [y, tape.gradient(last, x)]

        run = tf.function(both) if compiled else both
        return lambda: run(x)

    return build


def gp(compiled):
    """B20: tf.linalg.cholesky and tf.linalg.cholesky_solve on a GradientTape (float64)."""

    def build(d):
        x, y, params = tf.constant(d["x"]), tf.constant(d["y"][:, None]), tf.constant(d["params"])
        n = d["x"].shape[0]
        eye = tf.eye(n, dtype=tf.float64)
        offset = 0.5 * n * np.log(2 * np.pi)

        def value_and_grad(params, x, y):
            squared = tf.square(x[:, None] - x[None, :])
            with tf.GradientTape() as tape:
                tape.watch(params)
                kernel = tf.exp(params[1]) * tf.exp(-squared / (2 * tf.exp(2 * params[0])))
                chol = tf.linalg.cholesky(kernel + tf.exp(params[2]) * eye)
                alpha = tf.linalg.cholesky_solve(chol, y)
                nll = (
                    0.5 * tf.reduce_sum(y * alpha)
                    + tf.reduce_sum(tf.math.log(tf.linalg.diag_part(chol)))
                    + offset
                )
            return [nll, tape.gradient(nll, params)]

        run = tf.function(value_and_grad) if compiled else value_and_grad
        return lambda: run(params, x, y)

    return build


def block_step(compiled):
    """B24: the transformer block on a GradientTape (layer norm from tf.reduce_mean,
    tf.nn.softmax, tf.nn.gelu) and the B9 Adam on its 12 variables."""

    def build(d):
        x, target, mask = (tf.constant(d[k]) for k in ("x", "target", "mask"))
        params = [tf.Variable(d[k]) for k in BLOCK_PARAMS]
        g1, beta1, w_qkv, b_qkv, w_o, b_o, g2, beta2, w_1, b_1, w_2, b_2 = params
        adam = _adam(params)
        batch, seq, width = d["x"].shape
        heads = d["heads"]
        size = width // heads

        def layer_norm(x, gamma, beta):
            mean = tf.reduce_mean(x, axis=-1, keepdims=True)
            variance = tf.reduce_mean(tf.square(x - mean), axis=-1, keepdims=True)
            return (x - mean) * tf.math.rsqrt(variance + LAYER_NORM_EPSILON) * gamma + beta

        def split_heads(t):  # (batch * seq, width) -> (batch, heads, seq, size)
            return tf.transpose(tf.reshape(t, (batch, seq, heads, size)), (0, 2, 1, 3))

        def step(x, target, mask):
            with tf.GradientTape() as tape:
                rows = tf.reshape(x, (batch * seq, width))
                qkv = tf.matmul(layer_norm(rows, g1, beta1), w_qkv) + b_qkv
                q, k, v = (split_heads(t) for t in tf.split(qkv, 3, axis=1))
                scores = tf.matmul(q, k, transpose_b=True) * (1 / math.sqrt(size)) + mask
                attended = tf.matmul(tf.nn.softmax(scores, axis=-1), v)
                attended = tf.reshape(tf.transpose(attended, (0, 2, 1, 3)), (batch * seq, width))
                h = rows + tf.matmul(attended, w_o) + b_o
                u = tf.matmul(layer_norm(h, g2, beta2), w_1) + b_1
                y = h + tf.matmul(tf.nn.gelu(u, approximate=False), w_2) + b_2
                loss = tf.reduce_mean(tf.square(y - tf.reshape(target, (batch * seq, width))))
            adam(tape.gradient(loss, params))
            return loss

        run = tf.function(step) if compiled else step
        return lambda: [run(x, target, mask), *params]

    return build


def _sequential(d, x):
    """B29's and B30's model: a Sequential of two Dense layers, built on `x`, with the data's
    weights."""
    layers = tf.keras.layers
    model = tf.keras.Sequential(
        [layers.Dense(d["w1"].shape[1], activation="relu"), layers.Dense(d["w2"].shape[1])]
    )
    model(x)
    model.set_weights([d[k] for k in ("w1", "b1", "w2", "b2")])
    return model


def keras_inference(compiled):
    """B30: B29's tf.keras Sequential called on the batch outside any tape: its logits."""

    def build(d):
        x = tf.constant(d["x"])
        model = _sequential(d, x)
        run = tf.function(lambda x: model(x)) if compiled else model
        return lambda: run(x)

    return build


def keras_step(compiled):
    """B29: B9's step with tf.keras's Sequential, loss and Adam (eager, or a tf.function)."""

    def build(d):
        x, y = tf.constant(d["x"]), tf.constant(d["y"])
        model = _sequential(d, x)
        optimizer = tf.keras.optimizers.Adam(**ADAM)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def step(x, y):
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        run = tf.function(step) if compiled else step
        return lambda: [run(x, y), *model.trainable_variables]

    return build


def to_numpy(value):
    if isinstance(value, (list, tuple)):
        return [to_numpy(v) for v in value]
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)


def text_and_numbers(compiled):
    """B28: tf.strings.to_number, a tf.while_loop, tf.strings.as_string and length."""

    def build(d):
        lines, steps = tf.constant(d["lines"]), d["steps"]

        def parse_loop_write(lines):
            def step(i, v):
                return i + 1, 0.99 * v + 0.01 * tf.sin(v)

            values = tf.strings.to_number(lines, tf.float64)
            _, values = tf.while_loop(lambda i, v: i < steps, step, (0, values))
            text = tf.strings.as_string(values, precision=3)
            return [
                tf.reduce_sum(values),
                tf.cast(tf.reduce_sum(tf.strings.length(text)), tf.float64),
            ]

        run = tf.function(parse_loop_write) if compiled else parse_loop_write
        return lambda: run(lines)

    return build


def _for(compiled):
    table = {
        "B2": mlp(compiled),
        "B3": fused(compiled),
        "B4": jacobian(compiled),
        "B4b": jacobian(compiled, True),
        "B5": hessian(compiled),
        "B7": scalar(compiled),
        "B9": train_step(compiled),
        "B9b": train_step(compiled),
        "B10": euler(compiled),
        "B12": hvp(compiled),
        "B18": lstm(compiled),
        "B19": cnn(compiled),
        "B33": mobile_block(compiled),
        "B20": gp(compiled),
        "B31": kmeans_cost(compiled),
        "B32": ode(compiled),
        "B24": block_step(compiled),
        "B24L": block_step(compiled),
        "B28": text_and_numbers(compiled),
        "B29": keras_step(compiled),
        "B30": keras_inference(compiled),
    }
    if compiled:
        table["B9u"] = train_step(compiled, any_batch=True)
        table["B18w"] = lstm(compiled, looped=True)
        table["B34"] = input_pipeline
    if not compiled:
        table["B1"] = chain
    return table


BUILDERS = {"tf-eager": _for(False), "tf-function": _for(True)}
