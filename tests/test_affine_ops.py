"""A Dense layer's eager call outside any observer (tracer/ops/affine_ops.py): one array
with the bits of matmul, add and relu applied as ops, and the ops themselves wherever
anything watches, records or checks them."""

import numpy as np
import pytest

import tracer as tt
from tests.switching_threads import run_switching
from tracer.ops import core
from tracer.ops.affine_ops import affine

# (rows, inputs, units): numpy's product; the BLAS's or the installed blocks' with threads
# (relu's installed kernel from 2^15 elements); from 2^16 elements the ops themselves
SIZES = [(4, 3, 5), (32, 20, 64), (127, 256, 512), (128, 256, 512)]


def _operands(rows, inputs, units, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, inputs)).astype(dtype)
    x[0, :2] = [np.nan, np.inf]  # a NaN row and an infinite one pass through as the ops pass them
    kernel = tt.Variable(rng.standard_normal((inputs, units)).astype(dtype))
    bias = tt.Variable(rng.standard_normal(units).astype(dtype))
    return tt.constant(x), kernel, bias


def _by_the_ops(x, kernel, bias, with_relu):
    y = tt.matmul(x, kernel)
    if bias is not None:
        y = tt.math.add(y, bias)
    return tt.nn.relu(y) if with_relu else y


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows, inputs, units", SIZES)
@pytest.mark.parametrize("with_relu", [False, True])
@pytest.mark.parametrize("with_bias", [False, True])
def test_one_array_has_the_bits_of_the_ops(rows, inputs, units, dtype, with_relu, with_bias):
    x, kernel, bias = _operands(rows, inputs, units, dtype)
    bias = bias if with_bias else None
    got = affine(x, kernel, bias, with_relu)
    expected = _by_the_ops(x, kernel, bias, with_relu)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got.numpy().view(np.uint8), expected.numpy().view(np.uint8))
    product = x.numpy().astype(np.float64) @ kernel.numpy().astype(np.float64)
    reference = product + (0 if bias is None else bias.numpy())
    reference = np.maximum(reference, 0) if with_relu else reference
    finite = np.isfinite(reference)
    tolerance = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(
        got.numpy()[finite], reference[finite], rtol=tolerance, atol=tolerance
    )


def test_the_result_is_a_new_array_and_the_weights_are_untouched():
    x, kernel, bias = _operands(8, 4, 6, np.float32)
    before = kernel.numpy().copy(), bias.numpy().copy()
    y = affine(x, kernel, bias, True)
    assert not np.shares_memory(y.numpy(), kernel.numpy())
    assert not np.shares_memory(y.numpy(), bias.numpy())
    np.testing.assert_array_equal(kernel.numpy(), before[0])
    np.testing.assert_array_equal(bias.numpy(), before[1])


def test_a_dense_layer_outside_a_tape_gives_the_ops_values():
    rng = np.random.default_rng(1)
    x = tt.constant(rng.standard_normal((16, 7)).astype(np.float32))
    for activation in ("relu", None, "tanh"):
        layer = tt.keras.layers.Dense(9, activation=activation)
        got = layer(x).numpy()
        y = tt.math.add(tt.matmul(x, layer.kernel), layer.bias)
        expected = {"relu": tt.nn.relu, None: lambda v: v, "tanh": tt.tanh}[activation](y)
        np.testing.assert_array_equal(got, expected.numpy())


def test_inside_a_tape_the_ops_are_recorded_and_differentiated():
    x, kernel, bias = _operands(5, 3, 4, np.float64)
    x = tt.constant(np.nan_to_num(x.numpy(), posinf=2.0))
    with tt.GradientTape() as tape:
        loss = tt.reduce_sum(affine(x, kernel, bias, True) ** 2)
    ops = [
        line.split("= ")[1].split()[0].split("[")[0]
        for line in tape.ir().splitlines()
        if "= " in line
    ]
    assert ops[-5:] == ["matmul", "add", "relu", "pow", "reduce_sum"]
    grad_kernel, grad_bias = tape.gradient(loss, [kernel, bias])
    h = x.numpy() @ kernel.numpy() + bias.numpy()
    upstream = 2 * np.maximum(h, 0) * (h > 0)
    np.testing.assert_allclose(grad_kernel.numpy(), x.numpy().T @ upstream, rtol=1e-12)
    np.testing.assert_allclose(grad_bias.numpy(), upstream.sum(axis=0), rtol=1e-12)


def test_a_compiled_call_computes_the_same_values():
    x, kernel, bias = _operands(32, 20, 64, np.float32)
    x = tt.constant(np.nan_to_num(x.numpy(), posinf=3.0))
    compiled = tt.function(lambda x: affine(x, kernel, bias, True))
    np.testing.assert_allclose(
        compiled(x).numpy(), affine(x, kernel, bias, True).numpy(), rtol=1e-6
    )


