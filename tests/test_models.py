"""Layers, optimizers, IndexedSlices, and the training example."""

import importlib.util
import pathlib

import numpy as np
import pytest

import tracer as tt
from codegen import array_math


def test_dense_names_build_and_values():
    first, second = tt.layers.Dense(3, name=None), tt.layers.Dense(2, activation="relu")
    assert first.name.startswith("dense") and second.name != first.name
    x = tt.constant([[1.0, -2.0], [0.5, 4.0]])
    y = second(first(x))
    assert [v.name for v in first.variables] == [f"{first.name}/kernel:0", f"{first.name}/bias:0"]
    kernel, bias = first.kernel.numpy(), first.bias.numpy()
    limit = np.sqrt(6.0 / (2 + 3))
    assert kernel.shape == (2, 3) and np.all(np.abs(kernel) <= limit) and np.all(bias == 0)
    hidden = x.numpy() @ kernel + bias
    expected = np.maximum(hidden @ second.kernel.numpy() + second.bias.numpy(), 0)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)


def test_dense_options():
    layer = tt.layers.Dense(2, activation=lambda t: t * 2.0, use_bias=False)
    out = layer(tt.ones((1, 3)))
    assert layer.bias is None and len(layer.trainable_variables) == 1
    np.testing.assert_allclose(out.numpy(), 2 * np.ones((1, 3)) @ layer.kernel.numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="unknown activation 'swishy'"):
        tt.layers.Dense(2, activation="swishy")


def test_sequential_collects_variables_in_order():
    model = tt.layers.Sequential([tt.layers.Dense(4, activation="tanh"), tt.layers.Dense(1)])
    assert model.trainable_variables == []
    model(tt.ones((2, 3)))
    shapes = [v.shape for v in model.trainable_variables]
    assert shapes == [(3, 4), (4,), (4, 1), (1,)]


def _quadratic_grads(variable):
    with tt.GradientTape() as tape:
        loss = tt.reduce_sum(variable * variable * [1.0, 3.0])
    return tape.gradient(loss, variable)


def test_sgd_with_and_without_momentum_matches_the_formula():
    for momentum in (0.0, 0.9):
        v = tt.Variable([1.0, -2.0])
        optimizer = tt.optimizers.SGD(0.1, momentum=momentum)
        value, velocity = np.array([1.0, -2.0]), np.zeros(2)
        for _ in range(3):
            optimizer.apply_gradients([(_quadratic_grads(v), v)])
            grad = 2 * value * np.array([1.0, 3.0])
            velocity = momentum * velocity - 0.1 * grad
            value = value + velocity
        np.testing.assert_allclose(v.numpy(), value, rtol=1e-5)


def test_the_learning_rate_is_a_float32_variable_as_kerass():
    # TF 2.21 printed float32 and np.float64(0.8999999985098839): Keras's rate is a floatx
    # Variable, cast up for a float64 variable's update
    optimizer = tt.optimizers.SGD(0.1)
    assert optimizer.learning_rate.dtype == tt.float32
    v = tt.Variable([1.0], dtype=tt.float64)
    optimizer.apply_gradients([(tt.constant([1.0], tt.float64), v)])
    assert v.numpy()[0] == 0.8999999985098839
    optimizer.learning_rate = 0.05
    assert optimizer.learning_rate.dtype == tt.float32
    assert float(optimizer.learning_rate) == float(np.float32(0.05))


def test_adam_matches_a_numpy_reference():
    v = tt.Variable([1.0, -2.0], dtype=tt.float64)
    optimizer = tt.optimizers.Adam(0.1)
    value, m, s = np.array([1.0, -2.0]), np.zeros(2), np.zeros(2)
    rate = float(np.float32(0.1))  # Keras's float32 rate, cast up for a float64 variable
    for t in range(1, 4):
        optimizer.apply_gradients([(_quadratic_grads(v), v)])
        grad = 2 * value * np.array([1.0, 3.0])
        m = 0.9 * m + 0.1 * grad
        s = 0.999 * s + 0.001 * grad**2
        value = value - rate * np.sqrt(1 - 0.999**t) / (1 - 0.9**t) * m / (np.sqrt(s) + 1e-7)
    np.testing.assert_allclose(v.numpy(), value, rtol=1e-10)


