"""The softmax over the last axis as one primitive (tracer/ops/softmax_ops.py): its values in
every backend against numpy's, the rows TensorFlow answers with NaN, sizes known only at
run time, and its gradient as one primitive. Derivatives of every order against finite
differences are in tests/test_gradients.py (`softmax`, `softmax_backprop`)."""

import numpy as np
import pytest

import tracer as tt
from tracer.ops.softmax_ops import softmax_vjp

BACKENDS = ("eager", "interpreter", "c")


def reference(x):
    with np.errstate(all="ignore"):
        exps = np.exp(x - np.max(x, axis=-1, keepdims=True, initial=-np.inf))
        return exps / exps.sum(axis=-1, keepdims=True)


def run(backend, function, *args):
    args = [tt.constant(a) for a in args]
    if backend == "eager":
        return function(*args).numpy()
    return tt.function(function, backend=backend)(*args).numpy()


@pytest.mark.parametrize("backend", BACKENDS)
def test_rows_with_nan_inf_or_only_minus_inf_are_nan_and_a_masked_entry_is_zero(backend):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 7))
    x[0, 2] = np.nan
    x[1, 3] = np.inf
    x[2, :] = -np.inf
    x[3, 1:4] = -1e9  # a causal mask's entries
    x[4, 0] = -np.inf  # one -inf adds nothing
    y = run(backend, tt.nn.softmax, x)
    assert np.isnan(y[:3]).all()
    np.testing.assert_allclose(y[3:], reference(x)[3:], rtol=1e-14, atol=0)
    assert y[3, 1:4].tolist() == [0.0, 0.0, 0.0] and y[4, 0] == 0.0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_the_vector_jacobian_product_match_numpy(backend, dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((2, 3, 37)) * 4).astype(dtype)
    v = rng.standard_normal((2, 3, 37)).astype(dtype)
    y = reference(x.astype(np.float64))
    tolerance = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(run(backend, tt.nn.softmax, x), y, rtol=tolerance, atol=1e-7)
    expected = y * (v - np.sum(v * y, axis=-1, keepdims=True))
    got = run(backend, lambda a, b: softmax_vjp(tt.nn.softmax(a), b), x, v)
    # y (v - sum(v y)) cancels where v is near the sum: its rounding is a few units of the
    # dtype's precision of y (|v| + sum(|v y|)), not of the difference
    rounding = 4 * np.finfo(dtype).eps * y * (np.abs(v) + np.sum(np.abs(v * y), -1, keepdims=True))
    relative = 1e-5 if dtype == np.float32 else 1e-13
    assert np.all(np.abs(got - expected) <= rounding + relative * np.abs(expected))


def test_sizes_known_only_at_run_time_and_empty_axes():
    spec = [tt.TensorSpec([None, None], tt.float64)]
    f = tt.function(tt.nn.softmax, input_signature=spec, backend="c")
    rng = np.random.default_rng(2)
    for shape in [(3, 5), (1, 40), (4, 1), (0, 3), (3, 0)]:
        x = rng.standard_normal(shape)
        y = f(tt.constant(x)).numpy()
        assert y.shape == shape
        np.testing.assert_allclose(y, reference(x), rtol=1e-14)
    assert f.experimental_get_tracing_count() == 1


def test_a_compiled_gradient_runs_one_softmax_and_one_backprop_node():
    def loss_and_gradient(x, w):
        with tt.GradientTape() as tape:
            tape.watch(x)
            loss = tt.reduce_sum(tt.nn.softmax(x) * w)
        return loss, tape.gradient(loss, x)

    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    f = tt.function(loss_and_gradient, backend="c")
    loss, gradient = f(tt.constant(x), tt.constant(w))
    y = reference(x)
    np.testing.assert_allclose(loss.numpy(), np.sum(y * w), rtol=1e-14)
    np.testing.assert_allclose(
        gradient.numpy(), y * (w - np.sum(w * y, -1, keepdims=True)), rtol=1e-13
    )
    final = f.get_concrete_function(tt.constant(x), tt.constant(w)).stages.final
    ops = [node.op for node in final.nodes]
    assert ops.count("softmax") == 1 and ops.count("softmax_backprop") == 1
    assert "exp" not in ops


def test_other_axes_keep_the_composite_form_with_the_same_values():
    x = np.random.default_rng(4).standard_normal((3, 4, 5))
    for axis in (0, 1, -2):
        got = tt.nn.softmax(tt.constant(x), axis=axis).numpy()
        expected = np.moveaxis(reference(np.moveaxis(x, axis, -1)), -1, axis)
        np.testing.assert_allclose(got, expected, rtol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eager_rows_run_the_templates_loops_and_numpys_where_no_module_can_be_built(
    dtype, monkeypatch
):
    from codegen import array_math

    rng = np.random.default_rng(5)
    x = (rng.standard_normal((8, 4, 64, 64)) * 3).astype(dtype)
    x[0, 0, 0, 5:] = -1e9  # a causal mask's row
    v = rng.standard_normal(x.shape).astype(dtype)
    eager = [tt.nn.softmax(tt.constant(x)).numpy()]
    eager.append(softmax_vjp(tt.constant(eager[0]), tt.constant(v)).numpy())
    compiled = tt.function(
        lambda x, v: (lambda y: (y, softmax_vjp(y, v)))(tt.nn.softmax(x)), backend="c"
    )(x, v)
    # rows of 64: GCC vectorizes the eager loops and the compiled ones alike
    for got, want in zip(compiled, eager):
        assert got.numpy().tobytes() == want.tobytes()
    monkeypatch.setattr(array_math, "_entries", {"float32": None, "float64": None})
    numpys = tt.nn.softmax(tt.constant(x)).numpy()
    numpys_vjp = softmax_vjp(tt.constant(eager[0]), tt.constant(v)).numpy()
    ulps = 8 * np.finfo(dtype).eps
    np.testing.assert_allclose(eager[0], numpys, rtol=ulps, atol=np.finfo(dtype).tiny)
    np.testing.assert_allclose(eager[1], numpys_vjp, rtol=ulps, atol=ulps)


def test_a_small_eager_softmax_is_numpys_and_builds_nothing(monkeypatch):
    from codegen import array_math
    from tracer.ops.softmax_ops import ROWS_IN_C_FROM

    def refuse(type_name):
        raise AssertionError("a small softmax asked for the module")

    monkeypatch.setattr(array_math, "_entry", refuse)
    x = np.random.default_rng(6).standard_normal((ROWS_IN_C_FROM // 10 - 1, 10))
    assert tt.nn.softmax(tt.constant(x)).numpy().tobytes() == reference(x).tobytes()
