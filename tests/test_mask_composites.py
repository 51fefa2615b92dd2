"""tt.boolean_mask, tt.where with only a condition, tt.unique and tt.unique_with_counts:
TensorFlow 2.21's outputs for the same inputs, eagerly and compiled where the mask is a
constant, dense gradients, and the errors (a mask known only when a compiled function runs
among them)."""

import numpy as np
import pytest

import tracer as tt

BACKENDS = ["interpreter", "c"]
CUBE = np.arange(24).reshape(2, 3, 4).astype(np.int32)

# (tensor, mask, axis) -> what TensorFlow 2.21 printed
MASKED = [
    (np.array([[1, 2], [3, 4], [5, 6]]), [True, False, True], None, [[1, 2], [5, 6]]),
    (
        CUBE,
        [[True, False, True], [False, True, True]],
        None,
        [[0, 1, 2, 3], [8, 9, 10, 11], [16, 17, 18, 19], [20, 21, 22, 23]],
    ),
    (
        CUBE,
        [True, False, True],
        1,
        [[[0, 1, 2, 3], [8, 9, 10, 11]], [[12, 13, 14, 15], [20, 21, 22, 23]]],
    ),
    (
        CUBE,
        [[True, False, True, True], [False, True, True, False], [True, True, True, True]],
        -2,
        [[0, 2, 3, 5, 6, 8, 9, 10, 11], [12, 14, 15, 17, 18, 20, 21, 22, 23]],
    ),
]


@pytest.mark.parametrize("case", range(len(MASKED)))
def test_boolean_mask_gives_tensorflows_outputs_eagerly_and_compiled(case):
    tensor, mask, axis, want = MASKED[case]
    got = tt.boolean_mask(tt.constant(tensor), mask, axis=axis)
    np.testing.assert_array_equal(got.numpy(), want)
    for backend in BACKENDS:
        f = tt.function(lambda t: tt.boolean_mask(t, np.array(mask), axis=axis), backend=backend)
        np.testing.assert_array_equal(f(tt.constant(tensor)).numpy(), want)


def test_boolean_mask_gradient_is_dense_as_tensorflows():
    """TensorFlow 2.21: the gradient of sum(boolean_mask(x, x > 1.5) ** 2) at a variable
    [1, 2, 3] is the tensor [0, 4, 6]; with respect to rows of a matrix masked along axis 1,
    each kept column gets its part."""
    x = tt.Variable([1.0, 2.0, 3.0])
    with tt.GradientTape() as tape:
        y = tt.reduce_sum(tt.boolean_mask(x, x > 1.5) ** 2)
    gradient = tape.gradient(y, x)
    assert isinstance(gradient, tt.Tensor)
    np.testing.assert_array_equal(gradient.numpy(), [0.0, 4.0, 6.0])
    w0 = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    keep = np.array([True, False, True, True])

    def value_and_gradient(w):
        with tt.GradientTape() as tape:
            tape.watch(w)
            y = tt.reduce_sum(tt.sin(tt.boolean_mask(w, keep, axis=1)))
        return tape.gradient(y, w)

    want = np.cos(w0) * keep
    for run in [value_and_gradient] + [
        tt.function(value_and_gradient, backend=b) for b in BACKENDS
    ]:
        np.testing.assert_allclose(run(tt.constant(w0)).numpy(), want, rtol=1e-14)


def test_where_with_only_a_condition():
    got = tt.where([[True, False], [False, True]])
    assert got.dtype == tt.int64
    np.testing.assert_array_equal(got.numpy(), [[0, 0], [1, 1]])
    np.testing.assert_array_equal(tt.where(tt.constant([1.0, 0.0, 2.0])).numpy(), [[0], [2]])
    assert tt.where(tt.zeros([2, 0]) > 0).shape == (0, 2)
    np.testing.assert_array_equal(tt.where([True, False], 1.0, 2.0).numpy(), [1.0, 2.0])
    with pytest.raises(ValueError, match="give both x and y, or neither"):
        tt.where([True], 1.0)


