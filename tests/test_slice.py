"""tt.slice: TensorFlow's tf.slice, eagerly and compiled, its gradient, and its errors."""

import numpy as np
import pytest

import tracer as tt


@pytest.mark.parametrize("backend", [None, "interpreter", "c"])
def test_slice_takes_the_window_and_sends_its_gradient_back_into_it(backend):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5, 3))
    weights = rng.standard_normal((2, 4, 3))

    def window_and_gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            window = tt.slice(x, tt.constant([1, 1, 0]), [2, -1, 3])
            loss = tt.reduce_sum(window * weights)
        return window, tape.gradient(loss, x)

    run = (
        window_and_gradient
        if backend is None
        else tt.function(window_and_gradient, backend=backend)
    )
    window, grad = run(tt.constant(x))
    np.testing.assert_array_equal(window.numpy(), x[1:3, 1:, 0:3])
    want = np.zeros_like(x)
    want[1:3, 1:, :] = weights
    np.testing.assert_array_equal(grad.numpy(), want)


def test_slice_refuses_a_window_outside_the_tensor_and_takes_begins_known_when_it_runs():
    x = tt.reshape(tt.range(12), (3, 4))
    with pytest.raises(tt.errors.InvalidArgumentError, match=r"axis 0 \(of length 3\), begin 2"):
        tt.slice(x, [2, 0], [2, 1])
    with pytest.raises(tt.errors.InvalidArgumentError, match="one value for each of the input's 2"):
        tt.slice(x, [0], [2])

    @tt.function(input_signature=[tt.TensorSpec([2], tt.int32)])
    def moving(begin):
        return tt.slice(x, begin, [1, 1])

    # a begin computed while the function runs is a window of the sizes known when tracing
    np.testing.assert_array_equal(moving(tt.constant([2, 1])).numpy(), [[9]])