def _adam_steps(dtype, shape, one_pass, monkeypatch):
    """A variable and its slots after three eager Adam steps, in one pass of the installed
    kernel or one numpy operation at a time."""
    if not one_pass:
        monkeypatch.setattr(tt.optimizers.Adam, "_updated_in_one_pass", lambda *args: False)
    rng = np.random.default_rng(7)
    variable = tt.Variable(rng.standard_normal(shape).astype(dtype))
    optimizer = tt.optimizers.Adam(0.01)
    for _ in range(3):
        optimizer.apply_gradients(
            [(tt.constant(rng.standard_normal(shape).astype(dtype)), variable)]
        )
    return [
        a.numpy()
        for a in (variable, optimizer.get_slot(variable, "m"), optimizer.get_slot(variable, "v"))
    ]


@pytest.mark.parametrize("shape", [(3, 5), (784, 512)])  # one thread, and the threads
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eager_adam_in_one_pass_gives_the_bits_of_its_operations(dtype, shape, monkeypatch):
    one_pass = _adam_steps(dtype, shape, True, monkeypatch)
    step_by_step = _adam_steps(dtype, shape, False, monkeypatch)
    for got, want in zip(one_pass, step_by_step):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)


def _adam_by_numpy(x, m, v, grad, scalars):
    b1, c1, b2, c2, step, eps = scalars
    first = m * b1 + grad * c1
    second = v * b2 + grad * grad * c2
    return first, second, x - step * first / (np.sqrt(second) + eps)


