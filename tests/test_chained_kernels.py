"""Stored values of one shape that only the last of them reads (an optimizer's new slots,
read by the variable's update) are one kernel of several results (tracer/passes/fuse.py,
`_chained_siblings`), written over the variables they update."""

import json
import re

import numpy as np
import pytest

import tracer as tt
from tracer.passes import fuse

RNG = np.random.default_rng(17)


def _adam_steps(monkeypatch, tmp_path, chained, steps=3):
    """The variables after `steps` compiled Adam steps of a small tanh layer, the step's
    optimized IR and C, with chained kernels on or off."""
    if not chained:
        monkeypatch.setattr(fuse, "_chained_siblings", lambda *args: {})
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path / str(chained)))
    rng = np.random.default_rng(4)
    w = tt.Variable(rng.standard_normal((64, 32)).astype(np.float32))
    b = tt.Variable(rng.standard_normal(32).astype(np.float32))
    x = tt.constant(rng.standard_normal((16, 64)).astype(np.float32))
    optimizer = tt.optimizers.Adam(0.01)

    def step(x):
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum(tt.tanh(x @ w + b) ** 2)
        optimizer.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
        return loss

    compiled = tt.function(step)
    losses = [compiled(x).numpy() for _ in range(steps)]
    concrete = compiled.get_concrete_function(x)
    return [w.numpy(), b.numpy(), *losses], concrete.ir("optimized"), concrete.c_source()


