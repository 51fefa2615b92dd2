"""An eager tape's cached gradient graph made lighter for the tape it runs over
(tracer/passes/over_the_tape.py): the same bits as the rules run on the tape's tensors (the
first step) and as numpy's formulas, with relu's gradient after a max pool on the pooled
shape and the pooled maxima read from the tape rather than computed again."""

import numpy as np
import pytest

import tracer as tt
from tracer import backprop


def _cnn(rng, dtype):
    x = tt.constant(rng.standard_normal((4, 8, 8, 2)).astype(dtype))
    params = [
        tt.Variable(rng.standard_normal(shape).astype(dtype) * 0.3)
        for shape in ((3, 3, 2, 4), (4,), (3, 3, 4, 5), (5,), (20, 3), (3,))
    ]

    def step():
        w1, b1, w2, b2, w3, b3 = params
        with tt.GradientTape() as tape:
            h = tt.nn.relu(tt.nn.conv2d(x, w1, 1, "SAME") + b1)
            h = tt.nn.max_pool2d(h, 2, 2, "VALID")
            h = tt.nn.relu(tt.nn.conv2d(h, w2, 1, "SAME") + b2)
            h = tt.nn.max_pool2d(h, 2, 2, "VALID")
            logits = tt.matmul(tt.reshape(h, (h.shape[0], -1)), w3) + b3
            loss = tt.reduce_sum(tt.square(logits))
        return [loss, *tape.gradient(loss, params)]

    return x, params, step


