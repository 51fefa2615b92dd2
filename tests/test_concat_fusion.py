"""A concat read by elementwise code is computed inside the kernel that reads it
(tracer/passes/fuse.py; codegen/loops.py cuts the kernel's loops where the input read
changes): numpy's values, the interpreter's, and finite differences' gradients, for reads at
shifts, in reverse, by steps, across axes and through transposes; and where a reduction
reads the concat, or a size is known only when the code runs, the concat stays stored."""

import os

import numpy as np
import pytest

import tracer as tt
from tests import exported_c

RNG = np.random.default_rng(3)


def _both(function, *arguments):
    """(the C module's values, the interpreter's, the optimized graph's top-level ops)."""
    compiled = tt.function(function, backend="c")
    got = compiled(*arguments)
    interpreted = tt.function(function, backend="interpreter")(*arguments)
    graph = compiled.get_concrete_function(*arguments).stages.final
    return got, interpreted, [node.op for node in graph.nodes]


def _rate(x, y):
    return tt.concat([x[:1], x[1:] * y[:-1]], 0)


def _rate_numpy(x, y):
    return np.concatenate([x[:1], x[1:] * y[:-1]])


def _stages(x, y, h):
    k1 = _rate(x, y)
    k2 = _rate(x, y + h / 2 * k1)
    k3 = _rate(x, y + h / 2 * k2)
    return y + h / 6 * (k1 + 2.0 * k2 + 3.0 * k3)


def _stages_numpy(x, y, h):
    k1 = _rate_numpy(x, y)
    k2 = _rate_numpy(x, y + h / 2 * k1)
    k3 = _rate_numpy(x, y + h / 2 * k2)
    return y + h / 6 * (k1 + 2.0 * k2 + 3.0 * k3)


def test_a_chain_of_shifted_concats_is_one_kernel_with_numpys_values():
    x, y = RNG.uniform(size=1000), RNG.uniform(size=1000)
    got, interpreted, ops = _both(lambda x, y: _stages(x, y, 0.3), x, y)
    want = _stages_numpy(x, y, 0.3)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(interpreted.numpy(), want, rtol=1e-14)
    assert "concat" not in ops and ops.count("fused") <= 3  # (x[1:], y[:-1]: views)


def test_the_loops_are_cut_where_the_input_read_changes():
    x, y = RNG.uniform(size=64), RNG.uniform(size=64)
    compiled = tt.function(lambda x, y: _stages(x, y, 0.5), backend="c")
    source = compiled.get_concrete_function(x, y).c_source()
    # the first three elements read x[:1] at some stage; from the fourth on, none does
    assert source.count("for (int64_t i0 = 0; i0 < 1; i0++)") == 3
    assert "i0 < 61;" in source
    np.testing.assert_allclose(compiled(x, y).numpy(), _stages_numpy(x, y, 0.5), rtol=1e-14)


@pytest.mark.parametrize(
    "read",
    [
        lambda joined: joined[::-1] * 2.0,
        lambda joined: joined[1::3] + 1.0,
        lambda joined: tt.exp(joined[::-2]),
    ],
)
def test_reversed_and_strided_reads_of_a_concat(read):
    a, b = RNG.normal(size=7), RNG.normal(size=12)

    def f(a, b):
        return read(tt.concat([a * 3.0, tt.sin(b), a], 0))

    got, interpreted, ops = _both(f, a, b)
    joined = np.concatenate([a * 3.0, np.sin(b), a])
    want = read(tt.constant(joined)).numpy()
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(interpreted.numpy(), want, rtol=1e-14)
    assert "concat" not in ops


def test_a_concat_on_the_last_axis_read_through_a_transpose():
    a, b = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 4))

    def f(a, b):
        joined = tt.concat([tt.tanh(a), b * b], 1)
        return tt.transpose(joined) * 2.0 + tt.transpose(tt.concat([b, a], 1))

    got, interpreted, ops = _both(f, a, b)
    want = np.concatenate([np.tanh(a), b * b], 1).T * 2.0 + np.concatenate([b, a], 1).T
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-14)
    np.testing.assert_allclose(interpreted.numpy(), want, rtol=1e-14)
    assert "concat" not in ops


