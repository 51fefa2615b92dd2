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
    with pytest.raises(TypeError, match="known only when the traced function runs"):
        tt.function(lambda x, o: x[:, o[0] : o[0] + 2])(X, tt.constant([1, 2]))
