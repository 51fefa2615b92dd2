"""tt.function: tracing per signature, variables, structures, stages, fusion, and transforms."""

import json
import logging
import os
import re

import numpy as np
import pytest

import tracer as tt
import tracer.passes.pipeline
from codegen import shared_kernels


def test_traces_once_per_signature_and_reuses_it():
    @tt.function
    def f(x, scale):
        return x * scale

    a, b = tt.constant([1.0, 2.0]), tt.constant([3.0, 4.0])
    np.testing.assert_array_equal(f(a, 2.0).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(f(b, 2.0).numpy(), [6.0, 8.0])
    assert f.experimental_get_tracing_count() == 1
    f(b, 3.0)  # a new Python value
    f(tt.constant([1.0, 2.0, 3.0]), 3.0)  # a new shape
    f(tt.constant([1.0, 2.0], dtype=tt.float64), 3.0)  # a new dtype
    assert f.experimental_get_tracing_count() == 4
    np.testing.assert_array_equal(f(np.array([1.0, 2.0], np.float32), 3.0).numpy(), [3.0, 6.0])
    assert f.experimental_get_tracing_count() == 4  # numpy arrays share the tensor signature


def test_retracing_logs_what_changed(caplog):
    @tt.function(reduce_retracing=False)  # one trace per size, as TensorFlow's default
    def f(x, n):
        return x + n

    with caplog.at_level(logging.INFO, logger="tracer.function"):
        f(tt.constant([1.0, 2.0]), 1)
        f(tt.constant([1.0, 2.0, 3.0]), 1)
        f(tt.constant([1.0, 2.0, 3.0]), 2)
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2
    assert "float32[2] -> float32[3]" in messages[0]
    assert "1 -> 2" in messages[1]


def test_python_control_flow_is_unrolled_at_trace_time():
    @tt.function
    def power(x, n):
        result = tt.ones_like(x)
        for _ in range(n):
            result = result * x
        return result

    x = tt.constant([2.0, 3.0])
    np.testing.assert_array_equal(power(x, 3).numpy(), [8.0, 27.0])
    assert power.get_concrete_function(x, 3).ir("traced").count("= mul") == 3


def test_variables_are_read_at_call_time_and_assigns_are_written_back():
    v = tt.Variable([1.0, 2.0])
    counter = tt.Variable(0.0)

    @tt.function
    def step(x):
        counter.assign_add(1.0)
        return x * v

    np.testing.assert_array_equal(step(tt.constant([1.0, 1.0])).numpy(), [1.0, 2.0])
    v.assign([10.0, 20.0])
    np.testing.assert_array_equal(step(tt.constant([1.0, 1.0])).numpy(), [10.0, 20.0])
    assert counter.numpy() == 2.0 and step.experimental_get_tracing_count() == 1


def test_a_different_variable_of_the_same_shape_retraces_and_gets_its_own_gradient():
    @tt.function
    def grad_of(w, x):
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum(w * x)
        return tape.gradient(loss, w)

    w1, w2 = tt.Variable([1.0, 2.0]), tt.Variable([3.0, 4.0])
    x = tt.constant([5.0, 6.0])
    np.testing.assert_array_equal(grad_of(w1, x).numpy(), [5.0, 6.0])
    np.testing.assert_array_equal(grad_of(w2, x * 2.0).numpy(), [10.0, 12.0])
    assert grad_of.experimental_get_tracing_count() == 2


def test_nested_structures_in_and_out():
    @tt.function
    def f(inputs):
        total = inputs["a"] + inputs["pair"][0] * inputs["pair"][1]
        return {"total": total, "parts": [inputs["a"], total * 2.0], "label": "done"}

    out = f({"a": tt.constant(1.0), "pair": (tt.constant(2.0), tt.constant(3.0))})
    assert out["label"] == "done"
    assert float(out["total"]) == 7.0
    assert [float(t) for t in out["parts"]] == [1.0, 14.0]


def test_input_signature_is_checked():
    @tt.function(input_signature=[tt.TensorSpec((2,), tt.float32)])
    def f(x):
        return x * 2.0

    np.testing.assert_array_equal(f(tt.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    with pytest.raises(ValueError, match="input_signature"):
        f(tt.constant([1.0, 2.0, 3.0]))


def test_a_signature_of_unknown_rank_takes_any_rank_and_traces_once_per_rank():
    """TensorSpec(None, dtype), as in TensorFlow's tf.function guide: any rank, one trace per
    rank with every dimension unknown; a concrete function of such a spec needs a rank."""

    @tt.function(input_signature=[tt.TensorSpec(None, tt.float32)])
    def f(x):
        return tt.reduce_sum(x * x)

    for shape in [(3,), (2, 3), (4, 5), (), (2, 1, 3), (7,)]:
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 1.5
        np.testing.assert_allclose(f(x).numpy(), np.sum(x * x), rtol=1e-6)
    assert f.experimental_get_tracing_count() == 4  # ranks 1, 2, 0 and 3
    with pytest.raises(TypeError, match="float32"):  # a tensor must have the spec's dtype
        f(tt.constant(np.ones(3)))
    assert float(f(np.ones(3))) == 3.0  # a numpy array is cast to it, as TensorFlow 2.21 does
    with pytest.raises(TypeError, match="known rank"):
        f.get_concrete_function()
    concrete = f.get_concrete_function(tt.TensorSpec([None, 2], tt.float32))
    assert float(concrete(np.ones((5, 2), np.float32))) == 10.0
    assert tt.TensorSpec(None, tt.float32).text() == "float32[...]"


def test_seed_examples_compiled_give_the_seed_values():
    @tt.function
    def square_gradient(x):
        with tt.GradientTape() as g:
            g.watch(x)
            y = x * x
        return g.gradient(y, x)

    @tt.function
    def second_derivative(x):
        with tt.GradientTape() as g:
            g.watch(x)
            with tt.GradientTape() as gg:
                gg.watch(x)
                y = x * x
            dy_dx = gg.gradient(y, x)
        return dy_dx, g.gradient(dy_dx, x)

    @tt.function
    def persistent(x):
        with tt.GradientTape(persistent=True) as g:
            g.watch(x)
            y = x * x
            z = y * y
        return g.gradient(z, x), g.gradient(y, x)

    @tt.function
    def jacobians(x, xb):
        with tt.GradientTape(persistent=True) as g:
            g.watch([x, xb])
            y, yb = x * x, xb * xb
        return g.jacobian(y, x), g.batch_jacobian(yb, xb)

    assert float(square_gradient(tt.constant(3.0))) == 6.0
    assert [float(t) for t in second_derivative(tt.constant(5.0))] == [10.0, 2.0]
    assert [float(t) for t in persistent(tt.constant(3.0))] == [108.0, 6.0]
    j, bj = jacobians(tt.constant([1.0, 2.0]), tt.constant([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_array_equal(j.numpy(), [[2.0, 0.0], [0.0, 4.0]])
    np.testing.assert_array_equal(bj.numpy(), [[[2, 0], [0, 4]], [[6, 0], [0, 8]]])
    assert square_gradient.get_concrete_function(tt.constant(3.0)).backend == "c"


def loss_and_grad(x):
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(tt.sin(x) * tt.exp(-x * x) + tt.tanh(x) * x)
    return y, tape.gradient(y, x)


def _libm_calls(source, names=("sin", "cos", "exp", "tanh")):
    """How many times the kernels call each function (its vector declaration not counted)."""
    return {
        name: len(re.findall(rf"\b{name}\(", source))
        - len(re.findall(rf" {name}\(double\);", source))
        for name in names
    }


def test_fusion_makes_the_loss_and_its_gradient_one_loop_over_a_large_x():
    """Past the caches, memory traffic bounds the loops: the loss (a sum over every element)
    and its gradient (elementwise over x) read the same values, so they are one kernel of two
    results, one loop over x that computes sin, exp and tanh once for both (issue 20's
    sibling fusion; they were two loops that each called the math library)."""
    f = tt.function(loss_and_grad)
    x = tt.constant(np.linspace(-2, 2, 200_003))
    concrete = f.get_concrete_function(x)
    loops_over_x = re.findall(r"for \(int64_t \w+ = 0; \w+ < 200003;", concrete.c_source())
    assert len(loops_over_x) == 1
    optimized = concrete.ir("optimized")
    assert optimized.count("= fused") == 1
    assert "(f64[], f64[200003]) = fused[kernel=k_reduce_sum_" in optimized
    assert _libm_calls(concrete.c_source()) == {"sin": 1, "cos": 1, "exp": 1, "tanh": 1}
    _check_loss_and_grad(f, x)
    _check_loss_and_grad(tt.function(loss_and_grad, backend="interpreter"), x)


def test_costly_values_that_fit_in_the_caches_are_computed_once_for_both_loops():
    """sin, exp and tanh of 1237 values are stored and read by the loss's and the gradient's
    kernel: computing them costs more than reading them back. The three read only x: one
    kernel computes them, in one loop; the loss and the gradient read them in another."""
    f = tt.function(loss_and_grad)
    x = tt.constant(np.linspace(-2, 2, 1237))
    concrete = f.get_concrete_function(x)
    assert _libm_calls(concrete.c_source()) == {"sin": 1, "cos": 1, "exp": 1, "tanh": 1}
    optimized = concrete.ir("optimized")
    assert optimized.count("= fused") == 2
    assert (
        "(f64[1237], f64[1237], f64[1237]) = fused[kernel=k_sin_neg_mul_exp_tanh_1237] %0"
        in optimized
    )
    _check_loss_and_grad(f, x)
    _check_loss_and_grad(tt.function(loss_and_grad, backend="interpreter"), x)


def _check_loss_and_grad(f, x):
    y, g = f(x)
    v = x.numpy()
    np.testing.assert_allclose(
        float(y), np.sum(np.sin(v) * np.exp(-v * v) + np.tanh(v) * v), rtol=1e-12
    )
    expected = (
        np.cos(v) * np.exp(-v * v)
        - 2 * v * np.sin(v) * np.exp(-v * v)
        + np.tanh(v)
        + v * (1 - np.tanh(v) ** 2)
    )
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-10)


def test_a_value_broadcast_through_views_into_a_larger_kernel_is_computed_once():
    """tanh of 8x16 values, transposed, reshaped and broadcast into a 16x8x5 product: the
    tanh kernel is stored (8x16 evaluations), not recomputed for each of the 640 elements."""

    @tt.function
    def f(x, w):
        t = tt.reshape(tt.transpose(tt.tanh(x)), (16, 8, 1))
        return t * tt.reshape(w, (16, 1, 5))

    x, w = tt.constant(rng_values((8, 16))), tt.constant(rng_values((16, 5)))
    concrete = f.get_concrete_function(x, w)
    kernels = re.findall(r"= fused\[kernel=(\w+)\]", concrete.ir("optimized"))
    assert len(kernels) == 2 and any("tanh" in k and k.endswith("8x16") for k in kernels)
    expected = np.tanh(x.numpy()).T[:, :, None] * w.numpy()[:, None, :]
    np.testing.assert_allclose(f(x, w).numpy(), expected, rtol=1e-12)


def rng_values(shape):
    return np.random.default_rng(3).standard_normal(shape)


def test_every_stage_prints_and_the_c_names_its_sources(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACER_DUMP", str(tmp_path))
    f = tt.function(loss_and_grad)
    concrete = f.get_concrete_function(tt.constant([0.5, 1.5]))
    traced, optimized = concrete.ir("traced"), concrete.ir("optimized")
    assert "= sin %0" in traced and "test_function.py:" in traced
    assert (
        "fused[kernel=k_reduce_sum_" in optimized
        and "fused[kernel=k_sin_neg_mul_exp_tanh_2]" in optimized
    )
    assert "seed0" in concrete.ir("grad")
    assert concrete.ir("pruned").count("\n") <= traced.count("\n")
    assert (
        "test_function.py:" in concrete.c_source()
        and "int tracer_run(char **args)" in concrete.c_source()
    )
    assert concrete.graphviz().startswith("digraph loss_and_grad {")
    dumped = sorted(p.name.split(".", 2)[2] for p in tmp_path.iterdir())
    assert dumped == [
        "c",
        "contracted.ir",
        "convolved.ir",
        "decomposed.ir",
        "deduplicated.ir",
        "grad.ir",
        "optimized.ir",
        "pruned.ir",
        "reassociated.ir",
        "simplified.ir",
        "traced.ir",
    ]
    with pytest.raises(ValueError, match="unknown stage"):
        concrete.ir("nonsense")


def test_interpreter_backend_has_no_c_source():
    f = tt.function(loss_and_grad, backend="interpreter")
    concrete = f.get_concrete_function(tt.constant([0.5]))
    assert concrete.backend == "interpreter"
    with pytest.raises(RuntimeError, match="numpy interpreter"):
        concrete.c_source()


def test_grad_and_value_and_grad_compose_with_each_other_and_with_function():
    def f(x):
        return x * x * x

    assert float(tt.grad(f)(2.0)) == 12.0
    assert float(tt.grad(tt.grad(f))(2.0)) == 12.0
    assert float(tt.function(tt.grad(f))(tt.constant(2.0))) == 12.0
    assert float(tt.grad(tt.function(f))(tt.constant(2.0))) == 12.0
    value, (gx, gy) = tt.value_and_grad(lambda x, y: x * y + x, argnums=(0, 1))(
        tt.constant(3.0), tt.constant(4.0)
    )
    assert (float(value), float(gx), float(gy)) == (15.0, 5.0, 3.0)
    assert (
        float(tt.grad(lambda x, y: x * 2.0, argnums=1)(tt.constant(1.0), tt.constant(5.0))) == 0.0
    )


def test_a_compiled_function_under_an_eager_tape_is_differentiable():
    f = tt.function(lambda x: tt.sin(x) * x)
    x = tt.constant(0.7, dtype=tt.float64)
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as inner:
            inner.watch(x)
            y = f(x)
        g = inner.gradient(y, x)
    h = outer.gradient(g, x)
    np.testing.assert_allclose(float(g), np.cos(0.7) * 0.7 + np.sin(0.7), rtol=1e-12)
    np.testing.assert_allclose(float(h), -np.sin(0.7) * 0.7 + 2 * np.cos(0.7), rtol=1e-12)


def test_compiled_training_step_matches_eager_for_20_steps():
    def make():
        tt.random.set_seed(1)
        model = tt.layers.Sequential([tt.layers.Dense(16, activation="relu"), tt.layers.Dense(3)])
        return model, tt.optimizers.SGD(0.1)

    rng = np.random.default_rng(0)
    x = tt.constant(rng.standard_normal((32, 5)).astype(np.float32))
    y = tt.constant(rng.integers(0, 3, 32).astype(np.int32))

    def losses(model, optimizer, compiled):
        def grads(x, y):
            with tt.GradientTape() as tape:
                loss = tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(y, model(x)))
            return loss, tape.gradient(loss, model.trainable_variables)

        step = tt.function(grads) if compiled else grads
        model(x)  # build the variables before tracing
        result = []
        for _ in range(20):
            loss, g = step(x, y)
            optimizer.apply_gradients(zip(g, model.trainable_variables))
            result.append(float(loss))
        return result, step

    eager, _ = losses(*make(), compiled=False)
    compiled, step = losses(*make(), compiled=True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-5)
    assert eager[-1] < eager[0] and step.experimental_get_tracing_count() == 1


def test_a_compiled_function_is_one_op_on_an_eager_tape_with_a_compiled_backward():
    w = tt.Variable(np.array([[0.5, -1.0], [2.0, 0.25]]))

    @tt.function
    def model(x):
        h = tt.tanh(x @ w)
        return tt.reduce_sum(h * h), h

    x = tt.constant(np.array([[1.0, 2.0], [3.0, -1.0]]))
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        loss, hidden = model(x)
    ops = [line.split(" = ")[1].split()[0].split("[")[0] for line in tape.ir().splitlines()]
    assert ops.count("call") == 1 and "tanh" not in ops and "matmul" not in ops
    gx, gw = tape.gradient(loss, [x, w])
    h = np.tanh(x.numpy() @ w.numpy())
    dh = 2 * h * (1 - h * h)
    np.testing.assert_allclose(gx.numpy(), dh @ w.numpy().T, rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), x.numpy().T @ dh, rtol=1e-12)
    np.testing.assert_allclose(hidden.numpy(), h, rtol=1e-12)
    (call,) = [n for n in tape._recording_state.nodes if n.op == "call"]
    assert call.attrs["function"].vjp(tt.float64)[0]._executable.backend == "c"


def test_a_chain_thousands_of_ops_deep_compiles_without_recursion():
    def grad(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(1500):
                y = tt.sin(y) * 1.001
        return tape.gradient(y, x)

    x = tt.constant(0.5, dtype=tt.float64)
    np.testing.assert_allclose(float(tt.function(grad)(x)), float(grad(x)), rtol=1e-9)


def test_large_loops_run_on_every_core_and_still_agree_with_numpy():
    from codegen import build

    x = tt.constant(np.random.default_rng(5).standard_normal(1 << 20).astype(np.float32))
    total_of = tt.function(lambda x: tt.reduce_sum(tt.sin(x) * x))
    doubled_of = tt.function(lambda x: tt.tanh(x) * 2.0)
    total, doubled = total_of(x), doubled_of(x)
    v = x.numpy().astype(np.float64)
    np.testing.assert_allclose(float(total), np.sum(np.sin(v) * v), rtol=1e-5)
    np.testing.assert_allclose(doubled.numpy(), np.tanh(v) * 2.0, rtol=1e-5)
    if build.threads():  # the sum's halves are fixed; elementwise chunks go to whichever is free
        source = total_of.get_concrete_function(x).c_source()
        assert "#pragma omp parallel for simd reduction(+:acc)\n" in source
        source = doubled_of.get_concrete_function(x).c_source()
        assert "#pragma omp parallel for simd schedule(dynamic, 8192)\n" in source
    small = (
        tt.function(lambda x: tt.sin(x) * 2.0)
        .get_concrete_function(tt.constant([1.0, 2.0]))
        .c_source()
    )
    assert "omp parallel" not in small  # small loops stay on one core


def test_rows_shared_in_chunks_give_the_same_bits_at_every_call():
    from codegen import build

    x = tt.constant(np.random.default_rng(6).standard_normal((512, 1024)).astype(np.float32))
    f = tt.function(lambda x: tt.reduce_sum(tt.exp(x) * x, axis=1))
    first = f(x).numpy()
    np.testing.assert_allclose(first, np.sum(np.exp(x.numpy()) * x.numpy(), axis=1), rtol=1e-4)
    for _ in range(20):
        assert np.array_equal(f(x).numpy(), first)  # each row summed by one thread, in order
    if build.threads():
        source = f.get_concrete_function(x).c_source()
        assert "#pragma omp parallel for schedule(dynamic, 8)\n" in source  # 8 rows of 1024


def test_a_reshape_read_late_keeps_its_source_alive_in_the_workspace():
    def f(x, w):
        a = tt.sin(x) * 2.0  # stored: a matmul reads it
        b = tt.matmul(a, w)
        r = tt.reshape(a, (6, 4))  # an alias of a's buffer, read at the very end
        c = tt.tanh(b) * 3.0
        d = tt.matmul(c, tt.ones((6, 2), tt.float64))
        return tt.matmul(r, d)

    rng = np.random.default_rng(3)
    x, w = tt.constant(rng.standard_normal((4, 6))), tt.constant(rng.standard_normal((6, 6)))
    a = np.sin(x.numpy()) * 2.0
    d = (np.tanh(a @ w.numpy()) * 3.0) @ np.ones((6, 2))
    compiled = tt.function(f)
    np.testing.assert_allclose(compiled(x, w).numpy(), a.reshape(6, 4) @ d, rtol=1e-12)
    assert "k_reshape" not in compiled.get_concrete_function(x, w).c_source()  # no copy kernel


def test_compiled_calls_take_scalars_views_and_shared_inputs_as_numpy_would():
    """The generated call function reads numpy scalars and contiguous arrays in place, copies
    strided views, and returns inputs passed straight through as copies."""

    @tt.function(backend="c")
    def f(x, y):
        return x * 2.0 + tt.reduce_sum(y), x

    a = np.arange(6.0).reshape(2, 3)
    scalar = (
        tt.sin(tt.constant(np.pi / 2, dtype=tt.float64)) * 15.0
    )  # 0-d results are numpy scalars
    assert not isinstance(scalar._value, np.ndarray)
    view = tt.transpose(tt.constant(a))  # an eager transpose is a strided view
    assert not view._value.flags.c_contiguous
    out, same = f(view, scalar)
    np.testing.assert_array_equal(out.numpy(), a.T * 2.0 + a.sum())
    np.testing.assert_array_equal(same.numpy(), a.T)
    out2, _ = f(tt.constant(np.ascontiguousarray(a.T)), tt.constant(15.0, dtype=tt.float64))
    np.testing.assert_array_equal(out2.numpy(), out.numpy())
    assert f.get_concrete_function(view, scalar).backend == "c"
    same_again = f(view, scalar)[1].numpy()
    same_again[0, 0] = 99.0  # an output that is an input is a copy: changing it changes neither
    assert view.numpy()[0, 0] == 0.0 and same.numpy()[0, 0] == 0.0


def test_gradients_of_element_reads_are_summed_per_element_then_stacked():
    """x[0] read three times and x[1] twice: one cotangent per element, stacked, instead of
    five slice_grads of zeros added together; x[0:2] and x[2] of a longer x: one slice_grad
    each."""

    def f(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.sin(x[0]) * x[1] + x[0] * x[0] + x[1] * tt.cos(x[0])
        return tape.gradient(y, x)

    x = np.array([0.3, -0.7])
    compiled = tt.function(f)
    got = compiled(tt.constant(x)).numpy()
    a, b = x
    want = [np.cos(a) * b + 2 * a - b * np.sin(a), np.sin(a) + np.cos(a)]
    np.testing.assert_allclose(got, want, rtol=1e-14)
    grad_ir = compiled.get_concrete_function(tt.constant(x)).ir("simplified")
    assert "slice_grad" not in grad_ir and grad_ir.count("= concat") == 1

    def g(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(x[0:2] * x[0:2]) + x[2] * x[0]
        return tape.gradient(y, x)

    x = np.array([0.5, 2.0, -1.5, 4.0])
    got = tt.function(g)(tt.constant(x)).numpy()
    np.testing.assert_allclose(got, [2 * 0.5 - 1.5, 4.0, 0.5, 0.0], rtol=1e-14)
    ir = tt.function(g).get_concrete_function(tt.constant(x)).ir("simplified")
    assert ir.count("slice_grad") == 3  # x[0:2], x[2] and x[0]: one each


def test_gradients_of_ranges_that_cover_a_vector_are_concatenated():
    """An LSTM's gates: four ranges of one product, end to end, read apart: one concat of
    their cotangents, not four slice_grads of zeros added together, in every backend; ranges
    that leave a gap or overlap keep their slice_grads."""

    def gates(z, w):
        with tt.GradientTape() as tape:
            tape.watch(z)
            g = z * w
            f, i, o, c = (g[k * 3 : (k + 1) * 3] for k in (2, 0, 3, 1))  # out of order
            y = tt.reduce_sum(tt.sigmoid(f) * tt.tanh(c) + tt.sigmoid(i) * o * o)
        return tape.gradient(y, z)

    rng = np.random.default_rng(3)
    z, w = rng.normal(size=12), rng.normal(size=12)
    f, i, o, c = (np.split(z * w, 4)[k] for k in (2, 0, 3, 1))
    sf, si = 1 / (1 + np.exp(-f)), 1 / (1 + np.exp(-i))
    parts = {2: sf * (1 - sf) * np.tanh(c), 0: si * (1 - si) * o * o, 3: 2 * si * o}
    parts[1] = sf * (1 - np.tanh(c) ** 2)
    want = np.concatenate([parts[k] for k in range(4)]) * w
    for backend in ("eager", "interpreter", "c"):
        run = gates if backend == "eager" else tt.function(gates, backend=backend)
        got = run(tt.constant(z), tt.constant(w)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-13, err_msg=backend)
    ir = tt.function(gates).get_concrete_function(tt.constant(z), tt.constant(w)).ir("grad")
    assert "slice_grad" not in ir and ir.count("= concat") == 1

    def gap(z):
        with tt.GradientTape() as tape:
            tape.watch(z)
            y = tt.reduce_sum(z[0:4] * z[0:4]) + tt.reduce_sum(tt.sin(z[5:12]))
        return tape.gradient(y, z)

    got = tt.function(gap)(tt.constant(z)).numpy()
    np.testing.assert_allclose(got, np.r_[2 * z[:4], 0.0, np.cos(z[5:])], rtol=1e-14)
    ir = tt.function(gap).get_concrete_function(tt.constant(z)).ir("grad")
    assert ir.count("slice_grad") == 2


def recurrence(xs, w):
    """An unrolled recurrence as an LSTM cell's: c = c * sigmoid(w x_t) + tanh(x_t), with
    tanh(c) read at every step; the loss and its gradient."""
    with tt.GradientTape() as tape:
        tape.watch(w)
        c, total = tt.zeros_like(xs[0]), 0.0
        for t in range(xs.shape[0]):
            c = c * tt.sigmoid(w * xs[t]) + tt.tanh(xs[t])
            total += tt.reduce_sum(tt.tanh(c) * xs[t])
    return total, tape.gradient(total, w)


def _numpy_recurrence(xs, w):
    c, total, saved = np.zeros_like(xs[0]), 0.0, []
    for x in xs:
        gate = 1 / (1 + np.exp(-w * x))
        saved.append((c, gate, x))
        c = c * gate + np.tanh(x)
        total += np.sum(np.tanh(c) * x)
    d_w, d_c = np.zeros_like(w), np.zeros_like(w)
    for old, gate, x in reversed(saved):
        new = old * gate + np.tanh(x)
        d_c = d_c + x * (1 - np.tanh(new) ** 2)
        d_w += d_c * old * gate * (1 - gate) * x
        d_c = d_c * gate
    return total, d_w


def test_an_unrolled_recurrence_compiles_to_c_linear_in_its_steps():
    """Each step's cell state is read by the next step and by its own output: recomputed in
    every kernel that reads it, the chain would make the C quadratic in the steps. Values
    read by several kernels are stored once their computation grows past a bound, and the
    rows x[t] of an input are pointers into it, so the steps share their kernels: the C
    grows by the calls of a step, not by its kernels."""
    rng = np.random.default_rng(0)
    w = tt.constant(rng.uniform(-1, 1, 6))
    sizes, kernels = {}, {}
    for steps in (8, 16, 32):
        shared_kernels.forget()  # each module with its own kernels, not the last one's
        xs = tt.constant(rng.uniform(-1, 1, (steps, 6)))
        concrete = tt.function(recurrence).get_concrete_function(xs, w)
        total, grad = concrete(xs, w)
        expected_total, expected_grad = _numpy_recurrence(xs.numpy(), w.numpy())
        np.testing.assert_allclose(float(total), expected_total, rtol=1e-12)
        np.testing.assert_allclose(grad.numpy(), expected_grad, rtol=1e-10)
        sizes[steps] = len(concrete.c_source())
        kernels[steps] = len(
            re.findall(r"^static (?:TR_NOINLINE )?\w+ k\d+_", concrete.c_source(), re.M)
        )
    assert kernels[32] - kernels[16] < 16 / 2, kernels  # not a kernel or more per step
    per_step = [(sizes[16] - sizes[8]) / 8, (sizes[32] - sizes[16]) / 16]
    assert per_step[1] < 1.3 * per_step[0], sizes


def test_a_long_module_compiles_as_translation_units_at_once(tmp_path, monkeypatch):
    """A module whose entry point has many parts is compiled in several translation units at
    once (each with its share of the parts and of the kernels in blocks, one of them with the
    entry point), linked into one library that computes what the one-file build computes."""
    from codegen import units as module_units

    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(module_units, "count", lambda source: 3)
    rng = np.random.default_rng(2)
    xs, w = tt.constant(rng.uniform(-1, 1, (120, 6))), tt.constant(rng.uniform(-1, 1, 6))
    concrete = tt.function(recurrence).get_concrete_function(xs, w)
    (meta,) = [json.loads(p.read_text()) for p in tmp_path.rglob("meta.json")]
    assert meta["units"] == 3
    total, grad = concrete(xs, w)
    expected_total, expected_grad = _numpy_recurrence(xs.numpy(), w.numpy())
    np.testing.assert_allclose(float(total), expected_total, rtol=1e-12)
    np.testing.assert_allclose(grad.numpy(), expected_grad, rtol=1e-10)

    source = concrete.c_source()
    units = module_units.sources(source, 3)
    parts = re.findall(r"^TR_PART TR_CALLS_ONLY int (\w+)\(", source, re.M)
    assert len(parts) >= 3
    for name in parts:  # each part is defined in exactly one unit
        defined = [f"TR_CALLS_ONLY int {name}(" in unit for unit in units]
        assert defined.count(True) == 1, name
    assert ["int tracer_run(char **args) {" in unit for unit in units].count(True) == 1
    assert all(len(unit) < 0.8 * len(source) for unit in units)


CHAIN = """
def chain(x):
    with tt.GradientTape() as tape:
        y = x
        for w in ws:
            y = tt.tanh(y @ w)
        loss = tt.reduce_sum(y)
    return loss, tape.gradient(loss, ws)
"""


def _chain(ws, filename="<chain>"):
    """x -> (sum(tanh(... tanh(x @ ws[0]) ... @ ws[-1])), its gradients), compiled from
    CHAIN as a file of that name."""
    scope = {"tt": tt, "ws": ws}
    exec(compile(CHAIN, filename, "exec"), scope)
    return scope["chain"]


def _numpy_chain(x, ws):
    """sum(tanh(... tanh(x @ ws[0]) ... @ ws[-1])) and its gradients with respect to ws."""
    ys = [x]
    for w in ws:
        ys.append(np.tanh(ys[-1] @ w))
    upstream, grads = np.ones_like(ys[-1]), []
    for k in reversed(range(len(ws))):
        before = upstream * (1 - ys[k + 1] ** 2)
        grads.insert(0, ys[k].T @ before)
        upstream = before @ ws[k].T
    return ys[-1].sum(), grads


def test_kernels_called_from_many_steps_compile_in_a_unit_of_their_own(tmp_path, monkeypatch):
    """A short module whose kernels are each called from many steps (B22's chain of layers)
    compiles as two units on two cores: each such kernel defined in one unit and declared in
    both, the entry point in one; its values are numpy's. A module whose kernels are each
    called from one step (inlined into the entry point) stays one unit."""
    from codegen import units as module_units

    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(module_units, "free_cores", lambda: 2)  # two cores, both free
    rng = np.random.default_rng(4)
    ws = [tt.Variable(rng.standard_normal((16, 16)) / 4) for _ in range(12)]
    x = tt.constant(rng.standard_normal((16, 16)))
    concrete = tt.function(_chain(ws)).get_concrete_function(x)
    (meta,) = [json.loads(p.read_text()) for p in tmp_path.rglob("meta.json")]
    assert meta["units"] == 2
    loss, grads = concrete(x)
    expected_loss, expected_grads = _numpy_chain(x.numpy(), [w.numpy() for w in ws])
    np.testing.assert_allclose(float(loss), expected_loss, rtol=1e-12)
    for grad, expected in zip(grads, expected_grads):
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-10, atol=1e-12)

    source = concrete.c_source()
    units = module_units.sources(source, 2)
    kernels = re.findall(r"^TR_PART TR_NOINLINE \w+ (\w+)\(", source, re.M)
    assert len(kernels) >= 4
    for name in kernels:
        assert [f"TR_NOINLINE void {name}(" in unit for unit in units].count(True) == 1, name
        assert all(re.search(rf"^TR_PART void {name}\(.*\);$", u, re.M) for u in units), name
    assert ["int tracer_run(char **args) {" in unit for unit in units].count(True) == 1

    def layer(x):
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum(tt.tanh(x @ ws[0]))
        return loss, tape.gradient(loss, ws[0])

    assert module_units.count(tt.function(layer).get_concrete_function(x).c_source()) == 1


def test_a_module_compiles_in_one_unit_where_other_work_takes_the_cores(monkeypatch):
    """B22's chain, split in two on two free cores, is one unit where other processes'
    threads are ready to run on the other core (or both); the count of them is the
    kernel's, this process's own running threads left out (this one at least)."""
    from codegen import units as module_units

    monkeypatch.setattr(module_units.thread_pools, "usable_cores", lambda: 2)
    rng = np.random.default_rng(4)
    ws = [tt.Variable(rng.standard_normal((16, 16)) / 4) for _ in range(12)]
    x = tt.constant(rng.standard_normal((16, 16)))
    source = tt.function(_chain(ws)).get_concrete_function(x).c_source()
    for others, units in ((0, 2), (1, 1), (5, 1)):
        monkeypatch.setattr(module_units, "_others_running", lambda others=others: others)
        assert module_units.free_cores() == max(1, 2 - others)
        assert module_units.count(source) == units
    monkeypatch.undo()
    with open("/proc/loadavg") as handle:
        threads = int(handle.read().split()[3].split("/")[1])  # running/all of them
    assert 0 <= module_units._others_running() < threads
    assert 1 <= module_units._own_running() <= len(os.listdir("/proc/self/task"))


def test_a_long_module_of_kernels_each_called_once_compiles_in_two_units(tmp_path, monkeypatch):
    """A module whose kernels' C is long (codegen.lower.SPREAD_KERNELS_ABOVE), though each
    kernel is called from one step only, keeps them functions of their own, which two units
    compile at once on two cores; its value is eager mode's and its gradient matches
    central differences."""
    from codegen import units as module_units

    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(module_units, "free_cores", lambda: 2)  # two cores, both free
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((30, 40)), rng.standard_normal((40, 20))

    def loss(x, y):
        a = tt.tanh(x) * 2.0 + tt.exp(-x * x)
        b = tt.reduce_sum(tt.sin(a) * a, axis=0)
        c = tt.matmul(a, y) + b[:20]
        d = tt.reduce_max(tt.nn.relu(c) - tt.sigmoid(c), axis=1)
        return tt.reduce_sum(tt.math.log1p(tt.abs(d))) + tt.reduce_mean(tt.sqrt(tt.abs(b) + 1.0))

    def value_and_gradients(x, y):
        with tt.GradientTape() as tape:
            tape.watch([x, y])
            value = loss(x, y)
        return value, tape.gradient(value, [x, y])

    xt, yt = tt.constant(x), tt.constant(y)
    concrete = tt.function(value_and_gradients).get_concrete_function(xt, yt)
    source = concrete.c_source()
    assert len(re.findall(r"^TR_PART TR_NOINLINE \w+ (k\d+\w*)\(", source, re.M)) >= 10
    (meta,) = [json.loads(p.read_text()) for p in tmp_path.rglob("meta.json")]
    assert meta["units"] == 2
    value, (gx, gy) = concrete(xt, yt)
    assert float(value) == pytest.approx(float(loss(xt, yt)), rel=1e-12)  # eagerly
    eps = 1e-6
    for array, gradient, index in ((x, gx, (3, 5)), (y, gy, (7, 2))):
        step = np.zeros_like(array)
        step[index] = eps
        plus = [tt.constant(x + step), yt] if array is x else [xt, tt.constant(y + step)]
        minus = [tt.constant(x - step), yt] if array is x else [xt, tt.constant(y - step)]
        numeric = (float(loss(*plus)) - float(loss(*minus))) / (2 * eps)
        assert gradient.numpy()[index] == pytest.approx(numeric, rel=1e-6, abs=1e-9)


def test_a_kernels_block_is_weighed_by_its_loops_as_well_as_its_length(tmp_path, monkeypatch):
    """The split into units weighs each kernel's block by what the compiler spends on it: a
    parallel loop over rows with a reduction in each (a softmax over long rows) weighs more
    than an elementwise kernel of the same length, and each block's marked work is its
    text's length and what its loops add (codegen/units.py's `weight`)."""
    from codegen import units as module_units

    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(8)
    x = tt.constant(rng.standard_normal((512, 256)).astype(np.float32))

    def loss(x):
        a = tt.tanh(x) * 2.0 + tt.exp(-x * x)
        b = tt.nn.softmax(tt.sin(a) * a)
        c = tt.reduce_sum(b * tt.sigmoid(a), axis=1)
        return tt.reduce_sum(tt.math.log1p(tt.abs(c))) + tt.reduce_mean(tt.sqrt(tt.abs(a) + 1.0))

    def value_and_gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            value = loss(x)
        return value, tape.gradient(value, x)

    source = tt.function(value_and_gradient).get_concrete_function(x).c_source()
    blocks = re.findall(
        r"^#if TR_IN_UNIT  /\* work (\d+) at \d+ of \d+ \*/\n(.*?)^#endif$", source, re.M | re.S
    )
    kernels = [(int(w), text) for w, text in blocks if re.search(r"TR_NOINLINE \w+ k\d+", text)]
    assert len(kernels) >= 4
    for work, text in kernels:
        assert abs(work - module_units.function_weight(text)) <= 2  # the newlines around it
    rows = [w / len(t) for w, t in kernels if "omp parallel" in t and " reduction(" in t]
    flat = [w / len(t) for w, t in kernels if "omp parallel" not in t]
    assert rows and flat and min(rows) > 2 * max(flat)
    assert module_units.weight("for (i") == 6 + module_units.LOOP_WORK
    assert (
        module_units.function_weight("for (i")
        == module_units.KERNEL_WORK + 6 + module_units.LOOP_WORK
    )


def test_a_light_kernels_block_weighs_its_share_of_the_same_c_at_o3(tmp_path, monkeypatch):
    """A light kernel (TR_LIGHT: -O1) costs the compiler a little over half of what the same
    C costs at -O3, and its block is weighed so (codegen/units.py's LIGHT_SHARE), where a
    kernel of many elements keeps its whole weight."""
    from codegen import units as module_units

    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(9)
    small = tt.constant(rng.standard_normal((10, 20)))
    large = tt.constant(rng.standard_normal((300, 200)))

    def loss(small, large):
        terms = [tt.reduce_sum(tt.tanh(small * k) * small, axis=1) for k in (1.0, 2.0, 3.0)]
        a = tt.tanh(large) * 2.0 + tt.exp(-large * large)
        b = tt.nn.softmax(tt.sin(a) * a)
        c = tt.reduce_sum(b * tt.sigmoid(a), axis=1)
        return tt.reduce_sum(tt.math.log1p(tt.abs(c))) + tt.reduce_sum(tt.add_n(terms))

    source = tt.function(loss).get_concrete_function(small, large).c_source()
    blocks = re.findall(
        r"^#if TR_IN_UNIT  /\* work (\d+) at \d+ of \d+ \*/\n(.*?)^#endif$", source, re.M | re.S
    )
    kernels = [(int(w), text) for w, text in blocks if re.search(r"TR_NOINLINE \w+ k\d+", text)]
    light = [(w, text) for w, text in kernels if "TR_LIGHT\n" in text]
    heavy = [(w, text) for w, text in kernels if "TR_LIGHT\n" not in text]
    assert light and heavy
    for work, text in light:
        assert abs(work - module_units.function_weight(text)) <= 2
        unlit = module_units.weight(text.replace("TR_LIGHT\n", ""))
        assert work - module_units.KERNEL_WORK < 0.6 * unlit
    for work, text in heavy:
        assert abs(work - module_units.function_weight(text)) <= 2


def test_blocks_are_packed_by_size_where_the_cut_by_position_leaves_a_unit_more_work():
    """Compiled as units, the blocks keep the cut by position unless packing them by size
    (largest first, each to the unit with least work) leaves the largest unit at least
    PACKING_GAIN less work."""
    from codegen import units as module_units

    total = 18924  # B31's blocks: two sums of squares, the fused kernel, a sum, the entry
    heavy = [(2535, 1267, total), (4291, 4680, total), (10040, 11846, total)]
    heavy += [(1846, 17789, total), (212, 18818, total)]
    assert module_units.placement(heavy, 2) == [1, 1, 0, 1, 1]
    even = [(10, 5, 40), (10, 15, 40), (10, 25, 40), (10, 35, 40)]
    assert module_units.placement(even, 2) == [0, 0, 1, 1]  # packing is no better
    assert module_units.placement(even, 3) == [0, 1, 1, 2]  # 20 either way: by position
    near = [(1400, 700, 10000), (5600, 4200, 10000), (4000, 9000, 10000)]
    assert module_units.placement(near, 2) == [0, 0, 1]  # packed: 1400 less, not PACKING_GAIN


def test_a_heavy_kernel_compiles_in_a_unit_of_its_own(tmp_path, monkeypatch):
    """GradBench's k-means cost (B31): its fused product-and-minimum weighs more than its other
    kernels and the entry point together, so on two cores it is a unit alone (the cut by
    position put the final sum and the entry point with it); the value is numpy's."""
    from codegen import units as module_units

    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(module_units, "free_cores", lambda: 2)  # two cores, both free
    rng = np.random.default_rng(31)
    points, centroids = rng.standard_normal((3000, 16)), rng.standard_normal((400, 16))

    def cost(points, centroids):
        p2 = tt.reduce_sum(points * points, axis=1)[:, None]
        c2 = tt.reduce_sum(centroids * centroids, axis=1)[None, :]
        products = tt.matmul(points, centroids, transpose_b=True)
        return tt.reduce_sum(tt.reduce_min(p2 + c2 - 2.0 * products, axis=1))

    concrete = tt.function(cost).get_concrete_function(tt.constant(points), tt.constant(centroids))
    (meta,) = [json.loads(p.read_text()) for p in tmp_path.rglob("meta.json")]
    assert meta["units"] == 2
    source = concrete.c_source()
    kernels = re.findall(r"^TR_PART TR_NOINLINE \w+ (k\d+\w*)\(", source, re.M)
    (fused,) = [name for name in kernels if "reduce_min" in name]
    defined = [
        [name for name in kernels if re.search(rf"TR_NOINLINE \w+ {name}\(", unit)]
        for unit in module_units.sources(source, 2)
    ]
    assert [fused] in defined and sorted(sum(defined, [])) == sorted(kernels)
    distances = (points**2).sum(1)[:, None] + (centroids**2).sum(1)[None, :]
    expected = (distances - 2.0 * points @ centroids.T).min(1).sum()
    np.testing.assert_allclose(
        float(concrete(tt.constant(points), tt.constant(centroids))), expected, rtol=1e-12
    )


def test_a_file_name_with_a_newline_stays_in_the_c_comments(tmp_path, monkeypatch):
    """The user's file name is in the C's comments: its newline would start a line that
    the split into units reads as `#if` or `#endif`. It comes out as `?`, and the module
    compiled in units computes numpy's values."""
    from codegen import units as module_units

    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(module_units, "count", lambda source: 2)
    rng = np.random.default_rng(5)
    ws = [tt.Variable(rng.standard_normal((8, 8)) / 3) for _ in range(9)]
    x = tt.constant(rng.standard_normal((8, 8)))
    for name in ("model\n#if x.py", "model\n#endif x.py"):
        concrete = tt.function(_chain(ws, name)).get_concrete_function(x)
        loss, grads = concrete(x)
        expected_loss, expected_grads = _numpy_chain(x.numpy(), [w.numpy() for w in ws])
        np.testing.assert_allclose(float(loss), expected_loss, rtol=1e-12)
        for grad, expected in zip(grads, expected_grads):
            np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-10, atol=1e-12)
        assert concrete.backend == "c" and name.replace("\n", "?") in concrete.c_source()


def test_a_long_entry_point_calls_its_kernels_from_tables(monkeypatch):
    """From COMPACT_FROM kernel calls on, runs of calls are loops over tables of steps (each
    row a kernel's step function and where its operands are: workspace blocks, inputs and
    rows of inputs at byte offsets); a kernel that reports errors stays a statement between
    runs, and still names its line."""
    from codegen import compact

    monkeypatch.setattr(compact, "COMPACT_FROM", 1)

    def checked(xs, w, i):
        total, grad = recurrence(xs, w)
        picked = tt.gather(w, i)  # the line the error names
        return total + tt.reduce_sum(picked), grad

    rng = np.random.default_rng(3)
    xs, w = tt.constant(rng.uniform(-1, 1, (40, 6))), tt.constant(rng.uniform(-1, 1, 6))
    f = tt.function(checked)
    total, grad = f(xs, w, tt.constant([1, 4]))
    expected_total, expected_grad = _numpy_recurrence(xs.numpy(), w.numpy())
    np.testing.assert_allclose(float(total), expected_total + w.numpy()[[1, 4]].sum(), rtol=1e-12)
    np.testing.assert_allclose(grad.numpy(), expected_grad, rtol=1e-10)
    source = f.get_concrete_function(xs, w, tt.constant([1, 4])).c_source()
    assert source.count("TR_STEPS(") >= 2 and "_step(char **args" in source
    assert re.search(r"\{ const int error = k\d+_gather", source)
    line = checked.__code__.co_firstlineno + 2
    with pytest.raises(Exception, match=rf"test_function.py:{line}\b"):
        f(xs, w, tt.constant([1, 9]))


def test_kernels_that_report_errors_are_not_shared_and_name_their_own_lines():
    """Two gathers alike on different lines: each index check names its own line."""

    def two_gathers(x, i, j):
        a = tt.gather(x, i)
        b = tt.gather(x, j)  # the line the error names
        return a + b

    f = tt.function(two_gathers, backend="c")
    x = tt.constant(np.arange(4.0))
    good, bad = tt.constant([1, 2]), tt.constant([1, 9])
    np.testing.assert_array_equal(f(x, good, good).numpy(), [2.0, 4.0])
    line = two_gathers.__code__.co_firstlineno + 2
    with pytest.raises(Exception, match=rf"test_function.py:{line}\b"):
        f(x, good, bad)
    with pytest.raises(Exception, match=rf"test_function.py:{line - 1}\b"):
        f(x, bad, good)


def test_a_long_sum_is_a_chain_of_kernels_of_bounded_inputs():
    """A loss summed over 150 unrolled steps, and its gradient: one kernel would read all 150
    terms (a C function of 150 parameters, which compilers take minutes over at 10^3). Kernels
    read at most KERNEL_INPUTS stored values."""
    from tracer.passes.fuse import KERNEL_INPUTS

    def f(xs, w):
        with tt.GradientTape() as tape:
            tape.watch(w)
            total = 0.0
            for t in range(xs.shape[0]):
                total += tt.reduce_sum(tt.tanh(xs[t] * w[0]) * w[1])
        return total, tape.gradient(total, w)

    rng = np.random.default_rng(1)
    xs, w = rng.uniform(-1, 1, (150, 5)), rng.uniform(-1, 1, (2, 5))
    concrete = tt.function(f).get_concrete_function(tt.constant(xs), tt.constant(w))
    parameters = [int(k) for k in re.findall(r"\*restrict p(\d+)", concrete.c_source())]
    assert max(parameters) < KERNEL_INPUTS
    squashed = np.tanh(xs * w[0])
    total, grad = concrete(tt.constant(xs), tt.constant(w))
    np.testing.assert_allclose(float(total), np.sum(squashed * w[1]), rtol=1e-12)
    expected = [np.sum(xs * (1 - squashed**2) * w[1], axis=0), np.sum(squashed, axis=0)]
    np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize(
    "reduce, reference, grouped",
    [
        (tt.reduce_sum, np.sum, True),
        (tt.reduce_mean, np.mean, True),
        (tt.reduce_prod, np.prod, True),
        (tt.reduce_max, np.max, True),  # reassociated, and again in order for a NaN or zero
    ],
)
@pytest.mark.parametrize("shape", [(7,), (300, 701)])
def test_a_full_reduction_and_values_of_its_inputs_shape_are_one_loop(
    reduce, reference, grouped, shape
):
    """A reduction over every axis and elementwise values over the same elements, computed
    from the same stored values (inputs aside: here x and y), are one kernel of several
    results, one loop nest, where the reduction's loop is vectorized (max's too: it runs again
    in order where it met a NaN or its value is a zero); the compiled values are the
    interpreter's and numpy's."""

    def f(x, y):
        s = tt.sin(x) * 0.001 + 1.0
        return reduce(s, keepdims=len(shape) > 1), tt.cos(x) * y, tt.exp(y)

    x, y = (tt.constant(np.random.default_rng(k).standard_normal(shape)) for k in (1, 2))
    compiled = tt.function(f)
    concrete = compiled.get_concrete_function(x, y)
    three = r"\(f64\[[\d,]*\], f64\[[\d,]+\], f64\[[\d,]+\]\) = fused\[kernel=k_reduce_"
    assert len(re.findall(three, concrete.ir("optimized"))) == (1 if grouped else 0)
    # the nests' outer loops: a sum's axes folded into one loop, a parallel loop's first
    # axis kept apart (codegen/loops.py, foldable_axes); a short one calling libm over whole
    # vectors of 8 doubles (SHORT_LOOP)
    size = int(np.prod(shape))
    bounds = rf"{size}|{shape[0]}|{-(-size // 8) * 8}"
    outer = re.findall(rf"for \(int64_t \w+ = 0; \w+ < ({bounds});", concrete.c_source())
    rerun = 1 if reduce is tt.reduce_max else 0  # its loop again, in order (a NaN, a zero)
    assert len(outer) == (1 if grouped else 3) + rerun  # graph outputs alone are not siblings
    v, w = x.numpy(), y.numpy()
    expected = [
        reference(np.sin(v) * 0.001 + 1.0, keepdims=len(shape) > 1),
        np.cos(v) * w,
        np.exp(w),
    ]
    runs = [compiled, tt.function(f, backend="interpreter"), f]
    if len(shape) == 1:  # the length known only when the function runs
        spec = tt.TensorSpec([None], tt.float64)
        runs.append(tt.function(f, input_signature=[spec, spec]))
    for run in runs:
        for got, want in zip(run(x, y), expected):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("case", ["complex sum", "integer power"])
def test_values_keep_their_vectorized_loop_beside_a_reduction_that_has_none(case):
    """A complex sum is kept in order, and an integer power checks each element (its loop
    runs in order on one thread): values beside such a reduction are not brought into it."""
    n = 1 << 18
    if case == "complex sum":
        x = tt.constant((np.arange(n) % 7 + 1j).astype(np.complex128))

        def f(x):
            return tt.reduce_sum(x * x), tt.exp(tt.math.real(x)) * 2.0

    else:
        x = tt.constant((np.arange(n) % 5).astype(np.int64))

        def f(x):
            return tt.reduce_sum(tt.sin(tt.cast(x, tt.float64))), tt.pow(x, x) * 2

    source = tt.function(f).get_concrete_function(x).c_source()
    assert len(re.findall(rf"for \(int64_t \w+ = 0; \w+ < {n};", source)) == 2
    for got, want in zip(tt.function(f)(x), tt.function(f, backend="interpreter")(x)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("shape", [(400_003,), (600, 701)])  # past the caches: exp not stored
def test_sums_over_the_same_elements_are_one_loop(dtype, rtol, shape):
    """Reductions over every axis of one shape whose values read nothing computed after the
    first of them are one kernel with an accumulator each: one loop nest reads the elements
    once and calls exp once for all of them; the values are the interpreter's, eager
    mode's and numpy's."""

    def f(x, y, w, a):
        k = tt.exp(-tt.square(x) / a)
        return (
            tt.reduce_sum(k * y),
            tt.reduce_sum(k * tt.square(x) / a),
            tt.reduce_prod(y * 0.001 + 1.0),
            tt.reduce_sum(k * w),
        )

    rng = np.random.default_rng(3)
    x, y, w = (tt.constant(rng.standard_normal(shape).astype(dtype)) for _ in range(3))
    a = tt.constant(dtype(1.5))
    compiled = tt.function(f)
    concrete = compiled.get_concrete_function(x, y, w, a)
    four = (
        r"\((f32|f64)\[\], (f32|f64)\[\], (f32|f64)\[\], (f32|f64)\[\]\) = fused\[kernel=k_reduce_"
    )
    assert len(re.findall(four, concrete.ir("optimized"))) == 1
    # (a float32 square feeds the sums: its loops are also written on float's grid)
    plain = re.sub(r"(?ms)^static void k\w+_grid\(.*?^}\n", "", concrete.c_source())
    assert len(re.findall(r"= tr_exp_f(32|64)\(", plain)) == 1
    v, u, m = (t.numpy().astype(np.float64) for t in (x, y, w))
    k = np.exp(-(v**2) / 1.5)
    expected = [np.sum(k * u), np.sum(k * v**2 / 1.5), np.prod(u * 0.001 + 1.0), np.sum(k * m)]
    for run in (compiled, tt.function(f, backend="interpreter"), f):
        for got, want in zip(run(x, y, w, a), expected):
            np.testing.assert_allclose(float(got), want, rtol=rtol * 10, atol=rtol * 10)


def test_a_sum_that_reads_another_sum_is_not_in_its_loop():
    """The second sum reads the first (a stored value computed after the first sum starts):
    one kernel cannot compute both, so they stay two."""

    @tt.function
    def f(x):
        total = tt.reduce_sum(tt.exp(x))
        return total, tt.reduce_sum(x * total)

    x = tt.constant(np.linspace(-1.0, 3.0, 200_000))
    total, second = f(x)
    optimized = f.get_concrete_function(x).ir("optimized")
    assert optimized.count("f64[] = fused[kernel=k_reduce_sum_") == 2
    v = x.numpy()
    np.testing.assert_allclose(float(total), np.exp(v).sum(), rtol=1e-12)
    np.testing.assert_allclose(float(second), np.sum(v * np.exp(v).sum()), rtol=1e-9)


def test_gradients_with_respect_to_a_kernels_parameters_are_one_loop():
    """The gradient of sum(b * exp(-d / a) * y) with respect to a and b: two sums over the
    kernel matrix's elements, which the compiled step computes in one loop; the values are
    the analytic ones, and the second-order gradient's the finite differences'."""
    rng = np.random.default_rng(5)
    points = rng.standard_normal(300)
    d = tt.constant((points[:, None] - points[None, :]) ** 2)
    y = tt.constant(rng.standard_normal((300, 300)))

    def value(a, b):
        return tt.reduce_sum(b * tt.exp(-d / a) * y)

    @tt.function
    def gradients(a, b):
        with tt.GradientTape() as tape:
            tape.watch([a, b])
            f = value(a, b)
        return tape.gradient(f, [a, b])

    a, b = tt.constant(np.float64(1.3)), tt.constant(np.float64(0.7))
    concrete = gradients.get_concrete_function(a, b)
    two = r"\(f64\[[\d,]*\], f64\[[\d,]*\]\) = fused\[kernel=k_reduce_"
    assert len(re.findall(two, concrete.ir("optimized"))) == 1
    k, dd, yy = np.exp(-d.numpy() / 1.3), d.numpy(), y.numpy()
    da, db = gradients(a, b)
    np.testing.assert_allclose(float(da), np.sum(0.7 * k * dd / 1.3**2 * yy), rtol=1e-10)
    np.testing.assert_allclose(float(db), np.sum(k * yy), rtol=1e-10)

    @tt.function
    def second(a, b):
        with tt.GradientTape() as outer:
            outer.watch(a)
            da, _ = gradients(a, b)
        return outer.gradient(da, a)

    h = 1e-5
    numeric = (float(gradients(a + h, b)[0]) - float(gradients(a - h, b)[0])) / (2 * h)
    np.testing.assert_allclose(float(second(a, b)), numeric, rtol=1e-6)


def test_a_value_that_reads_the_reduction_is_not_its_sibling():
    """softmax's normalization reads the sum: one kernel cannot compute both."""

    @tt.function
    def f(x):
        e = tt.exp(x)
        total = tt.reduce_sum(e)
        return total, e / total

    x = tt.constant(np.linspace(-3.0, 3.0, 200_000))  # past the caches: exp is not stored
    total, normalized = f(x)
    optimized = f.get_concrete_function(x).ir("optimized")
    assert optimized.count("= fused") == 2 and "f64[] = fused[kernel=k_reduce_sum_" in optimized
    e = np.exp(x.numpy())
    np.testing.assert_allclose(float(total), e.sum(), rtol=1e-12)
    np.testing.assert_allclose(normalized.numpy(), e / e.sum(), rtol=1e-12)


def test_a_loss_and_a_variables_new_value_in_one_loop():
    """A sum and the new value of the variable it reads: one kernel, whose elementwise
    result is copied into the variable after the run."""
    v = tt.Variable(np.linspace(-1.0, 1.0, 9))

    @tt.function
    def step():
        loss = tt.reduce_sum(tt.square(v) * 3.0)
        v.assign(tt.tanh(v) * 0.5)
        return loss

    value = v.numpy()
    for _ in range(3):
        loss = step()
        np.testing.assert_allclose(float(loss), np.sum(value * value * 3.0), rtol=1e-12)
        value = np.tanh(value) * 0.5
        np.testing.assert_allclose(v.numpy(), value, rtol=1e-12)
    assert step.get_concrete_function().ir("optimized").count("= fused") == 1


def test_the_interpreter_runs_each_fused_body_as_a_program_made_once():
    """The numpy backend runs a fused node's body as a straight-line program, made at its
    first run and kept with the kernel; its values are the C backend's."""
    x = tt.constant(np.linspace(-2.0, 2.0, 11))
    interpreted = tt.function(loss_and_grad, backend="interpreter")
    first = interpreted(x)
    final = interpreted.get_concrete_function(x).stages.final
    kernels = [node.attrs["kernel"] for node in final.nodes if node.op == "fused"]
    programs = [kernel.program() for kernel in kernels]
    assert kernels and all(kernel.program() is p for kernel, p in zip(kernels, programs))
    second = interpreted(x)
    compiled = tt.function(loss_and_grad)(x)
    for a, b, c in zip(first, second, compiled):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        np.testing.assert_allclose(a.numpy(), c.numpy(), rtol=1e-13)


def test_a_gradient_of_eager_values_inside_a_function_is_a_value_the_function_can_read():
    @tt.function
    def f(a):
        x = tt.constant(3.0)
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = x * x + tt.sin(x)
        g = tape.gradient(y, x)
        assert g.numpy() == pytest.approx(6 + np.cos(3.0), rel=1e-6)  # read while tracing
        return a + g

    np.testing.assert_allclose(f(tt.constant(1.0)).numpy(), 7 + np.cos(3.0), rtol=1e-6)


def test_a_seed_of_another_dtype_inside_a_function_is_the_op_paths_error(monkeypatch):
    # the error comes from tracing, not from the verifier the test suite runs after each pass
    monkeypatch.setattr(tracer.passes.pipeline, "VERIFY_EACH_PASS", False)

    @tt.function
    def f(x, seed):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        return tape.gradient(y, x, output_gradients=seed)

    x = tt.constant(np.array([1.0, 2.0, 3.0], np.float32))
    with pytest.raises(TypeError, match="different dtypes"):
        f(x, tt.constant(np.ones(3, np.float64)))
    np.testing.assert_allclose(f(x, tt.constant(np.ones(3, np.float32))).numpy(), [2, 4, 6])


def test_a_third_size_of_a_dimension_reuses_the_second_trace(caplog):
    """Automatic dynamic shapes: the second size of a dimension traces it unknown, so every
    later size runs the same module, with the values fixed shapes give."""

    @tt.function
    def f(x, w):
        return tt.reduce_sum(tt.tanh(x @ w), axis=1)

    w = tt.constant(np.random.default_rng(0).standard_normal((3, 2)))
    with caplog.at_level(logging.INFO, logger="tracer.function"):
        for rows in (4, 5, 7, 1):
            x = tt.constant(np.random.default_rng(rows).standard_normal((rows, 3)))
            fixed = tt.function(f.python_function, reduce_retracing=False)
            np.testing.assert_allclose(f(x, w).numpy(), fixed(x, w).numpy(), rtol=1e-12)
    assert f.experimental_get_tracing_count() == 2
    assert [r.getMessage() for r in caplog.records if "retracing f" in r.getMessage()] == [
        "retracing f: argument 0: float64[4, 3] -> float64[None, 3] (the changed dimensions "
        "became dynamic: a third size reuses this trace; reduce_retracing=False traces each size)"
    ]
    concrete = f.get_concrete_function(tt.TensorSpec([None, 3], tt.float64), w)
    assert concrete.backend == "c"


def test_sizes_a_shape_rule_needs_equal_are_one_unknown_dimension(caplog):
    """A square matrix's sides, a product's inner sizes and broadcast axes, unknown in a
    trace: TensorFlow takes them for equal and checks when the graph runs; tracer traces the
    one as the other, so every square size runs one module, and a call that breaks it is
    traced with its own sizes (its error named there, before anything runs)."""
    rng = np.random.default_rng(3)
    square = [tt.TensorSpec([None, None], tt.float64)]

    def inverse_plus_gram(a):
        return tt.linalg.inv(a) + tt.matmul(a, tt.transpose(a))

    for backend in ("c", "interpreter"):
        f = tt.function(inverse_plus_gram, input_signature=square, backend=backend)
        for n in (3, 5, 8):
            a = rng.standard_normal((n, n)) + n * np.eye(n)
            expected = np.linalg.inv(a) + a @ a.T
            np.testing.assert_allclose(f(tt.constant(a)).numpy(), expected, rtol=1e-10)
        assert f.experimental_get_tracing_count() == 1
        with pytest.raises(ValueError, match=r"square matrices; its shape is \(3, 4\)"):
            f(tt.constant(rng.standard_normal((3, 4))))

    with caplog.at_level(logging.INFO, logger="tracer.function"):
        g = tt.function(lambda a: tt.matmul(a, a) + tt.transpose(a))
        for n in (3, 5, 7, 9):  # the second size generalizes, the others reuse its module
            a = rng.standard_normal((n, n))
            np.testing.assert_allclose(g(tt.constant(a)).numpy(), a @ a + a.T, rtol=1e-12)
        assert g.experimental_get_tracing_count() == 2
    assert any("tracing <lambda> again with d1 = d0" in r.getMessage() for r in caplog.records)
    with pytest.raises(ValueError, match=r"inner dimensions differ.* \(6 != 4\)"):
        g(tt.constant(rng.standard_normal((4, 6))))
    concrete = g.get_concrete_function(tt.TensorSpec([None, None], tt.float64))
    with pytest.raises(ValueError, match="traced for sizes that are equal.*d0 as 4 and 6"):
        concrete(tt.constant(rng.standard_normal((4, 6))))

    for combine, expected in (
        (lambda a: tt.stack([a, tt.transpose(a)]), lambda a: np.stack([a, a.T])),
        (lambda a: tt.tensordot(a, a, 1), lambda a: a @ a),
        (lambda a: tt.concat([a, tt.transpose(a)], 1), lambda a: np.concatenate([a, a.T], 1)),
    ):
        f = tt.function(combine, input_signature=square)
        for n in (2, 4):
            a = rng.standard_normal((n, n))
            np.testing.assert_allclose(f(tt.constant(a)).numpy(), expected(a), rtol=1e-12)
        assert f.experimental_get_tracing_count() == 1

    inner = tt.function(lambda a: tt.matmul(a, a))  # called while `outer` is traced
    outer = tt.function(lambda a: inner(a) * 2.0, input_signature=square)
    for n in (3, 4):
        a = rng.standard_normal((n, n))
        np.testing.assert_allclose(outer(tt.constant(a)).numpy(), 2 * a @ a, rtol=1e-12)
    assert outer.experimental_get_tracing_count() == 1

    two = [tt.TensorSpec([None, None], tt.float64)] * 2
    h = tt.function(lambda a, b: tt.matmul(a, b), input_signature=two)
    for m, k, n in ((2, 3, 4), (5, 6, 7), (1, 2, 3)):
        a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        np.testing.assert_allclose(h(tt.constant(a), tt.constant(b)).numpy(), a @ b, rtol=1e-12)
    assert h.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_a_dimension_taken_for_a_number_serves_only_the_calls_that_give_it(backend):
    """x + a constant of 3 and y + one of 4, over sizes that broadcast (1) and that do not:
    each call's values are numpy's, whatever trace served the ones before (a dimension
    taken for a number once left a trace that ran later sizes on the first's module)."""
    c3, c4 = np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0, 30.0, 40.0])
    f = tt.function(lambda x, y: (x + tt.constant(c3), y + tt.constant(c4)), backend=backend)
    for x, y in ((np.array([1.0]), c4), (c3, np.array([5.0])), (np.array([7.0]), np.array([8.0]))):
        got = f(tt.constant(x), tt.constant(y))
        np.testing.assert_array_equal(got[0].numpy(), x + c3)
        np.testing.assert_array_equal(got[1].numpy(), y + c4)


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_an_unknown_dimension_an_op_needs_equal_to_a_number_is_traced_as_it(backend, caplog):
    """An input_signature's None against a known size (a product with a weight of 3 rows, a
    sum with a vector of 3): TensorFlow takes the None for 3 and checks when the graph runs;
    tracer traces it as 3, so every batch runs one module, the gradient too, and a call
    that gives another size is traced with its own (a 1 broadcasts; a 5 is the op's error),
    or, called on the concrete function, refused before anything runs."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((3, 4))

    def product_and_gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.matmul(x, tt.constant(w))
            loss = tt.reduce_sum(tt.tanh(y))
        return y, tape.gradient(loss, x)

    table = [tt.TensorSpec([None, None], tt.float64)]
    g = tt.function(product_and_gradient, input_signature=table, backend=backend)
    with caplog.at_level(logging.INFO, logger="tracer.function"):
        for rows in (2, 5, 1):
            x = rng.standard_normal((rows, 3))
            y, dx = g(tt.constant(x))
            np.testing.assert_allclose(y.numpy(), x @ w, rtol=1e-12)
            np.testing.assert_allclose(dx.numpy(), (1 - np.tanh(x @ w) ** 2) @ w.T, rtol=1e-12)
    assert g.experimental_get_tracing_count() == 1
    assert any(
        "tracing product_and_gradient again with d1 = 3" in r.getMessage() for r in caplog.records
    )
    concrete = g.get_concrete_function(*table)
    with pytest.raises(ValueError, match="tensor argument 0 has 3 on axis 1 .* gives 5"):
        concrete(tt.constant(rng.standard_normal((2, 5))))
    with pytest.raises(ValueError, match=r"inner dimensions differ.*\(5 != 3\)"):
        g(tt.constant(rng.standard_normal((2, 5))))

    c3 = np.array([1.0, 2.0, 3.0])
    f = tt.function(
        lambda x: x * tt.constant(c3),
        input_signature=[tt.TensorSpec([None], tt.float64)],
        backend=backend,
    )
    for x in (np.array([4.0, 5.0, 6.0]), np.array([2.0]), np.array([7.0, 8.0, 9.0])):
        np.testing.assert_array_equal(f(tt.constant(x)).numpy(), x * c3)
    assert f.experimental_get_tracing_count() == 2  # the 3's, and the 1's own
    with pytest.raises(ValueError, match=r"shapes \(5,\) and \(3,\) cannot be broadcast"):
        f(tt.constant(np.ones(5)))

    inner = tt.function(lambda a: tt.matmul(a, tt.constant(w)), backend=backend)
    outer = tt.function(lambda a: inner(a) * 2.0, input_signature=table, backend=backend)
    for rows in (2, 6):
        x = rng.standard_normal((rows, 3))
        np.testing.assert_allclose(outer(tt.constant(x)).numpy(), 2 * x @ w, rtol=1e-12)
    assert outer.experimental_get_tracing_count() == inner.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_a_dimension_arguments_share_is_taken_for_a_number_in_the_one_op_needing_it(backend):
    """x * c of a c of 3 and y * 2 of an x and a y of TensorSpec([None]) (one unknown axis
    symbol while no call gives them two sizes): only x's None is taken for 3, as TensorFlow's
    graph has it; y's stays unknown, in the results' specs, in a tt.data map's element_spec
    and in the calls the one trace serves. Where the function combines them, y's is 3 too."""
    c3 = np.array([1.0, 2.0, 3.0])
    table = [tt.TensorSpec([None], tt.float64)] * 2
    f = tt.function(
        lambda x, y: (x * tt.constant(c3), y * 2.0), input_signature=table, backend=backend
    )
    concrete = f.get_concrete_function(*table)
    assert [s.shape for s in concrete.output_spec()] == [(3,), (None,)]
    x = np.array([4.0, 5.0, 6.0])
    for rows in (5, 7, 1):
        y = np.arange(rows, dtype=np.float64)
        for call in (f, concrete):
            got = call(tt.constant(x), tt.constant(y))
            np.testing.assert_array_equal(got[0].numpy(), x * c3)
            np.testing.assert_array_equal(got[1].numpy(), y * 2.0)
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(ValueError, match="tensor argument 0 has 3 on axis 0 .* gives 5"):
        concrete(tt.constant(np.ones(5)), tt.constant(np.ones(5)))

    spec = tt.data.Dataset.from_generator(
        lambda: iter([(x, np.ones(5))]), output_signature=tuple(table)
    ).map(lambda x, y: (x * tt.constant(c3), y * 2.0))
    assert [s.shape for s in spec.element_spec] == [(3,), (None,)]

    both = tt.function(lambda x, y: x * tt.constant(c3) * y, input_signature=table, backend=backend)
    assert both.get_concrete_function(*table).output_spec().shape == (3,)
    np.testing.assert_array_equal(both(tt.constant(x), tt.constant(x)).numpy(), x * c3 * x)


def test_a_retrace_for_equal_sizes_logs_inside_another_trace(caplog, capsys):
    """The log line of a trace made again for equal sizes shows the symbols, even where an
    enclosing trace knows its call's sizes (making text of a size there is a value use)."""
    inner = tt.function(lambda a: tt.matmul(a, a))
    outer = tt.function(lambda a: inner(a) * 2.0)
    with caplog.at_level(logging.INFO, logger="tracer.function"):
        for n in (3, 5, 7):
            a = np.random.default_rng(n).standard_normal((n, n))
            np.testing.assert_allclose(outer(tt.constant(a)).numpy(), 2 * a @ a, rtol=1e-12)
    assert any("again with d1 = d0" in r.getMessage() for r in caplog.records)
    assert "Logging error" not in capsys.readouterr().err


def test_a_function_that_prints_or_formats_a_size_sees_its_value():
    """A size the program makes text of (print, %-format, an f-string) is its value, as with
    TensorFlow, which traces each size: a trace that generalized the size by itself is made
    again with the sizes known, and so is every later one. A size of an input_signature's
    None stays the trace's symbol."""
    seen = []

    @tt.function
    def f(x):
        seen.append(("%s" % x.shape[0], f"{x.shape[1]}", str(x.shape)))  # noqa: UP031
        return x * 2.0

    for rows in (2, 3, 4):
        np.testing.assert_array_equal(f(np.ones((rows, 5))).numpy(), np.full((rows, 5), 2.0))
    assert [s for s in seen if "d" not in "".join(s)] == [
        ("2", "5", "(2, 5)"),
        ("3", "5", "(3, 5)"),
        ("4", "5", "(4, 5)"),
    ]
    assert f.experimental_get_tracing_count() == 3

    @tt.function(input_signature=[tt.TensorSpec([None, 5], tt.float64)])
    def g(x):
        seen.append(str(x.shape))
        return x

    g(np.ones((3, 5)))
    assert seen[-1] == "(d0, 5)"


def test_a_function_that_needs_its_sizes_is_traced_for_each():
    """A Python loop over a dimension cannot run with the size unknown: that call is traced
    with its sizes known instead, and so is every later one."""

    @tt.function
    def f(x):
        total = x[0]
        for k in range(1, x.shape[0]):
            total = total + x[k] * k
        return total

    for rows in (2, 3, 4):
        x = np.arange(rows * 2, dtype=np.float64).reshape(rows, 2)
        want = x[0] + sum(x[k] * k for k in range(1, rows))
        np.testing.assert_allclose(f(tt.constant(x)).numpy(), want)
    assert f.experimental_get_tracing_count() == 3


def test_a_comparison_of_an_unknown_size_holds_only_for_the_calls_it_was_answered_for():
    """`x.shape[0] == 1` on an unknown size answers false, as TensorFlow's None compares: the
    trace then serves only calls where that is so, and a call of size 1 is traced with its
    size (it took the other branch: the values of a different program)."""

    @tt.function
    def first_or_sum(x):
        if x.shape[0] == 1:
            return x[0] * 10.0
        return tt.reduce_sum(x, 0)

    for rows in (2, 3, 1, 4):
        x = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3) + 1
        want = x[0] * 10 if rows == 1 else x.sum(0)
        np.testing.assert_array_equal(first_or_sum(x).numpy(), want)
    assert first_or_sum.experimental_get_tracing_count() == 3  # 2, then unknown, then 1

    squeezed = tt.function(lambda x: tt.squeeze(x))  # squeezes every axis of size 1
    for rows in (2, 3, 1):
        assert (
            squeezed(np.ones((rows, 1), np.float32)).numpy().shape
            == np.squeeze(np.ones((rows, 1))).shape
        )

    @tt.function
    def product_or_scaled(x, y):
        if x.shape[0] == y.shape[0]:
            return x * y
        return tt.reduce_sum(x) * y

    for a, b in ((2, 2), (3, 3), (4, 5), (6, 6)):
        x, y = np.arange(a, dtype=np.float32) + 1, np.arange(b, dtype=np.float32) + 1
        want = x * y if a == b else x.sum() * y
        np.testing.assert_array_equal(product_or_scaled(x, y).numpy(), want)

    @tt.function
    def largest_or_zeros(x):
        if not x.shape[0]:
            return tt.zeros([3])
        return tt.reduce_max(x, 0)

    for rows in (2, 3, 0):
        want = np.zeros(3) if rows == 0 else np.ones(3)
        np.testing.assert_array_equal(
            largest_or_zeros(np.ones((rows, 3), np.float32)).numpy(), want
        )


def test_a_method_with_an_input_signature_is_called_and_traced_through_its_instance():
    """TensorFlow's pattern `class M(tf.Module)` with `@tf.function(input_signature=...)` on
    a method: the call and `m.method.get_concrete_function(...)` bind the instance, which
    the signature does not list."""

    class Scaled(tt.Module):
        def __init__(self, scale):
            super().__init__()
            self.scale = tt.Variable(scale)

        @tt.function(input_signature=[tt.TensorSpec([None], tt.float32)])
        def __call__(self, x):
            return x * self.scale

        @tt.function(input_signature=[tt.TensorSpec(None, tt.float32)])
        def any_rank(self, x):
            return x + self.scale

    two, three = Scaled(2.0), Scaled(3.0)
    x = tt.constant([1.0, 2.0])
    np.testing.assert_allclose(two(x).numpy(), [2.0, 4.0])
    np.testing.assert_allclose(three(x).numpy(), [3.0, 6.0])
    np.testing.assert_allclose(two.any_rank(tt.constant([[1.0]])).numpy(), [[3.0]])
    concrete = two.__call__.get_concrete_function()
    assert concrete.output_spec() == tt.TensorSpec([None], tt.float32)
    np.testing.assert_allclose(concrete(x).numpy(), [2.0, 4.0])
    scalar = three.any_rank.get_concrete_function(tt.TensorSpec([], tt.float32))
    np.testing.assert_allclose(scalar(tt.constant(1.0)).numpy(), 4.0)
    with pytest.raises(TypeError, match="input_signature"):
        two(tt.constant([[1.0]]))


def test_a_function_of_unknown_sizes_calls_another_of_unknown_sizes():
    """The inner function is traced for the outer's unknown sizes, and what its slice needs of
    them becomes the outer's requirement: a call that does not meet it is traced with its
    own sizes (an empty x gives an empty x[1:], as in TensorFlow)."""

    @tt.function(input_signature=[tt.TensorSpec([None, 3], tt.float32)])
    def inner(x):
        return x[1:] * 2.0

    @tt.function(input_signature=[tt.TensorSpec([None, 3], tt.float32)])
    def outer(x):
        return inner(x) + 1.0

    for rows in (4, 2, 1, 0):
        x = np.arange(rows * 3, dtype=np.float32).reshape(rows, 3)
        np.testing.assert_allclose(outer(tt.constant(x)).numpy(), x[1:] * 2.0 + 1.0)


def test_a_custom_gradient_of_unknown_sizes_compiles_under_a_tape():
    """A tuple-valued node (a custom gradient's) keeps its results' sizes when the graph is
    specialized for a call: its C declares no unknown dimension it lacks (backend="c" has
    no interpreter to fall back on)."""

    @tt.custom_gradient
    def clipped(y):
        return y, lambda dy: tt.clip_by_norm(dy, 0.5)

    f = tt.function(clipped, input_signature=[tt.TensorSpec([None], tt.float32)], backend="c")
    v = tt.Variable(2.0)
    with tt.GradientTape() as tape:
        out = f(tt.constant([3.0, 4.0]) * v)
    np.testing.assert_allclose(out.numpy(), [6.0, 8.0])
    np.testing.assert_allclose(tape.gradient(out, v).numpy(), 0.5 * (3.0 + 4.0) / np.sqrt(2.0))


def test_unknown_dimensions_of_different_sizes_in_one_call_get_one_trace(caplog):
    """TensorSpec([None]) twice: TensorFlow takes x and y of any sizes in one graph. tracer's
    trace takes an axis's unknown dimensions as one size (a batch's) until a call gives them
    two: from then on each argument's are its own, so that one trace takes every call, with
    an input_signature or with the dimensions made dynamic by retracing."""

    @tt.function(input_signature=[tt.TensorSpec([None]), tt.TensorSpec([None])])
    def f(x, y):
        return tt.reduce_sum(x) * 10.0 + tt.reduce_sum(y)

    @tt.function
    def g(x, y):
        return tt.reduce_sum(x) * 10.0 + tt.reduce_sum(y)

    with caplog.at_level(logging.INFO, logger="tracer.function"):
        for n, m in ((4, 4), (3, 5), (6, 6), (2, 7), (9, 1)):
            x, y = np.arange(n, dtype=np.float32), np.ones(m, np.float32)
            assert float(f(x, y)) == x.sum() * 10.0 + m
            assert float(g(tt.constant(x), tt.constant(y))) == x.sum() * 10.0 + m
    assert f.experimental_get_tracing_count() == 2  # (4, 4) shared, then one per argument
    assert g.experimental_get_tracing_count() == 2  # (4, 4), then one per argument
    concrete = f.get_concrete_function()
    assert [str(d) for n in concrete.stages["traced"].inputs for d in n.shape] == ["d0_0", "d0_1"]
    assert (
        sum(
            "each argument's unknown dimensions are its own" in r.getMessage()
            for r in caplog.records
        )
        == 2
    )


def test_unknown_dimensions_the_function_combines_stay_shared():
    """x * y[:, None] needs x's and y's batches equal: with them per argument the trace
    fails, so they stay one symbol, and a call of two batch sizes is traced with its sizes
    and raises what the op raises, naming the shapes."""
    f = tt.function(
        lambda x, y: x * y[:, None],
        input_signature=[tt.TensorSpec([None, 3]), tt.TensorSpec([None])],
    )
    np.testing.assert_allclose(f(tt.ones((4, 3)), tt.ones((4,))).numpy(), np.ones((4, 3)))
    with pytest.raises(ValueError, match=r"shapes \(4, 3\) and \(5, 1\) cannot be broadcast"):
        f(tt.ones((4, 3)), tt.ones((5,)))
    np.testing.assert_allclose(f(tt.ones((6, 3)), tt.ones((6,))).numpy(), np.ones((6, 3)))
    assert [str(d) for n in f.get_concrete_function().stages["traced"].inputs for d in n.shape] == [
        "d0",
        "3",
        "d0",
    ]


def test_a_concrete_functions_shared_unknown_size_given_two_sizes_is_named():
    """Two arguments traced with one unknown dimension (a batch) take the same size there: a
    call that gives them two says so, where each shape alone fits its signature."""
    both = tt.function(lambda x, y: x * y)
    spec = tt.TensorSpec([None, 3])
    concrete = both.get_concrete_function(spec, spec)
    with pytest.raises(ValueError) as raised:
        concrete(np.ones((5, 3), np.float32), np.ones((6, 3), np.float32))
    text = str(raised.value)
    assert "argument y has shape (6, 3)" in text
    assert "axis 0 must have the size of argument x's axis 0" in text


def test_a_call_giving_a_shared_unknown_size_two_sizes_leaves_dynamic_shapes_on():
    """One call whose two batches differ (an error: x * y cannot broadcast them) neither
    counts as a trace nor turns automatic dynamic shapes off: later calls of one size each
    reuse the trace of a shared unknown size (each traced again before)."""
    product = tt.function(lambda x, y: x * y)
    rows = lambda n: np.arange(n * 3, dtype=np.float32).reshape(n, 3)  # noqa: E731
    for n in (2, 3, 4):
        product(rows(n), rows(n))
    assert product.experimental_get_tracing_count() == 2
    with pytest.raises(ValueError, match="cannot be broadcast"):
        product(rows(5), rows(6))
    assert product.experimental_get_tracing_count() == 2
    for n in (7, 8, 9):
        np.testing.assert_array_equal(product(rows(n), rows(n)).numpy(), rows(n) * rows(n))
    assert product.experimental_get_tracing_count() == 2


def test_an_input_signature_of_unknown_image_sizes_traces_each_size_a_convolution_needs():
    """DeepDream's signature, [None, None, 3]: a convolution needs its input's spatial sizes
    when tracing, so each call is traced with its own sizes (the signature's trace failed);
    the values are the eager ones, and a size seen before reuses its trace."""
    rng = np.random.default_rng(3)
    filters = tt.constant(rng.standard_normal((3, 3, 3, 4)).astype(np.float32))

    @tt.function(input_signature=[tt.TensorSpec([None, None, 3], tt.float32)])
    def response(image):
        return tt.reduce_mean(tt.nn.conv2d(image[None], filters, 1, "SAME") ** 2)

    for shape in [(6, 8, 3), (5, 7, 3), (6, 8, 3)]:
        image = rng.standard_normal(shape).astype(np.float32)
        eager = tt.reduce_mean(tt.nn.conv2d(image[None], filters, 1, "SAME") ** 2)
        np.testing.assert_allclose(response(image).numpy(), eager.numpy(), rtol=1e-5)
    assert response.experimental_get_tracing_count() == 2
