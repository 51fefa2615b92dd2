"""PyTorch: eager autograd, and torch.compile (Inductor, which emits C++ for the CPU)."""

import math

import numpy as np
import torch
import torch.nn.functional as F
from data import ADAM, BLOCK_PARAMS, LAYER_NORM_EPSILON, MOBILE_PARAMS
from torch.func import hessian, jacrev, vmap


def chain(d):
    ops = d["ops"]

    def run():
        x = torch.tensor(float(d["x"]), requires_grad=True)
        y = x
        for _ in range(ops // 2):
            y = torch.sin(y) * 1.01
        (g,) = torch.autograd.grad(y, x)
        return g

    return run


def mlp_step(d):
    x, y = torch.from_numpy(d["x"]), torch.from_numpy(d["y"]).long()
    params = [torch.from_numpy(d[k].copy()).requires_grad_() for k in ("w1", "b1", "w2", "b2")]

    def step(x, y, w1, b1, w2, b2):
        logits = torch.relu(x @ w1 + b1) @ w2 + b2
        loss = F.cross_entropy(logits, y)
        return [loss, *torch.autograd.grad(loss, [w1, b1, w2, b2])]

    return step, (x, y, *params)


def fused_grad(x):
    x = x.detach().requires_grad_()
    y = torch.sum(torch.sin(x) * torch.exp(-x * x) + torch.tanh(x) * x)
    (g,) = torch.autograd.grad(y, x)
    return g


def jacobian_of(d, batched):
    w, b, x = (torch.from_numpy(d[k]) for k in ("w", "b", "x"))

    def f(v):
        return torch.tanh(w @ v + b)

    if batched:
        return lambda: vmap(jacrev(f))(x)
    return lambda: jacrev(f)(x)


def hessian_of(d):
    x = torch.from_numpy(d["x"])
    return lambda: hessian(lambda v: torch.sum(torch.sin(v) * v**2))(x)


def _adam(params):
    """A hand-written Keras Adam: the function that updates `params` in place from their
    gradients."""
    lr, b1, b2, eps = (ADAM[k] for k in ("learning_rate", "beta_1", "beta_2", "epsilon"))
    ms = [torch.zeros_like(p) for p in params]
    vs = [torch.zeros_like(p) for p in params]
    t = torch.zeros(())  # a tensor, so that a compiled step is not specialized per step

    def apply(grads):
        with torch.no_grad():
            t.add_(1)
            rate = lr * torch.sqrt(1 - b2**t) / (1 - b1**t)
            for p, g, m, v in zip(params, grads, ms, vs):
                m.mul_(b1).add_(g, alpha=1 - b1)
                v.mul_(b2).addcmul_(g, g, value=1 - b2)
                p.sub_(rate * m / (v.sqrt() + eps))

    return apply


def train_step(compile_step, dynamic=None):
    """B9: autograd and a hand-written Keras Adam updating the parameters in place
    (compiled for any batch size with `dynamic=True`: B9u)."""

    def build(d):
        x, y = torch.from_numpy(d["x"]), torch.from_numpy(d["y"]).long()
        params = [torch.from_numpy(d[k].copy()).requires_grad_() for k in ("w1", "b1", "w2", "b2")]
        adam = _adam(params)

        def step(x, y):
            w1, b1, w2, b2 = params
            loss = F.cross_entropy(torch.relu(x @ w1 + b1) @ w2 + b2, y)
            adam(torch.autograd.grad(loss, params))
            return loss

        run = torch.compile(step, dynamic=dynamic) if compile_step else step
        return lambda: [run(x, y), *params]

    return build


def euler(compile_step):
    """B10: a Python loop under autograd. torch.compile compiles the step, which the loop
    calls: compiling the whole loop unrolls it, and took 9 minutes at 20 steps."""

    def build(d):
        x0, theta = torch.from_numpy(d["x0"]), torch.from_numpy(d["theta"])
        steps, dt = d["steps"], d["dt"]

        def step(x, theta):
            return x + dt * (torch.sin(theta * x) - 0.5 * x * x * x)

        step = torch.compile(step) if compile_step else step

        def value_and_grads(x0, theta):
            x0, theta = x0.detach().requires_grad_(), theta.detach().requires_grad_()
            x = x0
            for _ in range(steps):
                x = step(x, theta)
            loss = 0.5 * torch.sum(x * x)
            return [loss, *torch.autograd.grad(loss, [x0, theta])]

        return lambda: value_and_grads(x0, theta)

    return build


def hvp(compile_it):
    """B12: torch.func.jvp of torch.func.grad, forward over reverse."""

    def build(d):
        x, v = torch.from_numpy(d["x"]), torch.from_numpy(d["v"])
        grad = torch.func.grad(lambda u: torch.sum(torch.sin(u) * u**2))

        def product(x, v):
            return torch.func.jvp(grad, (x,), (v,))[1]

        run = torch.compile(product) if compile_it else product
        return lambda: run(x, v)

    return build


def lstm(compile_step):
    """B18: a Python loop over the time steps under autograd; torch.compile compiles the
    step, which the loop calls (compiling the whole loop would unroll it, as in B10)."""

    def build(d):
        main, extra, state, sequence = (
            torch.from_numpy(d[k]) for k in ("main", "extra", "state", "sequence")
        )
        symbols = sequence.shape[1]

        def layer(weight, bias, hidden, cell, x):
            gates = torch.cat([x, hidden, x, hidden]) * weight + bias
            forget, ingate, outgate = (
                torch.sigmoid(gates[k * symbols : (k + 1) * symbols]) for k in range(3)
            )
            cell = cell * forget + ingate * torch.tanh(gates[3 * symbols :])
            return outgate * torch.tanh(cell), cell

        def step_loss(main, extra, state, x, target):
            x, new_state = x * extra[0], []
            for i in range(len(state) // 2):
                hidden, cell = layer(
                    main[2 * i], main[2 * i + 1], state[2 * i], state[2 * i + 1], x
                )
                new_state += [hidden, cell]
                x = hidden
            predicted = x * extra[1] + extra[2]
            normalized = predicted - torch.log(torch.sum(torch.exp(predicted)))
            return torch.sum(target * normalized), new_state

        step = torch.compile(step_loss) if compile_step else step_loss

        def value_and_grads(main, extra):
            main, extra = main.detach().requires_grad_(), extra.detach().requires_grad_()
            total, hidden_state = 0.0, list(state)
            for t in range(sequence.shape[0] - 1):
                term, hidden_state = step(main, extra, hidden_state, sequence[t], sequence[t + 1])
                total = total + term
            loss = -total / ((sequence.shape[0] - 1) * symbols)
            return [loss, *torch.autograd.grad(loss, [main, extra])]

        return lambda: value_and_grads(main, extra)

    return build


def cnn(compile_step):
    """B19: F.conv2d and F.max_pool2d in NCHW (the NHWC images and HWIO filters transposed
    once, outside the timed step; the filters' gradients handed back as HWIO views, and the
    pooled maps flattened in NHWC order, as the dense layer's weights expect)."""

    def build(d):
        x = torch.from_numpy(d["x"]).permute(0, 3, 1, 2).contiguous()
        y = torch.from_numpy(d["y"]).long()
        params = [
            torch.from_numpy(d[k]).permute(3, 2, 0, 1).contiguous() if k in ("w1", "w2")
            else torch.from_numpy(d[k].copy())
            for k in ("w1", "b1", "w2", "b2", "w3", "b3")
        ]  # fmt: skip
        params = [p.requires_grad_() for p in params]

        def step(x, y, w1, b1, w2, b2, w3, b3):
            h = F.max_pool2d(torch.relu(F.conv2d(x, w1, b1, padding="same")), 2)
            h = F.max_pool2d(torch.relu(F.conv2d(h, w2, b2, padding="same")), 2)
            logits = h.permute(0, 2, 3, 1).reshape(h.shape[0], -1) @ w3 + b3
            loss = F.cross_entropy(logits, y)
            return [loss, *torch.autograd.grad(loss, [w1, b1, w2, b2, w3, b3])]

        run = torch.compile(step) if compile_step else step

        def call():
            loss, g1, gb1, g2, *rest = run(x, y, *params)
            return [loss, g1.permute(2, 3, 1, 0), gb1, g2.permute(2, 3, 1, 0), *rest]

        return call

    return build


def mobile_block(compile_step):
    """B33: F.conv2d (the depthwise one with a group a channel) and F.max_pool2d in NCHW (the
    NHWC images and HWIO filters transposed once, outside the timed step; the filters'
    gradients handed back in HWIO); TensorFlow's SAME pooling of an even side pads one row
    and column after the image, here with -inf."""

    def build(d):
        x = torch.from_numpy(d["x"]).permute(0, 3, 1, 2).contiguous()
        y = torch.from_numpy(d["y"]).long()
        params = [
            torch.from_numpy(d[k]).permute(3, 2, 0, 1).contiguous() if k in ("w1", "pw")
            else torch.from_numpy(d[k]).permute(2, 3, 0, 1).contiguous() if k == "dw"
            else torch.from_numpy(d[k].copy())
            for k in MOBILE_PARAMS
        ]  # fmt: skip
        params = [p.requires_grad_() for p in params]
        channels = d["dw"].shape[2]

        def step(x, y, w1, b1, dw, b2, pw, b3, wd, bd):
            h = torch.relu(F.conv2d(x, w1, b1, padding="same"))
            h = torch.relu(F.conv2d(h, dw, b2, padding="same", groups=channels))
            h = torch.relu(F.conv2d(h, pw, b3))
            h = F.max_pool2d(F.pad(h, (0, 1, 0, 1), value=-math.inf), 3, 2)
            logits = h.mean(dim=(2, 3)) @ wd + bd
            loss = F.cross_entropy(logits, y)
            return [loss, *torch.autograd.grad(loss, [w1, b1, dw, b2, pw, b3, wd, bd])]

        run = torch.compile(step) if compile_step else step

        def call():
            loss, g1, gb1, gdw, gb2, gpw, *rest = run(x, y, *params)
            return [
                loss,
                g1.permute(2, 3, 1, 0),
                gb1,
                gdw.permute(2, 3, 0, 1),
                gb2,
                gpw.permute(2, 3, 1, 0),
                *rest,
            ]

        return call

    return build


def kmeans_cost(compile_step):
    """B31: the k-means cost from torch.matmul and torch.amin (float64)."""

    def build(d):
        points, centroids = torch.from_numpy(d["points"]), torch.from_numpy(d["centroids"])

        def cost(points, centroids):
            p2 = torch.sum(points * points, dim=1)[:, None]
            c2 = torch.sum(centroids * centroids, dim=1)[None, :]
            products = points @ centroids.T
            return [torch.sum(torch.amin(p2 + c2 - 2.0 * products, dim=1))]

        run = torch.compile(cost) if compile_step else cost
        return lambda: run(points, centroids)

    return build


def ode(compile_step):
    """B32: a Python loop over the Runge-Kutta steps under autograd, the last component's
    gradient by torch.autograd.grad (float64)."""

    def build(d):
        x, steps = torch.from_numpy(d["x"]), d["steps"]
        h = 2.0 / steps

        def rate(x, y):
            return torch.cat([x[:1], x[1:] * y[:-1]])

        def both(x):
            x = x.detach().requires_grad_(True)
            y = torch.zeros_like(x)
            for _ in range(steps):
                k1 = rate(x, y)
                k2 = rate(x, y + h / 2 * k1)
                k3 = rate(x, y + h / 2 * k2)
                k4 = rate(x, y + h * k3)
                y = y + h / 6 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            (gradient,) = torch.autograd.grad(y[-1], x)
            return [y.detach(), gradient]

        run = torch.compile(both) if compile_step else both
        return lambda: run(x)

    return build


def gp(compile_step):
    """B20: torch.linalg.cholesky and torch.cholesky_solve under autograd (float64)."""

    def build(d):
        x, params = torch.from_numpy(d["x"]), torch.from_numpy(d["params"])
        y = torch.from_numpy(d["y"][:, None])
        n = x.shape[0]
        eye = torch.eye(n, dtype=torch.float64)
        offset = 0.5 * n * np.log(2 * np.pi)

        def value_and_grad(params, x, y):
            params = params.detach().requires_grad_()
            squared = (x[:, None] - x[None, :]) ** 2
            kernel = torch.exp(params[1]) * torch.exp(-squared / (2 * torch.exp(2 * params[0])))
            chol = torch.linalg.cholesky(kernel + torch.exp(params[2]) * eye)
            alpha = torch.cholesky_solve(y, chol)
            nll = 0.5 * torch.sum(y * alpha) + torch.sum(torch.log(torch.diagonal(chol))) + offset
            return [nll, *torch.autograd.grad(nll, [params])]

        run = torch.compile(value_and_grad) if compile_step else value_and_grad
        return lambda: run(params, x, y)

    return build


def block_step(compile_step):
    """B24: the transformer block under autograd (layer norm from torch.mean, torch.softmax,
    F.gelu's exact default) and the B9 Adam updating its 12 parameters in place."""

    def build(d):
        x, target, mask = (torch.from_numpy(d[k]) for k in ("x", "target", "mask"))
        params = [torch.from_numpy(d[k].copy()).requires_grad_() for k in BLOCK_PARAMS]
        adam = _adam(params)
        batch, seq, width = x.shape
        heads = d["heads"]
        size = width // heads

        def layer_norm(x, gamma, beta):
            mean = torch.mean(x, dim=-1, keepdim=True)
            variance = torch.mean(torch.square(x - mean), dim=-1, keepdim=True)
            return (x - mean) * torch.rsqrt(variance + LAYER_NORM_EPSILON) * gamma + beta

        def split_heads(t):  # (batch * seq, width) -> (batch, heads, seq, size)
            return t.reshape(batch, seq, heads, size).transpose(1, 2)

        def step(x, target, mask):
            g1, beta1, w_qkv, b_qkv, w_o, b_o, g2, beta2, w_1, b_1, w_2, b_2 = params
            rows = x.reshape(batch * seq, width)
            qkv = layer_norm(rows, g1, beta1) @ w_qkv + b_qkv
            q, k, v = (split_heads(t) for t in torch.split(qkv, width, dim=1))
            scores = q @ k.transpose(2, 3) * (1 / math.sqrt(size)) + mask
            attended = torch.softmax(scores, dim=-1) @ v
            attended = attended.transpose(1, 2).reshape(batch * seq, width)
            h = rows + attended @ w_o + b_o
            y = h + F.gelu(layer_norm(h, g2, beta2) @ w_1 + b_1) @ w_2 + b_2
            loss = torch.mean(torch.square(y - target.reshape(batch * seq, width)))
            adam(torch.autograd.grad(loss, params))
            return loss

        run = torch.compile(step) if compile_step else step
        return lambda: [run(x, target, mask), *params]

    return build


def eager():
    def mlp(d):
        step, args = mlp_step(d)
        return lambda: step(*args)

    def fused(d):
        x = torch.from_numpy(d["x"])
        return lambda: fused_grad(x)

    def scalar(d):
        def run():
            x = torch.tensor(float(d["x"]), requires_grad=True)
            (g,) = torch.autograd.grad(x * x, x)
            return g

        return run

    return {
        "B1": chain,
        "B2": mlp,
        "B3": fused,
        "B4": lambda d: jacobian_of(d, False),
        "B4b": lambda d: jacobian_of(d, True),
        "B5": hessian_of,
        "B7": scalar,
        "B9": train_step(False),
        "B9b": train_step(False),
        "B10": euler(False),
        "B12": hvp(False),
        "B18": lstm(False),
        "B19": cnn(False),
        "B33": mobile_block(False),
        "B20": gp(False),
        "B31": kmeans_cost(False),
        "B32": ode(False),
        "B24": block_step(False),
        "B24L": block_step(False),
        "B29": keras_style_step,
        "B30": keras_style_inference,
        "B34": input_pipeline,
    }


def compiled():
    def mlp(d):
        step, args = mlp_step(d)
        step = torch.compile(step)
        return lambda: step(*args)

    def fused(d):
        x = torch.from_numpy(d["x"])
        run = torch.compile(fused_grad)
        return lambda: run(x)

    def scalar(d):
        run = torch.compile(lambda x: 2 * x)  # what the gradient of x*x compiles to
        x = torch.tensor(float(d["x"]))
        return lambda: run(x)

    return {
        "B2": mlp,
        "B3": fused,
        "B7": scalar,
        "B9": train_step(True),
        "B9b": train_step(True),
        "B9u": train_step(True, dynamic=True),
        "B10": euler(True),
        "B12": hvp(True),
        "B18": lstm(True),
        "B19": cnn(True),
        "B33": mobile_block(True),
        "B20": gp(True),
        "B31": kmeans_cost(True),
        "B32": ode(True),
        "B24": block_step(True),
        "B24L": block_step(True),
    }


class _ScaledRows(torch.utils.data.Dataset):
    """B34's rows as a map-style Dataset whose items are scaled as they are read (the map)."""

    def __init__(self, x, y):
        self.x, self.y = torch.from_numpy(x), torch.from_numpy(y)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, row):
        return self.x[row] * 0.5, self.y[row]


def input_pipeline(d):
    """B34: a DataLoader over the scaled rows, shuffled (seeded) and batched, in this
    process (no workers), one pass, each batch's sums."""
    loader = torch.utils.data.DataLoader(
        _ScaledRows(d["x"], d["y"]),
        batch_size=d["batch"],
        shuffle=True,
        generator=torch.Generator().manual_seed(0),
    )

    def one_pass():
        total, labels = 0.0, 0
        for features, label in loader:
            total += np.sum(features.numpy(), dtype=np.float64)
            labels += int(label.sum())
        return [total, labels]

    return one_pass


def _sequential(d):
    """B29's and B30's model: nn.Sequential of Linear, ReLU, Linear with the data's weights."""
    n_in, hidden = d["w1"].shape
    model = torch.nn.Sequential(
        torch.nn.Linear(n_in, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, d["w2"].shape[1])
    )
    with torch.no_grad():
        for layer, (w, b) in ((model[0], ("w1", "b1")), (model[2], ("w2", "b2"))):
            layer.weight.copy_(torch.from_numpy(d[w].T.copy()))
            layer.bias.copy_(torch.from_numpy(d[b]))
    return model


def keras_style_step(d):
    """B29: B9's step as a PyTorch user writes it: nn.Sequential, F.cross_entropy,
    torch.optim.Adam; returns the loss and the parameters as the others order them. PyTorch
    adds epsilon to the bias-corrected root of v, Keras to the raw one: Keras's epsilon over
    sqrt(1 - beta_2) makes the first step, which run.py checks, Keras's (the work of a step
    does not depend on it)."""
    model = _sequential(d)
    lr, b1, b2, eps = (ADAM[k] for k in ("learning_rate", "beta_1", "beta_2", "epsilon"))
    first_step_eps = eps / math.sqrt(1 - b2)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(b1, b2), eps=first_step_eps)
    x, y = torch.from_numpy(d["x"]), torch.from_numpy(d["y"]).long()

    def run():
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return [loss, model[0].weight.T, model[0].bias, model[2].weight.T, model[2].bias]

    return run


def keras_style_inference(d):
    """B30: B29's nn.Sequential called on the batch under no_grad, as a PyTorch user runs a
    model for inference: its logits."""
    model = _sequential(d)
    x = torch.from_numpy(d["x"])

    def run():
        with torch.no_grad():
            return model(x)

    return run


def to_numpy(value):
    if isinstance(value, (list, tuple)):
        return [to_numpy(v) for v in value]
    return value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


torch.set_num_threads(max(1, torch.get_num_threads()))
BUILDERS = {"torch-eager": eager(), "torch-compile": compiled()}