def test_the_result_remembers_the_variable_the_last_op_read_as_the_ops_result_does():
    x, kernel, bias = _operands(3, 2, 4, np.float32)
    for with_bias in (True, False):
        chosen = bias if with_bias else None
        got = affine(x, kernel, chosen, False)
        expected = _by_the_ops(x, kernel, chosen, False)
        assert got._origin[0] == expected._origin[0] == (bias if with_bias else kernel).name
        assert got._origin[1][0] == __file__  # the user's line, not tracer's
    assert affine(x, kernel, bias, True)._origin is None  # relu's input read no Variable
    with tt.GradientTape() as tape:
        tape.watch(x)
        loss = tt.reduce_sum(affine(x, kernel, bias, False))
    outside = affine(x, kernel, bias, False)
    with tt.GradientTape() as tape:
        loss = tt.reduce_sum(outside * 2.0)
    assert tape.gradient(loss, outside) is None
    assert repr(bias.name) in tape.explain(loss, outside)


def test_a_numerics_check_sees_the_ops():
    x, kernel, bias = _operands(4, 3, 2, np.float32)
    tt.debugging.enable_check_numerics()
    try:
        with pytest.raises(tt.errors.InvalidArgumentError, match="matmul|add"):
            affine(x, kernel, bias, False)
    finally:
        tt.debugging.disable_check_numerics()


def test_what_does_not_fit_takes_the_ops_and_their_errors(monkeypatch):
    rng = np.random.default_rng(2)
    kernel = tt.Variable(rng.standard_normal((3, 4)).astype(np.float32))
    with pytest.raises(tt.errors.InvalidArgumentError, match="matmul"):
        affine(tt.ones((2, 5)), kernel)
    wide_bias = tt.Variable(np.ones((2, 2, 4), np.float32))  # broadcasts past the product
    np.testing.assert_array_equal(
        affine(tt.ones((2, 3)), kernel, wide_bias).numpy(),
        (tt.matmul(tt.ones((2, 3)), kernel) + wide_bias).numpy(),
    )
    ones16 = tt.ones((2, 3), tt.float16)
    kernel16 = tt.Variable(kernel.numpy().astype(np.float16))
    np.testing.assert_array_equal(
        affine(ones16, kernel16, None, True).numpy(),
        tt.nn.relu(tt.matmul(ones16, kernel16)).numpy(),
    )
    taken = []
    monkeypatch.setattr(core, "eager_results_unobserved", lambda: taken.append(True) or False)
    np.testing.assert_array_equal(
        affine(tt.ones((2, 3)), kernel).numpy(), tt.matmul(tt.ones((2, 3)), kernel).numpy()
    )
    assert taken == [True]


def test_a_large_result_takes_the_ops_and_keeps_their_nan():
    """From LARGE_FLOATING_FROM elements add's kernel runs on the threads and keeps the
    bias's NaN where both operands are NaN; numpy's in-place add would keep the product's."""
    layer = tt.keras.layers.Dense(64)
    x = tt.constant(np.full((1024, 8), np.nan, np.float32))
    layer(x)
    layer.bias.assign(np.full(64, -np.nan, np.float32))
    for rows in (1023, 1024):
        got = layer(x[:rows]).numpy()
        expected = tt.math.add(tt.matmul(x[:rows], layer.kernel), layer.bias).numpy()
        np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))


def test_the_weights_read_are_marked_handed_out_as_a_read_marks_them():
    x, kernel, bias = _operands(4, 3, 2, np.float32)
    kernel._shared = bias._shared = False
    affine(x, kernel, bias, True)
    assert kernel._shared and bias._shared


def test_layers_called_from_several_threads_leave_no_call_open():
    from tracer.keras.layers import layer as layer_module

    dense = tt.keras.layers.Dense(2, activity_regularizer="l2")
    x = tt.ones((1, 2))
    dense(x)

    def calls():
        for _ in range(3000):
            dense(x)

    run_switching([calls] * 4)
    assert layer_module._call_depth[0] == 0
    dropout = tt.keras.layers.Dropout(0.5)
    ones = tt.ones((1, 64))
    dropout(ones, training=True)
    np.testing.assert_array_equal(dropout(ones).numpy(), ones.numpy())  # not training


def test_the_python_path_notes_the_origin_the_c_path_notes():
    """core._tensor_with_origin, where fast_apply.c is not built, against its C copy."""
    _, kernel, _ = _operands(2, 2, 2, np.float32)
    value = np.ones(3, np.float32)
    made = [f(value, kernel._node) for f in (core._tensor_with_origin, core.tensor_with_origin)]
    assert made[0]._origin == made[1]._origin
    assert made[0]._origin[0] == kernel.name and made[0]._origin[1][0] == __file__
    assert all(t._value is value and t._node is None for t in made)