def test_unique_and_its_counts():
    """TensorFlow 2.21's documented example and its outputs, strings and out_idx."""
    y, idx = tt.unique([1, 1, 2, 4, 4, 4, 7, 8, 8])
    np.testing.assert_array_equal(y.numpy(), [1, 2, 4, 7, 8])
    np.testing.assert_array_equal(idx.numpy(), [0, 0, 1, 2, 2, 2, 3, 4, 4])
    assert y.dtype == tt.int32 and idx.dtype == tt.int32
    counted = tt.unique_with_counts([1, 1, 2, 4, 4, 4, 7, 8, 8])
    np.testing.assert_array_equal(counted.count.numpy(), [2, 1, 3, 1, 2])
    np.testing.assert_array_equal(counted.y.numpy(), [1, 2, 4, 7, 8])
    words = tt.unique(tt.constant(["b", "a", "b"]))
    assert words.y.numpy().tolist() == [b"b", b"a"]
    np.testing.assert_array_equal(words.idx.numpy(), [0, 1, 0])
    floats = tt.unique([1.0, 2.0, 1.0], out_idx=tt.int64)
    assert floats.y.dtype == tt.float32 and floats.idx.dtype == tt.int64
    np.testing.assert_array_equal(floats.idx.numpy(), [0, 1, 0])
    empty = tt.unique(tt.zeros([0], tt.int32))
    assert empty.y.shape == (0,) and empty.idx.shape == (0,)


def test_clear_errors():
    t = tt.constant([[1, 2], [3, 4], [5, 6]])
    with pytest.raises(ValueError, match=r"mask of shape \(2,\) must have the shape of the tensor"):
        tt.boolean_mask(t, [True, False])
    with pytest.raises(ValueError, match="mask cannot be a scalar"):
        tt.boolean_mask(t, True)
    with pytest.raises(TypeError, match="mask must be bool, not int64"):
        tt.boolean_mask(t, [1, 0, 1])
    with pytest.raises(ValueError, match=r"x must be a vector, not of shape \(1, 1\)"):
        tt.unique([[1]])
    with pytest.raises(TypeError, match="out_idx must be int32 or int64"):
        tt.unique([1], out_idx=tt.float32)


@pytest.mark.parametrize(
    "function, argument, what",
    [
        (lambda x: tt.boolean_mask(x, x > 1.5), [1.0, 2.0, 3.0], "tt.boolean_mask's mask"),
        (lambda x: tt.where(x > 1.5), [1.0, 2.0, 3.0], "tt.where's condition (with no x and y)"),
        (lambda x: tt.unique(x * 2).y, [1, 2, 1], "tt.unique's x"),
    ],
)
def test_a_length_computed_when_the_function_runs_runs_it_as_python(
    function, argument, what, caplog
):
    """TF 2.21's tf.function takes a mask computed in the function (its graph's shapes are
    partly unknown); tracer's compiled code holds sizes known when tracing, so the function
    runs as Python at each call, with a log line naming the op and the user's line (it raised
    a TypeError)."""
    f = tt.function(function)
    x = tt.constant(argument)
    with caplog.at_level("WARNING", logger="tracer.function"):
        np.testing.assert_array_equal(f(x).numpy(), function(x).numpy())
    assert f"computes {what} when it runs (at test_mask_composites.py:" in caplog.text
    assert "runs as Python at each call" in caplog.text
    y = tt.constant(argument[:2])  # and again, another length, without a second warning
    np.testing.assert_array_equal(f(y).numpy(), function(y).numpy())
    assert caplog.text.count("runs as Python at each call") == 1


def test_a_boolean_index_masks_as_tensorflow_indexes():
    x = tt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    mask = np.array([True, False, True])
    for key in (mask, tt.constant(mask)):
        np.testing.assert_array_equal(x[key].numpy(), [[1.0, 2.0], [5.0, 6.0]])
    np.testing.assert_array_equal(x[~tt.constant(mask)].numpy(), [[3.0, 4.0]])
    np.testing.assert_array_equal(tt.Variable(x)[mask].numpy(), [[1.0, 2.0], [5.0, 6.0]])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(x[mask] ** 2)
    np.testing.assert_array_equal(
        tape.gradient(y, x).numpy(), [[2.0, 4.0], [0.0, 0.0], [10.0, 12.0]]
    )
    np.testing.assert_array_equal(x[np.array(1)].numpy(), [3.0, 4.0])
    with pytest.raises(TypeError, match="ndarray of shape \\(2,\\) and dtype int64"):
        x[np.array([0, 2])]
