"""tracer, eager (GradientTape on numpy) and compiled (tt.function)."""

import math

import numpy as np
from data import ADAM, BLOCK_PARAMS, LAYER_NORM_EPSILON, MOBILE_PARAMS

import tracer as tt


def chain(compiled):
    def build(d):
        ops = d["ops"]

        def grad(x):
            with tt.GradientTape() as tape:
                tape.watch(x)
                y = x
                for _ in range(ops // 2):
                    y = tt.sin(y) * 1.01
            return tape.gradient(y, x)

        step = tt.function(grad) if compiled else grad
        x = tt.constant(d["x"])
        return lambda: step(x)

    return build


def mlp(compiled):
    def build(d):
        x, y = tt.constant(d["x"]), tt.constant(d["y"])
        params = [tt.Variable(d[k]) for k in ("w1", "b1", "w2", "b2")]
        w1, b1, w2, b2 = params

        def step(x, y):
            with tt.GradientTape() as tape:
                logits = tt.matmul(tt.nn.relu(tt.matmul(x, w1) + b1), w2) + b2
                loss = tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            return [loss, *tape.gradient(loss, params)]

        run = tt.function(step) if compiled else step
        return lambda: run(x, y)

    return build


def train_step(compiled, any_batch=False):
    """B9: the B2 step and tt.optimizers.Adam, eager or as one compiled step (for any batch
    size with `any_batch`: B9u)."""

    def build(d):
        x, y = tt.constant(d["x"]), tt.constant(d["y"])
        params = [tt.Variable(d[k]) for k in ("w1", "b1", "w2", "b2")]
        w1, b1, w2, b2 = params
        optimizer = tt.optimizers.Adam(**ADAM)

        def step(x, y):
            with tt.GradientTape() as tape:
                logits = tt.matmul(tt.nn.relu(tt.matmul(x, w1) + b1), w2) + b2
                loss = tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            optimizer.apply_gradients(zip(tape.gradient(loss, params), params))
            return loss

        specs = [tt.TensorSpec([None, x.shape[1]]), tt.TensorSpec([None], tt.int32)]
        run = tt.function(step, input_signature=specs if any_batch else None) if compiled else step
        return lambda: [run(x, y), *params]

    return build


def _sequential(d, x):
    """B29's and B30's model: a Sequential of two Dense layers, built on `x`, with the data's
    weights."""
    layers = tt.keras.layers
    model = tt.keras.Sequential(
        [layers.Dense(d["w1"].shape[1], activation="relu"), layers.Dense(d["w2"].shape[1])]
    )
    model(x)
    model.set_weights([d[k] for k in ("w1", "b1", "w2", "b2")])
    return model


def keras_step(compiled):
    """B29: B9's step as a Keras user writes it: a Sequential of two Dense layers, Keras's
    loss and Adam, the variables from `trainable_variables` (eager, or the step compiled)."""

    def build(d):
        x, y = tt.constant(d["x"]), tt.constant(d["y"])
        model = _sequential(d, x)
        optimizer = tt.keras.optimizers.Adam(**ADAM)
        loss_fn = tt.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def step(x, y):
            with tt.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        run = tt.function(step) if compiled else step
        return lambda: [run(x, y), *model.trainable_variables]

    return build


def keras_inference(compiled):
    """B30: B29's Sequential called on the batch outside any tape: its logits (eager, or the
    call compiled)."""

    def build(d):
        x = tt.constant(d["x"])
        model = _sequential(d, x)
        run = tt.function(lambda x: model(x)) if compiled else model
        return lambda: run(x)

    return build


def fused(compiled):
    def build(d):
        def grad(x):
            with tt.GradientTape() as tape:
                tape.watch(x)
                y = tt.reduce_sum(tt.sin(x) * tt.exp(-x * x) + tt.tanh(x) * x)
            return tape.gradient(y, x)

        run = tt.function(grad) if compiled else grad
        x = tt.constant(d["x"])
        return lambda: run(x)

    return build


def jacobian(compiled, batched=False):
    def build(d):
        w, b, x = (tt.constant(d[k]) for k in ("w", "b", "x"))

        def jac(w, b, x):
            with tt.GradientTape() as tape:
                tape.watch(x)
                if batched:
                    y = tt.tanh(tt.matmul(x, w, transpose_b=True) + b)
                else:
                    y = tt.tanh(tt.matmul(w, x[:, None])[:, 0] + b)
            return tape.batch_jacobian(y, x) if batched else tape.jacobian(y, x)

        run = tt.function(jac) if compiled else jac
        return lambda: run(w, b, x)

    return build


def hessian(compiled):
    def build(d):
        def hess(x):
            with tt.GradientTape() as outer:
                outer.watch(x)
                with tt.GradientTape() as inner:
                    inner.watch(x)
                    y = tt.reduce_sum(tt.sin(x) * x**2)
                g = inner.gradient(y, x)
            return outer.jacobian(g, x)

        run = tt.function(hess) if compiled else hess
        x = tt.constant(d["x"])
        return lambda: run(x)

    return build


def scalar_grad(compiled):
    def build(d):
        run = tt.grad(lambda x: x * x)
        run = tt.function(run) if compiled else run
        x = tt.constant(d["x"])
        return lambda: run(x)

    return build


def euler(compiled):
    """B10: tt.while_loop, eagerly a Python loop on the tape, compiled one loop in C."""

    def build(d):
        steps, dt = d["steps"], d["dt"]
        x0, theta = tt.constant(d["x0"]), tt.constant(d["theta"])

        def value_and_grads(x0, theta):
            with tt.GradientTape() as tape:
                tape.watch([x0, theta])
                _, x = tt.while_loop(
                    lambda i, x: i < steps,
                    lambda i, x: (i + 1, x + dt * (tt.sin(theta * x) - 0.5 * x * x * x)),
                    (0, x0),
                    maximum_iterations=steps,
                )
                loss = 0.5 * tt.reduce_sum(x * x)
            return [loss, *tape.gradient(loss, [x0, theta])]

        run = tt.function(value_and_grads) if compiled else value_and_grads
        return lambda: run(x0, theta)

    return build


def hvp(compiled):
    """B12: forward over reverse, a ForwardAccumulator around a tape."""

    def build(d):
        def product(x, v):
            with tt.autodiff.ForwardAccumulator(x, v) as accumulator:
                with tt.GradientTape() as tape:
                    tape.watch(x)
                    y = tt.reduce_sum(tt.sin(x) * x**2)
                g = tape.gradient(y, x)
            return accumulator.jvp(g)

        run = tt.function(product) if compiled else product
        x, v = tt.constant(d["x"]), tt.constant(d["v"])
        return lambda: run(x, v)

    return build


def lstm(compiled, looped=False):
    """B18: the objective as a Python loop over the time steps on a tape (compiled, the loop
    unrolled); B18w (`looped`): a `for` over tt.range, one loop in the compiled program."""

    def build(d):
        args = [tt.constant(d[k]) for k in ("main", "extra", "state", "sequence")]
        symbols = d["sequence"].shape[1]

        def layer(weight, bias, hidden, cell, x):
            gates = tt.concat([x, hidden, x, hidden], 0) * weight + bias
            forget, ingate, outgate = (
                tt.sigmoid(gates[k * symbols : (k + 1) * symbols]) for k in range(3)
            )
            cell = cell * forget + ingate * tt.tanh(gates[3 * symbols :])
            return outgate * tt.tanh(cell), cell

        def predict(main, extra, state, x):
            x, new_state = x * extra[0], []
            for i in range(len(state) // 2):
                hidden, cell = layer(
                    main[2 * i], main[2 * i + 1], state[2 * i], state[2 * i + 1], x
                )
                new_state += [hidden, cell]
                x = hidden
            return x * extra[1] + extra[2], new_state

        def step_loss(main, extra, state, sequence, t):
            predicted, state = predict(main, extra, state, sequence[t])
            normalized = predicted - tt.math.log(tt.reduce_sum(tt.exp(predicted)))
            return tt.reduce_sum(sequence[t + 1] * normalized), state

        def value_and_grads(main, extra, state, sequence):
            with tt.GradientTape() as tape:
                tape.watch([main, extra])
                total, state = tt.constant(0.0), [state[i] for i in range(state.shape[0])]
                for t in range(sequence.shape[0] - 1):
                    term, state = step_loss(main, extra, state, sequence, t)
                    total += term
                loss = -total / ((sequence.shape[0] - 1) * symbols)
            return [loss, *tape.gradient(loss, [main, extra])]

        def value_and_grads_looped(main, extra, state, sequence):
            with tt.GradientTape() as tape:
                tape.watch([main, extra])
                total, state = tt.constant(0.0), [state[i] for i in range(state.shape[0])]
                for t in tt.range(sequence.shape[0] - 1):
                    term, state = step_loss(main, extra, state, sequence, t)
                    total += term
                loss = -total / ((sequence.shape[0] - 1) * symbols)
            return [loss, *tape.gradient(loss, [main, extra])]

        if looped:
            run = tt.function(value_and_grads_looped)
        else:
            run = tt.function(value_and_grads) if compiled else value_and_grads
        return lambda: run(*args)

    return build


def cnn(compiled):
    """B19: tt.nn.conv2d and tt.nn.max_pool2d (NHWC) on a tape, the loss and 6 gradients."""

    def build(d):
        x, y = tt.constant(d["x"]), tt.constant(d["y"])
        params = [tt.Variable(d[k]) for k in ("w1", "b1", "w2", "b2", "w3", "b3")]
        w1, b1, w2, b2, w3, b3 = params

        def step(x, y):
            with tt.GradientTape() as tape:
                h = tt.nn.relu(tt.nn.conv2d(x, w1, 1, "SAME") + b1)
                h = tt.nn.max_pool2d(h, 2, 2, "VALID")
                h = tt.nn.relu(tt.nn.conv2d(h, w2, 1, "SAME") + b2)
                h = tt.nn.max_pool2d(h, 2, 2, "VALID")
                logits = tt.matmul(tt.reshape(h, (h.shape[0], -1)), w3) + b3
                loss = tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            return [loss, *tape.gradient(loss, params)]

        run = tt.function(step) if compiled else step
        return lambda: run(x, y)

    return build


def gp(compiled):
    """B20: the GP's negative log marginal likelihood through tt.linalg.cholesky and
    cholesky_solve, and its gradient w.r.t. the 3 log hyperparameters (float64)."""

    def build(d):
        x, y = tt.constant(d["x"]), tt.constant(d["y"][:, None])
        params = tt.constant(d["params"])
        n = d["x"].shape[0]
        eye = tt.constant(np.eye(n))
        offset = 0.5 * n * np.log(2 * np.pi)

        def value_and_grad(params, x, y):
            squared = tt.square(x[:, None] - x[None, :])
            with tt.GradientTape() as tape:
                tape.watch(params)
                lengthscale2, signal, noise = (
                    tt.exp(2 * params[0]),
                    tt.exp(params[1]),
                    tt.exp(params[2]),
                )
                kernel = signal * tt.exp(-squared / (2 * lengthscale2)) + noise * eye
                chol = tt.linalg.cholesky(kernel)
                alpha = tt.linalg.cholesky_solve(chol, y)
                nll = (
                    0.5 * tt.reduce_sum(y * alpha)
                    + tt.reduce_sum(tt.math.log(tt.linalg.diag_part(chol)))
                    + offset
                )
            return [nll, tape.gradient(nll, params)]

        run = tt.function(value_and_grad) if compiled else value_and_grad
        return lambda: run(params, x, y)

    return build


def block_step(compiled):
    """B24: the transformer block on a tape (layer norm from tt.reduce_mean, tt.nn.softmax,
    tt.nn.gelu) and tt.optimizers.Adam on its 12 variables, eager or as one compiled step.
    The dense layers work on the (batch * seq, width) rows; the heads are a reshape and a
    transpose, and Q, K and V are slices of one dense layer's output (tracer has no tt.split)."""

    def build(d):
        x, target, mask = (tt.constant(d[k]) for k in ("x", "target", "mask"))
        params = [tt.Variable(d[k]) for k in BLOCK_PARAMS]
        g1, beta1, w_qkv, b_qkv, w_o, b_o, g2, beta2, w_1, b_1, w_2, b_2 = params
        batch, seq, width = d["x"].shape
        heads = d["heads"]
        size = width // heads
        optimizer = tt.optimizers.Adam(**ADAM)

        def layer_norm(x, gamma, beta):
            mean = tt.reduce_mean(x, axis=-1, keepdims=True)
            variance = tt.reduce_mean(tt.square(x - mean), axis=-1, keepdims=True)
            return (x - mean) * tt.math.rsqrt(variance + LAYER_NORM_EPSILON) * gamma + beta

        def split_heads(t):  # (batch * seq, width) -> (batch, heads, seq, size)
            return tt.transpose(tt.reshape(t, (batch, seq, heads, size)), (0, 2, 1, 3))

        def step(x, target, mask):
            with tt.GradientTape() as tape:
                rows = tt.reshape(x, (batch * seq, width))
                qkv = tt.matmul(layer_norm(rows, g1, beta1), w_qkv) + b_qkv
                q, k, v = (split_heads(qkv[:, i * width : (i + 1) * width]) for i in range(3))
                scores = tt.matmul(q, k, transpose_b=True) * (1 / math.sqrt(size)) + mask
                attended = tt.matmul(tt.nn.softmax(scores, axis=-1), v)
                attended = tt.reshape(tt.transpose(attended, (0, 2, 1, 3)), (batch * seq, width))
                h = rows + tt.matmul(attended, w_o) + b_o
                u = tt.matmul(layer_norm(h, g2, beta2), w_1) + b_1
                y = h + tt.matmul(tt.nn.gelu(u, approximate=False), w_2) + b_2
                loss = tt.reduce_mean(tt.square(y - tt.reshape(target, (batch * seq, width))))
            optimizer.apply_gradients(zip(tape.gradient(loss, params), params))
            return loss

        run = tt.function(step) if compiled else step
        return lambda: [run(x, target, mask), *params]

    return build


def mobile_block(compiled):
    """B33: tt.nn.conv2d, depthwise_conv2d and max_pool2d (NHWC) on a tape, the loss and 8
    gradients."""

    def build(d):
        x, y = tt.constant(d["x"]), tt.constant(d["y"])
        params = [tt.Variable(d[k]) for k in MOBILE_PARAMS]
        w1, b1, dw, b2, pw, b3, wd, bd = params

        def step(x, y):
            with tt.GradientTape() as tape:
                h = tt.nn.relu(tt.nn.conv2d(x, w1, 1, "SAME") + b1)
                h = tt.nn.relu(tt.nn.depthwise_conv2d(h, dw, [1, 1, 1, 1], "SAME") + b2)
                h = tt.nn.relu(tt.nn.conv2d(h, pw, 1, "SAME") + b3)
                h = tt.reduce_mean(tt.nn.max_pool2d(h, 3, 2, "SAME"), axis=[1, 2])
                logits = tt.matmul(h, wd) + bd
                loss = tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
            return [loss, *tape.gradient(loss, params)]

        run = tt.function(step) if compiled else step
        return lambda: run(x, y)

    return build


def input_pipeline(d):
    """B34: a tt.data pipeline (its map a tt.function), one pass, each batch's sums."""
    dataset = (
        tt.data.Dataset.from_tensor_slices((d["x"], d["y"]))
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


def kmeans_cost(compiled):
    """B31: the k-means cost from tt.matmul and tt.reduce_min (float64)."""

    def build(d):
        points, centroids = tt.constant(d["points"]), tt.constant(d["centroids"])

        def cost(points, centroids):
            p2 = tt.reduce_sum(points * points, axis=1)[:, None]
            c2 = tt.reduce_sum(centroids * centroids, axis=1)[None, :]
            products = tt.matmul(points, centroids, transpose_b=True)
            return [tt.reduce_sum(tt.reduce_min(p2 + c2 - 2.0 * products, axis=1))]

        run = tt.function(cost) if compiled else cost
        return lambda: run(points, centroids)

    return build


def ode(compiled):
    """B32: tt.while_loop over the Runge-Kutta steps on a tape, the last component's
    gradient (float64)."""

    def build(d):
        x, steps = tt.constant(d["x"]), d["steps"]
        h = 2.0 / steps

        def rate(x, y):
            return tt.concat([x[:1], x[1:] * y[:-1]], 0)

        def both(x):
            def step(i, y):
                k1 = rate(x, y)
                k2 = rate(x, y + h / 2 * k1)
                k3 = rate(x, y + h / 2 * k2)
                k4 = rate(x, y + h * k3)
                return i + 1, y + h / 6 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

            with tt.GradientTape() as tape:
                tape.watch(x)
                start = (tt.constant(0), tt.zeros_like(x))
                _, y = tt.while_loop(lambda i, y: i < steps, step, start, maximum_iterations=steps)
                last = y[-1]
            return [y, tape.gradient(last, x)]

        run = tt.function(both) if compiled else both
        return lambda: run(x)

    return build


def text_and_numbers(compiled):
    """B28: tt.strings.to_number, a tt.while_loop, tt.strings.as_string and length."""

    def build(d):
        lines, steps = tt.constant(d["lines"]), d["steps"]

        def parse_loop_write(lines):
            def step(i, v):
                return i + 1, 0.99 * v + 0.01 * tt.sin(v)

            values = tt.strings.to_number(lines, tt.float64)
            _, values = tt.while_loop(lambda i, v: i < steps, step, (0, values))
            text = tt.strings.as_string(values, precision=3)
            return [
                tt.reduce_sum(values),
                tt.cast(tt.reduce_sum(tt.strings.length(text)), tt.float64),
            ]

        run = tt.function(parse_loop_write) if compiled else parse_loop_write
        return lambda: run(lines)

    return build


def _for(compiled):
    table = {
        "B1": chain(compiled),
        "B2": mlp(compiled),
        "B3": fused(compiled),
        "B4": jacobian(compiled),
        "B4b": jacobian(compiled, batched=True),
        "B5": hessian(compiled),
        "B7": scalar_grad(compiled),
        "B9": train_step(compiled),
        "B9b": train_step(compiled),
        "B10": euler(compiled),
        "B12": hvp(compiled),
        "B18": lstm(compiled),
        "B19": cnn(compiled),
        "B33": mobile_block(compiled),
        "B20": gp(compiled),
        "B24": block_step(compiled),
        "B24L": block_step(compiled),
        "B28": text_and_numbers(compiled),
        "B29": keras_step(compiled),
        "B30": keras_inference(compiled),
        "B31": kmeans_cost(compiled),
        "B32": ode(compiled),
    }
    if compiled:
        table["B9u"] = train_step(compiled, any_batch=True)
        table["B18w"] = lstm(compiled, looped=True)
        table["B34"] = input_pipeline
    return table


def _profiled(build):
    """A compiled workload run while a tt.profiler profile is on: its first call builds the
    profiled module, and every call is timed step by step (the profiler's overhead)."""

    def start(d):
        tt.profiler.profile().start()
        return build(d)

    return start


BUILDERS = {
    "tracer-eager": _for(False),
    "tracer-compiled": _for(True),
    "tracer-profiled": {w: _profiled(b) for w, b in _for(True).items() if w in ("B2", "B3", "B9")},
}