def _reference(x, params):
    """The CNN and its gradients by hand in numpy (float64)."""
    w1, b1, w2, b2, w3, b3 = (p.numpy().astype(np.float64) for p in params)

    def conv(image, w):
        padded = np.pad(image, ((0, 0), (1, 1), (1, 1), (0, 0)))
        n, h, width, _ = image.shape
        patches = np.stack(
            [padded[:, i : i + h, j : j + width] for i in range(3) for j in range(3)], axis=3
        )
        return np.einsum("nhwkc,kco->nhwo", patches, w.reshape(9, *w.shape[2:])), patches

    def pool(r):
        n, h, w, c = r.shape
        windows = r.reshape(n, h // 2, 2, w // 2, 2, c).transpose(0, 1, 3, 5, 2, 4)
        windows = windows.reshape(n, h // 2, w // 2, c, 4)
        first = windows.argmax(-1)
        return windows.max(-1), first

    def pool_grad(g, first, shape):
        n, h, w, c = shape
        out = np.zeros((n, h // 2, w // 2, c, 4))
        np.put_along_axis(out, first[..., None], g[..., None], -1)
        out = out.reshape(n, h // 2, w // 2, c, 2, 2).transpose(0, 1, 4, 2, 5, 3)
        return out.reshape(shape)

    def conv_input_grad(g, w, shape):
        flipped = w[::-1, ::-1].transpose(0, 1, 3, 2)
        return conv(g, flipped)[0]

    image = x.numpy().astype(np.float64)
    z1, patches1 = conv(image, w1)
    r1 = np.maximum(z1 + b1, 0)
    p1, first1 = pool(r1)
    z2, patches2 = conv(p1, w2)
    r2 = np.maximum(z2 + b2, 0)
    p2, first2 = pool(r2)
    flat = p2.reshape(p2.shape[0], -1)
    logits = flat @ w3 + b3
    loss = np.sum(logits**2)
    d_logits = 2 * logits
    d_r2 = pool_grad((d_logits @ w3.T).reshape(p2.shape), first2, r2.shape) * (r2 > 0)
    d_p1 = conv_input_grad(d_r2, w2, p1.shape)
    d_r1 = pool_grad(d_p1, first1, r1.shape) * (r1 > 0)
    grads = [
        np.einsum("nhwkc,nhwo->kco", patches1, d_r1).reshape(w1.shape),
        d_r1.sum((0, 1, 2)),
        np.einsum("nhwkc,nhwo->kco", patches2, d_r2).reshape(w2.shape),
        d_r2.sum((0, 1, 2)),
        flat.T @ d_logits,
        d_logits.sum(0),
    ]
    return [loss, *grads]


def _graph_of(step_outputs_shape):
    """The cached gradient graph whose outputs have these shapes (the CNN's)."""
    for grad in backprop._gradient_cache.values():
        if [tuple(o.shape) for o in grad.graph.outputs] == step_outputs_shape:
            return grad
    raise AssertionError("the CNN's gradient graph is not cached")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_cnns_cached_gradient_is_the_eager_rules_bits_with_lighter_ops(dtype):
    rng = np.random.default_rng(3)
    x, params, step = _cnn(rng, dtype)
    first = [v.numpy() for v in step()]  # the rules on the tape's tensors
    step()  # the graph built
    later = [v.numpy() for v in step()]  # the cached graph, straight-line numpy
    for a, b in zip(first, later):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == dtype
    tolerance = 2e-4 if dtype == np.float32 else 1e-10
    for got, want in zip(later, _reference(x, params)):
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)

    grad = _graph_of([tuple(p.shape) for p in params])
    ops = [node.op for node in grad.graph.nodes]
    relu_grads = [node for node in grad.graph.nodes if node.op == "relu_grad"]
    assert [tuple(n.shape) for n in relu_grads] == [(4, 2, 2, 5), (4, 4, 4, 4)]  # pooled
    assert "window_max_gather" not in ops  # the pooled maxima read from the tape
    # the first relu's output, kept by relu and by the max pool after it: one input
    assert [tuple(i.shape) for i in grad.graph.inputs].count((4, 8, 8, 4)) == 1


def test_higher_orders_through_the_rewritten_graph_are_the_rules_values():
    """An outer tape records the cached, rewritten gradient graph as it runs: the second
    derivative through relu and a max pool matches the one the eager rules give."""
    rng = np.random.default_rng(4)
    x = tt.Variable(rng.standard_normal((2, 4, 4, 1)))

    def second():
        with tt.GradientTape() as outer:
            with tt.GradientTape() as inner:
                pooled = tt.nn.max_pool2d(tt.nn.relu(x * x - 0.5), 2, 2, "VALID")
                loss = tt.reduce_sum(tt.square(pooled))
            g = inner.gradient(loss, x)
            total = tt.reduce_sum(g * g)
        return g.numpy(), outer.gradient(total, x).numpy()

    runs = [second() for _ in range(3)]  # eager rules, then the built graph, then cached
    for g, h in runs[1:]:
        np.testing.assert_array_equal(g, runs[0][0])
        np.testing.assert_array_equal(h, runs[0][1])
    v = x.numpy()
    r = np.maximum(v * v - 0.5, 0)
    windows = r.reshape(2, 2, 2, 2, 2, 1).transpose(0, 1, 3, 5, 2, 4).reshape(2, 2, 2, 1, 4)
    chosen = np.zeros_like(windows)
    np.put_along_axis(chosen, windows.argmax(-1)[..., None], 1.0, -1)
    mask = chosen.reshape(2, 2, 2, 1, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(v.shape)
    mask = mask * (r > 0)
    g = 2 * r * mask * 2 * v  # d loss / dx where the window's maximum is positive
    np.testing.assert_allclose(runs[2][0], g, rtol=1e-12, atol=1e-12)
    # d/dx of sum(g^2), g = 4 r v mask, r = v^2 - 0.5 where chosen: 2 g * 4 (2v^2 + r) mask
    np.testing.assert_allclose(runs[2][1], 2 * g * 4 * (2 * v * v + r) * mask, rtol=1e-10)


def test_a_pooled_value_scaled_by_a_python_number_is_not_read_from_the_tape():
    """`pooled * 0.5`: the tape keeps no pooled value for the 0.5 (`OpDef.saved_for`), so the
    pooled maxima that relu's gradient asks for cannot be read from that product's record:
    the cached graph computes them, and gives the first step's bits."""
    rng = np.random.default_rng(7)
    x = tt.constant(rng.standard_normal((2, 4, 4, 1)))
    w = tt.Variable(rng.standard_normal((3, 3, 1, 2)))

    def step():
        with tt.GradientTape() as tape:
            h = tt.nn.relu(tt.nn.conv2d(x, w, 1, "SAME"))
            pooled = tt.nn.max_pool2d(h, 2, 2, "VALID")
            loss = tt.reduce_sum(tt.square(pooled * 0.5))
        return tape.gradient(loss, w).numpy()

    first, second = step(), step()  # the rules on the tape's tensors, then the cached graph
    np.testing.assert_array_equal(second, first)
    # loss = sum((max(relu(conv)) / 2)^2): d/dw by central differences in float64
    eps, numeric = 1e-6, np.zeros(w.shape)
    for index in np.ndindex(*w.shape):
        values = []
        for sign in (1, -1):
            shifted = w.numpy().copy()
            shifted[index] += sign * eps
            h = tt.nn.relu(tt.nn.conv2d(x, tt.constant(shifted), 1, "SAME"))
            pooled = tt.nn.max_pool2d(h, 2, 2, "VALID").numpy()
            values.append(np.sum((pooled * 0.5) ** 2))
        numeric[index] = (values[0] - values[1]) / (2 * eps)
    np.testing.assert_allclose(first, numeric, rtol=1e-6, atol=1e-8)