def test_an_adam_step_updates_each_variable_and_its_slots_in_one_loop(monkeypatch, tmp_path):
    """Each variable's two slots and its update are one kernel of three results, written
    over the variable and its slots (no copy after the run); the values are the bits of
    the kernels computed one by one, and eager mode's to rounding."""
    values, ir, source = _adam_steps(monkeypatch, tmp_path, chained=True)
    assert len(re.findall(r"\(f32\[64,32\], f32\[64,32\], f32\[64,32\]\) = fused\[", ir)) == 1
    assert len(re.findall(r"\(f32\[32\], f32\[32\], f32\[32\]\) = fused\[", ir)) == 1
    assert "the new value of input" not in source
    apart, apart_ir, apart_source = _adam_steps(monkeypatch, tmp_path, chained=False)
    assert "(f32[64,32], f32[64,32], f32[64,32])" not in apart_ir
    assert "the new value of input" not in apart_source
    for got, want in zip(values, apart):
        np.testing.assert_array_equal(got, want)

    rng = np.random.default_rng(4)
    w = tt.Variable(rng.standard_normal((64, 32)).astype(np.float32))
    b = tt.Variable(rng.standard_normal(32).astype(np.float32))
    x = tt.constant(rng.standard_normal((16, 64)).astype(np.float32))
    optimizer = tt.optimizers.Adam(0.01)
    for _ in range(3):
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum(tt.tanh(x @ w + b) ** 2)
        optimizer.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
    np.testing.assert_allclose(values[0], w.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(values[1], b.numpy(), rtol=1e-5, atol=1e-5)


def test_a_value_another_kernel_reads_keeps_its_own():
    """`a` is read by a product as well as by `c`: one kernel at `c` would compute it after
    the product needs it, so `a` and `c` stay two kernels."""

    @tt.function
    def f(x, w):
        a = x * 2.0 + 1.0
        y = tt.matmul(a, w)
        c = a * 3.0 - x
        return a, y, c

    x, w = tt.constant(RNG.standard_normal((40, 30))), tt.constant(RNG.standard_normal((30, 20)))
    a, y, c = f(x, w)
    assert "(f64[40,30], f64[40,30]) = fused[" not in f.get_concrete_function(x, w).ir("optimized")
    xa, wa = x.numpy(), w.numpy()
    np.testing.assert_allclose(a.numpy(), xa * 2 + 1, rtol=1e-15)
    np.testing.assert_allclose(y.numpy(), (xa * 2 + 1) @ wa, rtol=1e-12)
    np.testing.assert_allclose(c.numpy(), (xa * 2 + 1) * 3 - xa, rtol=1e-15)


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_momentum_in_a_compiled_loop_is_one_kernel_written_over_the_carried_values(backend):
    """Gradient descent with momentum in a `tt.range` loop: the new momentum, read by the
    new weights alone, is computed in their kernel, which writes both over the loop's
    carried values (its pointers are then not `restrict`); the values are numpy's loop's."""

    @tt.function(backend=backend)
    def train(w, m, x, n):
        for _ in tt.range(n):
            m = 0.9 * m + 2.0 * (w - x)
            w = w - 0.01 * m
        return w, m

    w, m, x = (tt.constant(RNG.standard_normal((50, 40))) for _ in range(3))
    n = tt.constant(6)
    got_w, got_m = train(w, m, x, n)
    if backend == "c":
        concrete = train.get_concrete_function(w, m, x, n)
        ir = concrete.ir("optimized")
        assert len(re.findall(r"\(f64\[50,40\], f64\[50,40\]\) = fused\[", ir)) == 1
        kernel = r"void k\d+_\w+_50x40\(const double \*p0, .*double \*out0, double \*out1\)"
        assert re.search(kernel, concrete.c_source())
    ww, mm, xx = w.numpy(), m.numpy(), x.numpy()
    for _ in range(6):
        mm = 0.9 * mm + 2.0 * (ww - xx)
        ww = ww - 0.01 * mm
    np.testing.assert_allclose(got_w.numpy(), ww, rtol=1e-13)
    np.testing.assert_allclose(got_m.numpy(), mm, rtol=1e-13)


def test_a_result_that_does_not_read_its_variable_is_copied_over_it():
    """`a` gets `2x`, and `b` reads the new `a` and the old one: one kernel computes both,
    and writes b over its variable; a's new value, which does not read the old, is copied
    after the kernel, whose other result still reads the old `a` (a store over it could
    come before that load)."""
    a0, b0, x0 = (RNG.standard_normal(3000) for _ in range(3))
    a, b, x = tt.Variable(a0), tt.Variable(b0), tt.constant(x0)

    @tt.function
    def step(x):
        old = a.read_value()
        a.assign(x * 2.0)
        b.assign(b + a * 3.0 + old)
        return b

    step(x)
    concrete = step.get_concrete_function(x)
    assert "(f64[3000], f64[3000]) = fused[" in concrete.ir("optimized")
    assert concrete.c_source().count("the new value of input") == 1
    np.testing.assert_array_equal(a.numpy(), x0 * 2.0)
    np.testing.assert_allclose(b.numpy(), b0 + x0 * 6.0 + a0, rtol=1e-15)


def test_the_profiler_counts_every_result_of_a_kernel_of_several(tmp_path):
    """The momentum and the weight are one kernel: the profiler's trace gives its line, its
    nodes and the bytes it moves, the momentum's and the weight's writes included."""
    w, m = tt.Variable(np.zeros(5000)), tt.Variable(np.zeros(5000))

    @tt.function
    def step(g):
        m.assign(0.9 * m + g)
        w.assign(w - 0.01 * m)

    g = tt.constant(np.ones(5000))
    step(g)
    with tt.profiler.profile() as prof:
        step(g)
    with open(prof.export_chrome_trace(str(tmp_path / "trace.json"))) as file:
        events = json.load(file)["traceEvents"]
    (kernel,) = [e for e in events if e.get("cat") == "kernel"]
    assert kernel["args"]["step"].startswith("fused (f64[5000], f64[5000])")
    assert kernel["args"]["bytes"] == 5 * 5000 * 8  # reads g, m and w; writes m and w
    np.testing.assert_allclose(m.numpy(), 1.9)
    np.testing.assert_allclose(w.numpy(), -0.01 - 0.019)


def _random_program(rng):
    """A step over three variables and an input of 64 elements: eight values, each an
    elementwise op of earlier ones; some assigned to the variables (in a random order),
    some returned. Stored values that later stored values read are what chains."""
    ops = [
        lambda a, b: a + b,
        lambda a, b: a * b,
        lambda a, b: a - 0.5 * b,
        lambda a, b: tt.tanh(a) + b,
        lambda a, b: tt.exp(-tt.square(a)) * b,
    ]
    plan = [(rng.integers(len(ops)), rng.integers(4 + k), rng.integers(4 + k)) for k in range(8)]
    assigned = list(zip(rng.permutation(3), rng.choice(8, size=3, replace=False)))
    returned = sorted(set(rng.choice(8, size=3).tolist()))

    def step(variables, x):
        values = [x, *(v.read_value() for v in variables)]
        for op, a, b in plan:
            values.append(ops[op](values[a], values[b]))
        for variable, value in assigned:
            variables[variable].assign(values[4 + value])
        return [values[4 + k] for k in returned]

    return step


@pytest.mark.parametrize("seed", range(12))
def test_random_steps_give_eager_values(seed):
    """Random steps of stored values reading stored values, assigned to variables and
    returned: the compiled step (chained where it can) gives eager mode's values, its
    variables too, over two calls."""
    rng = np.random.default_rng(seed)
    step = _random_program(rng)
    start = [rng.uniform(-1, 1, 64) for _ in range(3)]
    x = tt.constant(rng.uniform(-1, 1, 64))
    eager = [tt.Variable(v) for v in start]
    compiled_variables = [tt.Variable(v) for v in start]
    compiled = tt.function(lambda x: step(compiled_variables, x))
    for _ in range(2):
        want = step(eager, x)
        got = compiled(x)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12)
        for g, w in zip(compiled_variables, eager):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12, atol=1e-12)
