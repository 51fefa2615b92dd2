"""The contraction pass (tracer/passes/contract.py): a sum of matrix products read by the
sum alone becomes one product over the joined inner dimension, where that moves fewer
elements; the values agree with the eager tape's to rounding, in every backend."""

import numpy as np
import pytest

import tracer as tt

rng = np.random.default_rng(20261126)


def ops(function, *args):
    """The ops of `function`'s contracted graph, with their counts."""
    graph = tt.function(function, backend="interpreter").get_concrete_function(*args)
    counts = {}
    for node in graph.stages["contracted"].nodes:
        counts[node.op] = counts.get(node.op, 0) + 1
    return counts


def rnn_gradients(w, u, xs):
    """A tanh RNN unrolled over the steps of xs; the gradients of sum(h) for w and u."""
    with tt.GradientTape() as tape:
        tape.watch([w, u])
        h = tt.zeros(xs.shape[1:], xs.dtype)
        for t in range(xs.shape[0]):
            h = tt.tanh(tt.matmul(h, w) + tt.matmul(xs[t], u))
        loss = tt.reduce_sum(h)
    return [loss, *tape.gradient(loss, [w, u])]


@pytest.mark.parametrize("backend", ["interpreter", "c"])
def test_an_unrolled_recurrence_sums_its_weight_gradient_in_one_product(backend):
    w, u = (rng.standard_normal((16, 16)) / 4 for _ in range(2))
    xs = rng.standard_normal((12, 3, 16))
    counts = ops(rnn_gradients, w, u, xs)
    # forward 2 per step, the state's cotangent 1 per step but the first, and one for each
    # weight's sum (the u-products of the steps join; the w-products of steps 1.. too); the
    # steps' cotangents joined once for both sums, the states once; xs[0], xs[1], ... joined
    # in order are xs itself, reshaped
    assert counts["matmul"] == 2 * 12 + 11 + 2 and counts["concat"] == 2
    assert counts["reshape"] == 1
    want = rnn_gradients(*(tt.constant(a) for a in (w, u, xs)))
    got = tt.function(rnn_gradients, backend=backend)(w, u, xs)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)


def test_products_read_elsewhere_or_too_large_to_copy_stay():
    a, b = rng.standard_normal((4, 64)), rng.standard_normal((64, 4))
    c, d = rng.standard_normal((4, 64)), rng.standard_normal((64, 4))

    def shared(a, b, c, d):  # a @ b is also an output: it must be computed anyway
        first = tt.matmul(a, b)
        return first + tt.matmul(c, d), first

    def large(a, b, c, d):  # copying 2 x 512 elements to save one 4 x 4 result
        return tt.matmul(a, b) + tt.matmul(c, d)

    def small(x, y, z, v):  # copying 2 x 8 elements saves a 64 x 64 result
        return tt.matmul(x, y, transpose_a=True) + tt.matmul(z, v, transpose_a=True)

    assert ops(shared, a, b, c, d)["matmul"] == 2 and "concat" not in ops(shared, a, b, c, d)
    assert ops(large, a, b, c, d)["matmul"] == 2
    x, y, z, v = (rng.standard_normal((2, 64)) for _ in range(4))
    assert ops(small, x, y, z, v) == {"input": 4, "concat": 2, "matmul": 1}
    np.testing.assert_allclose(
        tt.function(small, backend="c")(x, y, z, v).numpy(), x.T @ y + z.T @ v, rtol=1e-12
    )


def test_only_products_of_the_same_flags_and_shape_join_and_other_terms_stay_added():
    p, q, r, s = (rng.standard_normal((3, 40)) for _ in range(4))
    m = rng.standard_normal((40, 40))

    def mixed(p, q, r, s, m):
        return (
            tt.matmul(p, q, transpose_a=True)
            + m
            + tt.matmul(r, s, transpose_a=True)
            + tt.matmul(m, m)  # other flags: alone in its group
        )

    counts = ops(mixed, p, q, r, s, m)
    assert counts["concat"] == 2 and counts["matmul"] == 2 and counts["add"] == 2
    want = p.T @ q + m + r.T @ s + m @ m
    got = tt.function(mixed, backend="c")(p, q, r, s, m).numpy()
    # (an absolute bound too: a sum that cancels to near zero has a large relative error)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())


def test_terms_that_broadcast_into_the_sum_are_added_after_the_joined_product():
    """Two (1, 40) rows first in the tree's order: each partial sum must still have the
    sum's shape (adding the rows first would make a (1, 40) partial sum)."""
    p, q, r, s = (rng.standard_normal((3, 40)) for _ in range(4))
    row1, row2 = rng.standard_normal((2, 1, 40))

    def broadcast(p, q, r, s, row1, row2):
        products = tt.matmul(p, q, transpose_a=True) + tt.matmul(r, s, transpose_a=True)
        return row1 + (row2 + products)

    assert ops(broadcast, p, q, r, s, row1, row2)["concat"] == 2
    got = tt.function(broadcast, backend="c")(p, q, r, s, row1, row2).numpy()
    np.testing.assert_allclose(got, row1 + row2 + p.T @ q + r.T @ s, rtol=1e-12)


def test_rows_of_one_tensor_join_as_it_only_whole_and_in_order():
    """x[0], x[1], ... x[n-1], in the graph's order (the order the sum reads them, here;
    in an unrolled loop, the forward's), joined are x with its first two axes merged (no
    copy); rows in another order, or one missing, leave a concat."""
    x, g = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 3, 6))

    def rows(x, g, order):
        total = None
        for t in order:
            term = tt.matmul(x[t], g[t], transpose_a=True)
            total = term if total is None else total + term
        return total

    for order, joined in (((0, 1, 2, 3), True), ((3, 2, 1, 0), False), ((0, 1, 3), False)):
        f = lambda x, g, order=order: rows(x, g, order)  # noqa: E731
        counts = ops(f, x, g)
        assert counts.get("reshape", 0) == (2 if joined else 0), order
        assert counts.get("concat", 0) == (0 if joined else 2), order
        want = sum(x[t].T @ g[t] for t in order)
        np.testing.assert_allclose(tt.function(f, backend="c")(x, g).numpy(), want, rtol=1e-12)