def test_a_concat_broadcast_along_another_axis():
    a, b, c = RNG.normal(size=3), RNG.normal(size=4), RNG.normal(size=(6, 1))

    def f(a, b, c):
        return tt.concat([a, b + 1.0], 0) * c

    got, _, ops = _both(f, a, b, c)
    np.testing.assert_allclose(got.numpy(), np.concatenate([a, b + 1.0]) * c, rtol=1e-14)
    assert "concat" not in ops


def test_integer_and_bool_concats():
    a, b = RNG.integers(-5, 5, size=9), RNG.integers(-5, 5, size=4)

    def f(a, b):
        joined = tt.concat([a * 2, b], 0)
        signs = tt.concat([a > 0, b < 0], 0)
        return tt.where(signs, joined, -joined)

    got, _, ops = _both(f, a, b)
    joined = np.concatenate([a * 2, b])
    want = np.where(np.concatenate([a > 0, b < 0]), joined, -joined)
    np.testing.assert_array_equal(got.numpy(), want)
    assert "concat" not in ops


def test_a_concat_a_reduction_reads_stays_stored():
    a, b = RNG.normal(size=(4, 5)), RNG.normal(size=(2, 5))

    def f(a, b):
        joined = tt.concat([tt.exp(a), b * 2.0], 0)
        return tt.reduce_sum(joined * 3.0, axis=0), joined + 1.0

    compiled = tt.function(f, backend="c")
    total, shifted = compiled(a, b)
    joined = np.concatenate([np.exp(a), b * 2.0])
    np.testing.assert_allclose(total.numpy(), (joined * 3.0).sum(axis=0), rtol=1e-14)
    np.testing.assert_allclose(shifted.numpy(), joined + 1.0, rtol=1e-14)
    graph = compiled.get_concrete_function(a, b).stages.final
    stored = [  # the concat's own kernel, whose result the sum reads
        node
        for node in graph.nodes
        if node.op == "fused"
        and node.shape == (6, 5)
        and [n.op for n in node.attrs["kernel"].body.nodes if n.op != "input"][-1] == "concat"
    ]
    assert len(stored) == 1


def test_a_loss_and_a_value_through_a_concat_are_not_one_reduction_kernel():
    x = RNG.normal(size=300)

    def f(x):
        return tt.reduce_sum(tt.exp(x)), tt.concat([x[1:], x[:1]], 0) * tt.exp(x)

    (total, rolled), interpreted, _ = _both(f, x)
    np.testing.assert_allclose(total.numpy(), np.exp(x).sum(), rtol=1e-13)
    np.testing.assert_allclose(rolled.numpy(), np.roll(x, -1) * np.exp(x), rtol=1e-14)
    np.testing.assert_allclose(interpreted[1].numpy(), np.roll(x, -1) * np.exp(x), rtol=1e-14)


def test_gradients_through_a_fused_concat_match_finite_differences_to_the_second_order():
    x = RNG.uniform(0.2, 1.0, size=20)
    weights = np.linspace(0.5, 2.0, 20)

    def value(x):
        return tt.reduce_sum(tt.sin(_stages(x, x * 0.5, 0.4)) * weights)

    def value_numpy(x):
        return float(np.sum(np.sin(_stages_numpy(x, x * 0.5, 0.4)) * weights))

    @tt.function(backend="c")
    def derivatives(x):
        with tt.GradientTape() as outer:
            outer.watch(x)
            with tt.GradientTape() as inner:
                inner.watch(x)
                y = value(x)
            g = inner.gradient(y, x)
        return g, outer.jacobian(g, x)

    g, h = (t.numpy() for t in derivatives(tt.constant(x)))
    eps = 1e-6
    steps = np.eye(20) * eps
    fd = np.array([(value_numpy(x + s) - value_numpy(x - s)) / (2 * eps) for s in steps])
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)
    gradient = tt.function(lambda x: tt.gradients(value(x), x)[0], backend="interpreter")
    fd2 = np.array(
        [
            (gradient(tt.constant(x + s)).numpy() - gradient(tt.constant(x - s)).numpy())
            / (2 * eps)
            for s in steps
        ]
    )
    np.testing.assert_allclose(h, fd2, rtol=1e-5, atol=1e-7)


