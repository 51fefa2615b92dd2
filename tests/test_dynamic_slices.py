"""Windows whose start is computed while a traced function runs (tracer/ops/dynamic_slices.py):
tt.slice with such begins, tt.image.crop_to_bounding_box with such offsets and
tt.image.random_crop, against numpy slices (TensorFlow 2.21 printed the same values), in
both backends, with gradients, and the errors."""

import numpy as np
import pytest

import tracer as tt

X = np.arange(32, dtype=np.float32).reshape(2, 4, 4)


@pytest.mark.parametrize("backend", ["interpreter", "c"])
def test_slices_at_begins_known_when_the_function_runs(backend):
    by_parts = tt.function(lambda x, o: tt.slice(x, [0, o[0], o[1]], [1, 2, 2]), backend=backend)
    np.testing.assert_array_equal(by_parts(X, tt.constant([1, 2])).numpy(), X[0:1, 1:3, 2:4])
    whole = tt.function(lambda x, o: tt.slice(x, o, [2, 2, 1]), backend=backend)
    np.testing.assert_array_equal(whole(X, tt.constant([0, 1, 3])).numpy(), X[0:2, 1:3, 3:4])
    crop = tt.function(
        lambda im, a, b: tt.image.crop_to_bounding_box(im, a, b, 2, 3), backend=backend
    )
    images = X.reshape(2, 4, 4, 1)
    np.testing.assert_array_equal(
        crop(images, tt.constant(2), tt.constant(1)).numpy(), images[:, 2:4, 1:4]
    )
    with pytest.raises(tt.errors.InvalidArgumentError):
        by_parts(X, tt.constant([3, 3]))


def test_the_gradient_of_a_window_is_its_place_in_zeros():
    window = tt.function(lambda x, o: tt.slice(x, [0, o[0], o[1]], [1, 2, 2]))
    x = tt.Variable(X)
    with tt.GradientTape() as tape:
        y = tt.reduce_sum(window(x, tt.constant([1, 2])) ** 2)
    expected = np.zeros_like(X)
    expected[0, 1:3, 2:4] = 2 * X[0, 1:3, 2:4]
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), expected)


def test_random_crops_are_windows_drawn_anew_at_each_call():
    image = np.arange(36.0, dtype=np.float32).reshape(6, 6, 1)
    crop = tt.function(lambda im: tt.image.random_crop(im, [3, 3, 1]))
    starts = set()
    for _ in range(30):
        window = crop(image).numpy()
        top, left = divmod(int(window[0, 0, 0]), 6)
        np.testing.assert_array_equal(window, image[top : top + 3, left : left + 3])
        starts.add((top, left))
    assert len(starts) > 1 and all(0 <= top <= 3 and 0 <= left <= 3 for top, left in starts)
    assert tt.image.random_crop(tt.ones((2, 6, 6, 3)), size=[2, 4, 4, 3]).shape == (2, 4, 4, 3)


def test_errors():
    with pytest.raises(ValueError, match="size must give one size"):
        tt.function(lambda x, o: tt.slice(x, o, [2, -1, 1]))(X, tt.constant([0, 1, 3]))
    with pytest.raises(ValueError, match="must fit"):
        tt.image.random_crop(tt.ones((2, 3)), [3, 3])
    # a window at a start known only when the function runs (TensorFlow's strided slice)
    window = tt.function(lambda x, o: x[:, o[0] : o[0] + 2])(X, tt.constant([1, 2]))
    np.testing.assert_array_equal(window.numpy(), X[:, 1:3])
    with pytest.raises(tt.errors.InvalidArgumentError):  # (past the end: gather's error)
        tt.function(lambda x, o: x[:, o[0] : o[0] + 2])(X, tt.constant([3, 0]))


@pytest.mark.parametrize("backend", ["interpreter", "c"])
def test_indexing_by_tensors_known_when_the_function_runs(backend):
    """TF 2.21: x[i : i + 2], x[:, i - 1 : i + 1], x[i, i + 1] and x[..., i] with i a tensor
    argument, values and gradients as numpy's indexing (tracer raised "symbolic"); a window
    in a loop over tt.range compiles; x[::s] and a window that may pass the end (x[i:i+10])
    run as Python, with TensorFlow's values."""
    y = np.arange(24, dtype=np.float64).reshape(4, 6)

    def picks(x, i):
        with tt.GradientTape() as tape:
            tape.watch(x)
            parts = [x[i : i + 2], x[:, i - 1 : i + 1], x[i, i + 1], x[..., i]]
            total = tt.add_n([tt.reduce_sum(p * (k + 1.0)) for k, p in enumerate(parts)])
        return parts, tape.gradient(total, x)

    (rows, columns, element, last), gradient = tt.function(picks, backend=backend)(
        tt.constant(y), tt.constant(1)
    )
    np.testing.assert_array_equal(rows.numpy(), y[1:3])
    np.testing.assert_array_equal(columns.numpy(), y[:, 0:2])
    assert float(element) == y[1, 2]
    np.testing.assert_array_equal(last.numpy(), y[..., 1])
    expected = np.zeros_like(y)
    expected[1:3] += 1.0
    expected[:, 0:2] += 2.0
    expected[1, 2] += 3.0
    expected[:, 1] += 4.0
    np.testing.assert_array_equal(gradient.numpy(), expected)

    @tt.function(backend=backend)
    def windows(x, n):
        total = tt.zeros([6], tt.float64)
        for i in tt.range(n):
            total += tt.reduce_sum(x[i : i + 2], axis=0)
        return total

    np.testing.assert_array_equal(
        windows(tt.constant(y), tt.constant(3)).numpy(),
        y[0:2].sum(0) + y[1:3].sum(0) + y[2:4].sum(0),
    )
    strided = tt.function(lambda x, s: x[::s], backend=backend)
    np.testing.assert_array_equal(strided(tt.constant(y[0]), tt.constant(2)).numpy(), y[0, ::2])
    tail = tt.function(lambda x, i: x[i : i + 10], backend=backend)
    np.testing.assert_array_equal(tail(tt.constant(y[0]), tt.constant(4)).numpy(), y[0, 4:])


@pytest.mark.parametrize("backend", ["interpreter", "c"])
def test_a_negative_tensor_index_counts_from_the_end(backend):
    """TF 2.21: x[i] with i a tensor argument of -1 and -4 gives rows 3 and 0 of a 4-row x
    ([9. 10. 11.] and [0. 1. 2.]); -5 and 4 are InvalidArgumentError; the gradient is the
    row's place in zeros (tracer raised gather's range error for any negative i)."""
    y = np.arange(12.0).reshape(4, 3)

    def row(x, i):
        with tt.GradientTape() as tape:
            tape.watch(x)
            picked = x[i]
            total = tt.reduce_sum(picked * 2.0)
        return picked, tt.convert_to_tensor(tape.gradient(total, x))

    traced = tt.function(row, backend=backend)
    for i, k in ((-1, 3), (-4, 0), (2, 2)):
        picked, gradient = traced(tt.constant(y), tt.constant(i))
        np.testing.assert_array_equal(picked.numpy(), y[k])
        expected = np.zeros_like(y)
        expected[k] = 2.0
        np.testing.assert_array_equal(gradient.numpy(), expected)
    for outside in (-5, 4):
        with pytest.raises(tt.errors.InvalidArgumentError):
            traced(tt.constant(y), tt.constant(outside))