@pytest.mark.parametrize("size", [300, 200_000])  # one thread, and the threads
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eager_adam_in_one_pass_keeps_numpys_bits_where_squares_are_subnormal(dtype, size):
    """Gradients whose squares (scaled by 1 - b2) fall among the subnormals, and subnormal
    moments and gradients, are made without subnormals in float32 (a CPU's slow path), with
    numpy's bits all the same: over gradients of every magnitude, signed zeros, subnormal
    gradients and slots, NaN and infinities, squares that overflow; blocks of subnormal
    values (the first quarter: the whole step on float's grid), of tiny gradients and normal
    slots (the second quarter: the second moment on it) and of normal values (the rest)."""
    rng = np.random.default_rng(11)
    info = np.finfo(dtype)
    exponents = rng.integers(-160 if dtype == np.float32 else -1100, 60, size)
    grad = (rng.choice([-1.0, 1.0], size) * rng.uniform(1, 2, size) * 2.0**exponents).astype(dtype)
    grad[size // 2 :] = rng.standard_normal(size - size // 2)  # blocks of normal gradients
    special = [0.0, -0.0, np.nan, np.inf, -np.inf, info.smallest_subnormal, -info.tiny / 3]
    special += [2.0**-63, -(2.0**-64), 2.0**-70, 2.0**-75 * 3, 1e20, 2.0**-48, 2.0**-49]
    grad[: len(special)] = special
    x = rng.standard_normal(size).astype(dtype)
    lowest = np.where(np.arange(size) < size // 4, -140, -20)  # subnormal slots, or normal
    m = (rng.standard_normal(size) * 2.0 ** rng.integers(lowest, 0)).astype(dtype)
    v = np.abs(rng.standard_normal(size) * 2.0 ** rng.integers(lowest, 0)).astype(dtype)
    m[-3:], v[-3:] = info.smallest_subnormal, info.tiny / 2
    scalars = np.array([0.9, 1 - 0.9, 0.999, 1 - 0.999, 1e-3, 1e-7], dtype)
    updated = array_math.adam_updates([(x, m, v, grad)], scalars)
    if updated is None:
        pytest.skip("the kernels installed with tracer are not built here")
    got = updated[0]
    with np.errstate(all="ignore"):
        want = _adam_by_numpy(x, m, v, grad, scalars)
    scaled_squares = grad.astype(np.float64) ** 2 * (1 - 0.999)
    assert np.sum((grad != 0) & (scaled_squares < info.tiny)) > size // 10  # the slow path's
    same = np.uint32 if dtype == np.float32 else np.uint64
    for got_part, want_part in zip(got, want):
        np.testing.assert_array_equal(np.isnan(got_part), np.isnan(want_part))
        numbers = ~np.isnan(want_part)
        np.testing.assert_array_equal(got_part[numbers].view(same), want_part[numbers].view(same))


def _adam_of_many(one_pass, monkeypatch):
    """Three variables of two dtypes, the first given twice in each call, after three eager
    Adam steps: their values and slots."""
    if not one_pass:
        monkeypatch.setattr(tt.optimizers.Adam, "_updated_in_one_pass", lambda *args: False)
    rng = np.random.default_rng(5)
    kinds = [((3, 5), np.float32), ((4,), np.float64), ((7,), np.float32)]
    variables = [tt.Variable(rng.standard_normal(s).astype(d)) for s, d in kinds]
    optimizer = tt.optimizers.Adam(0.01)
    for _ in range(3):
        pairs = [
            (tt.constant(rng.standard_normal(s).astype(d)), v)
            for (s, d), v in zip(kinds, variables)
        ]
        pairs.append((tt.constant(rng.standard_normal((3, 5)).astype(np.float32)), variables[0]))
        optimizer.apply_gradients(pairs)
    slots = [optimizer.get_slot(v, name) for v in variables for name in ("m", "v")]
    return [a.numpy() for a in (*variables, *slots)]


def test_eager_adam_of_many_variables_in_one_call_gives_each_its_operations_bits(monkeypatch):
    """The installed kernel updates every variable of a call at once, a variable given twice
    once after the other, with the bits of numpy's operations one by one."""
    together = _adam_of_many(True, monkeypatch)
    one_by_one = _adam_of_many(False, monkeypatch)
    for got, want in zip(together, one_by_one):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_eager_adam_of_float16_takes_numpys_operations():
    ones = np.ones(4, np.float16)
    assert array_math.adam_updates([(ones, ones, ones, ones)], ones[:1]) is None
    before = tt.Variable(ones)
    tt.optimizers.Adam(0.1).apply_gradients([(tt.constant(ones), before)])
    assert before.dtype == tt.float16
    np.testing.assert_allclose(before.numpy(), np.full(4, 0.9), rtol=3e-3)


def test_none_gradients_leave_variables_alone():
    v = tt.Variable([1.0])
    tt.optimizers.SGD(1.0).apply_gradients([(None, v)])
    assert v.numpy().tolist() == [1.0]


def test_gather_gradient_is_indexed_slices_accumulated_like_tensorflow():
    table = tt.Variable(np.arange(8.0).reshape(4, 2))
    with tt.GradientTape() as tape:
        loss = tt.reduce_sum(tt.gather(table, [1, 3, 1]) * 2.0) + tt.reduce_sum(
            tt.gather(table, [[0], [1]])
        )
    grad = tape.gradient(loss, table)
    assert isinstance(grad, tt.IndexedSlices)
    assert sorted(grad.indices.numpy().tolist()) == [0, 1, 1, 1, 3]
    assert grad.values.shape == (5, 2) and grad.dense_shape.numpy().tolist() == [4, 2]
    np.testing.assert_array_equal(
        tt.convert_to_tensor(grad).numpy(), [[1, 1], [5, 5], [0, 0], [2, 2]]
    )
    np.testing.assert_array_equal(tt.multiply(grad, 1.0).numpy(), [[1, 1], [5, 5], [0, 0], [2, 2]])


def test_gather_gradient_mixed_with_a_dense_use_is_dense():
    table = tt.Variable(np.ones((3, 2)))
    with tt.GradientTape() as tape:
        loss = tt.reduce_sum(tt.gather(table, [2])) + tt.reduce_sum(table)
    grad = tape.gradient(loss, table)
    assert isinstance(grad, tt.Tensor)
    np.testing.assert_array_equal(grad.numpy(), [[1, 1], [1, 1], [2, 2]])


def test_sgd_applies_indexed_slices_row_by_row():
    table = tt.Variable(np.zeros((3, 2)))
    rows = tt.IndexedSlices(tt.constant(np.ones((3, 2))), tt.constant([0, 2, 0]), (3, 2))
    tt.optimizers.SGD(0.5).apply_gradients([(rows, table)])
    np.testing.assert_array_equal(table.numpy(), [[-1, -1], [0, 0], [-0.5, -0.5]])


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("name", ["adam", "rmsprop", "adagrad"])
def test_a_row_gathered_twice_adds_its_slices_squares_to_the_second_moment(name, compiled):
    """As Keras squares an IndexedSlices gradient: slice by slice, the squares summed row by
    row (an embedding's token met twice in a batch adds g1^2 + g2^2, not (g1 + g2)^2), while
    the gradient itself is summed; eagerly and compiled alike (TensorFlow 2.21's Adam gives
    a velocity of 0.005 for row 0 here: 0.001 * (1 + 4))."""
    table = tt.Variable(np.zeros((3, 1)))
    optimizer = tt.optimizers.get(name)
    weights = tt.constant([[1.0], [2.0], [5.0]], tt.float64)

    def step():
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum(tt.gather(table, [0, 0, 1]) * weights)
        grad = tape.gradient(loss, table)
        optimizer.apply_gradients([(grad, table)])
        return grad

    grad = (tt.function(step) if compiled else step)()
    assert isinstance(grad, tt.IndexedSlices)
    summed, squares = np.array([3.0, 5.0, 0.0]), np.array([5.0, 25.0, 0.0])
    rate = float(np.float32(0.001))  # Keras's float32 learning rate, cast up
    if name == "adam":
        m, v = (optimizer.get_slot(table, k).numpy().ravel() for k in ("m", "v"))
        np.testing.assert_allclose(m, 0.1 * summed, rtol=1e-15)
        np.testing.assert_allclose(v, 0.001 * squares, rtol=1e-12)
        step_size = rate * np.sqrt(1 - 0.999) / (1 - 0.9)
        want = -step_size * m / (np.sqrt(v) + 1e-7)
    elif name == "rmsprop":
        v = optimizer.get_slot(table, "velocity").numpy().ravel()
        np.testing.assert_allclose(v, 0.1 * squares, rtol=1e-15)
        want = -rate * summed / np.sqrt(v + 1e-7)
    else:
        a = optimizer.get_slot(table, "accumulator").numpy().ravel()
        np.testing.assert_allclose(a, 0.1 + squares, rtol=1e-15)
        want = -rate * summed / np.sqrt(a + 1e-7)
    np.testing.assert_allclose(table.numpy().ravel(), want, rtol=1e-12, atol=1e-300)


def test_global_norm_counts_an_indexed_slices_by_its_values():
    """tf.linalg.global_norm: sqrt of the sum of every tensor's squares, an IndexedSlices by
    its values (duplicates counted apart, as TensorFlow's sqrt(1 + 4 + 25))."""
    rows = tt.IndexedSlices(tt.constant([[1.0], [2.0], [5.0]]), tt.constant([0, 0, 1]), (3, 1))
    norm = tt.linalg.global_norm([rows, None, tt.constant([3.0, 4.0])])
    np.testing.assert_allclose(float(norm), np.sqrt(30.0 + 25.0), rtol=1e-6)


def test_training_example_learns_the_spirals():
    path = pathlib.Path(__file__).parent.parent / "examples" / "train_mlp.py"
    spec = importlib.util.spec_from_file_location("train_mlp", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    losses, train_accuracy, test_accuracy = example.train(steps=300, log_every=100)
    assert losses[0] > 1.0 and losses[-1] < 0.05 and losses == sorted(losses, reverse=True)
    assert train_accuracy > 0.97 and test_accuracy > 0.95


def test_cnn_example_learns_the_generated_images():
    path = pathlib.Path(__file__).parent.parent / "examples" / "train_cnn.py"
    spec = importlib.util.spec_from_file_location("train_cnn", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    losses, accuracy = example.train(steps=60, log_every=20)
    assert losses[0] < 1.0 and losses[-1] < 0.1 and accuracy > 0.95


def test_a_learning_rate_set_after_compiling_reaches_the_compiled_step():
    """Keras's callbacks change `optimizer.learning_rate` between epochs; a step compiled
    before the change must use the new rate, not the one it was traced with."""
    v = tt.Variable([1.0, -2.0], dtype=tt.float64)
    optimizer = tt.optimizers.SGD(0.1)

    @tt.function
    def step():
        optimizer.apply_gradients([(_quadratic_grads(v), v)])

    value = np.array([1.0, -2.0])
    for rate in (0.1, 0.01, 0.25):
        optimizer.learning_rate = rate
        step()
        # Keras's float32 rate, cast up for a float64 variable
        value = value - float(np.float32(rate)) * 2 * value * np.array([1.0, 3.0])
        np.testing.assert_allclose(v.numpy(), value, rtol=1e-12)
    optimizer.learning_rate.assign(0.5)
    assert float(optimizer.learning_rate) == 0.5
    assert step.experimental_get_tracing_count() == 1