def test_sizes_known_only_when_the_code_runs_keep_the_concat_stored():
    spec = tt.TensorSpec([None], tt.float64)
    f = tt.function(lambda x, y: _stages(x, y, 0.3), input_signature=[spec, spec])
    for n in (3, 50):
        x, y = RNG.uniform(size=n), RNG.uniform(size=n)
        np.testing.assert_allclose(f(x, y).numpy(), _stages_numpy(x, y, 0.3), rtol=1e-14)
    assert "concat" in [node.op for node in f.get_concrete_function().stages.final.nodes]


def test_exported_c_with_a_fused_concat_builds_strictly(tmp_path):
    x, y = RNG.uniform(size=40), RNG.uniform(size=40)
    spec = tt.TensorSpec([40], tt.float64)
    want = _stages_numpy(x, y, 0.3)
    tt.export_c(
        tt.function(lambda x, y: _stages(x, y, 0.3)), [spec, spec], str(tmp_path), prefix="ode"
    )
    calls = [exported_c.Call("ode", [x, y], [want])]
    main = os.path.join(str(tmp_path), "main.c")
    with open(main, "w") as handle:
        handle.write(exported_c.main_source("ode", calls))
    program = exported_c.build(str(tmp_path), "ode", [*exported_c.STRICT, "-O2"], [main])
    (got,) = exported_c.run(program, calls)
    np.testing.assert_allclose(got[0], want, rtol=1e-14)


def test_a_value_written_over_its_input_never_reads_a_shifted_concat_of_it():
    """A kernel cut in boxes reads its input at other elements than it writes (each box's
    loops run from its start): it is never written over that input (a loop's carried value,
    a variable's update)."""
    x = np.arange(1.0, 9.0).reshape(2, 4)

    def delayed(x):
        def body(i, y):
            return i + 1, tt.concat([tt.zeros((2, 1), tt.float64), y[:, :-1]], 1)

        return tt.while_loop(lambda i, y: i < 2, body, (tt.constant(0), x))[1]

    got, interpreted, _ = _both(delayed, x)
    want = np.concatenate([np.zeros((2, 2)), x[:, :2]], 1)
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(interpreted.numpy(), want)
    v = tt.Variable(np.arange(1.0, 13.0).reshape(3, 4))
    start = v.numpy()

    @tt.function(backend="c")
    def update():
        v.assign(tt.concat([v[:, :1] + 1.0, v[:, :-1] * 2.0], 1))

    update()
    np.testing.assert_array_equal(
        v.numpy(), np.concatenate([start[:, :1] + 1.0, start[:, :-1] * 2.0], 1)
    )


def test_a_kernel_reading_a_concat_does_not_compute_a_product_by_rows():
    x, w, a = RNG.normal(size=(1024, 16)), RNG.normal(size=(16, 512)), RNG.normal(size=(1024, 512))

    def f(x, w, a):
        return tt.matmul(x, w) * tt.concat([a[:1], a[1:] * 2.0], 0)

    got, _, _ = _both(f, x, w, a)
    want = (x @ w) * np.concatenate([a[:1], a[1:] * 2.0])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_a_scalar_read_of_a_concat():
    v, u = RNG.normal(size=5), RNG.normal(size=3)
    read = tt.function(lambda v, u: tt.concat([v * 2.0, u], 0)[6] + 1.0, backend="c")
    picked = tt.function(lambda v, u: tt.gather(tt.concat([v * 2.0, u], 0), 6) * 2.0)
    assert float(read(v, u)) == u[1] + 1.0
    assert float(picked(v, u)) == u[1] * 2.0
