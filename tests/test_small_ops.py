"""linspace, eye and norm (the ops the advanced-autodiff examples use), against numpy, with
the gradient of norm against its analytic value; tt.keras's names for the layers."""

import numpy as np
import pytest

import tracer as tt


def test_linspace_and_eye_match_numpy():
    np.testing.assert_allclose(
        tt.linspace(-10.0, 10.0, 201).numpy(), np.linspace(-10, 10, 201), atol=2e-6
    )
    assert tt.linspace(0.0, 1.0, 5).dtype == tt.float32
    np.testing.assert_array_equal(tt.eye(3).numpy(), np.eye(3))
    np.testing.assert_array_equal(
        tt.eye(2, 3, batch_shape=[4]).numpy(), np.broadcast_to(np.eye(2, 3), (4, 2, 3))
    )

    @tt.function
    def spaced(a, b):
        return tt.linspace(a, b, 4)

    np.testing.assert_allclose(spaced(tt.constant(1.0), tt.constant(4.0)).numpy(), [1, 2, 3, 4])


# TensorFlow 2.21's tf.linspace of tensors that broadcast, along `axis` (its printed values:
# float32 and float64 bits, which tracer's equal)
TF_LINSPACE = [
    (([0.0, 1.0], [2.0, 3.0], 4, 0), np.float32,
     [[0.0, 1.0], [0.6666666865348816, 1.6666667461395264], [1.3333333730697632, 2.3333334922790527], [2.0, 3.0]]),
    (([0.0, 1.0], [2.0, 3.0], 4, 1), np.float32,
     [[0.0, 0.6666666865348816, 1.3333333730697632, 2.0], [1.0, 1.6666667461395264, 2.3333334922790527, 3.0]]),
    (([0.1, -1.0], 5.3, 7, -1), np.float32,
     [[0.10000000149011612, 0.9666667580604553, 1.8333334922790527, 2.700000047683716, 3.566666841506958, 4.433333396911621, 5.300000190734863],
      [-1.0, 0.05000007152557373, 1.1000001430511475, 2.1500000953674316, 3.200000286102295, 4.250000476837158, 5.300000190734863]]),
    ((0.1, 0.7, 7, 0), np.float32,
     [0.10000000149011612, 0.19999998807907104, 0.29999998211860657, 0.3999999761581421, 0.4999999701976776, 0.5999999642372131, 0.699999988079071]),
    (([[1.0, 2.0], [3.0, 4.0]], [[2.0, 4.0], [6.0, 8.0]], 5, 1), np.float64,
     [[[1.0, 2.0], [1.25, 2.5], [1.5, 3.0], [1.75, 3.5], [2.0, 4.0]], [[3.0, 4.0], [3.75, 5.0], [4.5, 6.0], [5.25, 7.0], [6.0, 8.0]]]),
]  # fmt: skip


@pytest.mark.parametrize("case", range(len(TF_LINSPACE)))
def test_linspace_of_tensors_along_an_axis_is_tensorflows(case):
    (start, stop, num, axis), dtype, want = TF_LINSPACE[case]
    start, stop = tt.constant(np.array(start, dtype)), tt.constant(np.array(stop, dtype))
    eager = tt.linspace(start, stop, num, axis=axis)
    compiled = tt.function(lambda a, b: tt.linspace(a, b, num, axis=axis))(start, stop)
    for got in (eager, compiled):
        np.testing.assert_array_equal(got.numpy(), np.array(want, dtype))


@pytest.mark.parametrize("ord_", ["euclidean", 1, np.inf])
def test_norm_values_and_gradient(ord_):
    x = tt.constant([[3.0, -4.0], [1.0, 2.0]], tt.float64)
    with tt.GradientTape() as tape:
        tape.watch(x)
        n = tt.norm(x, ord=ord_, axis=1)
    np.testing.assert_allclose(
        n.numpy(), np.linalg.norm(x.numpy(), ord=2 if ord_ == "euclidean" else ord_, axis=1)
    )
    g = tape.gradient(n, x).numpy()
    if ord_ == "euclidean":
        np.testing.assert_allclose(g, x.numpy() / n.numpy()[:, None])
    elif ord_ == 1:
        np.testing.assert_allclose(g, np.sign(x.numpy()))
    else:
        np.testing.assert_allclose(g, [[0.0, -1.0], [0.0, 1.0]])


def test_keras_layers_are_tracers_layers():
    layer = tt.keras.layers.Dense(3, activation=tt.nn.relu)
    layer.build([None, 2])
    assert layer.built and layer.kernel.shape == (2, 3)
    kernel = layer.kernel
    layer(tt.ones((1, 2)))
    assert layer.kernel is kernel  # built once
    assert tt.keras.Sequential is tt.layers.Sequential


@pytest.mark.parametrize(
    "value, shape",
    [
        (np.float32(2.5), (3, 4)),  # a scalar, copied
        (np.arange(3.0), (2, 3)),  # a row, copied
        (np.arange(4, dtype=np.int32).reshape(4, 1), (2, 4, 5)),  # a column, copied
        (np.arange(512, dtype=np.float32), (128, 512)),  # large: numpy's view
        (np.array([b"ab", b"c"], dtype=object), (3, 2)),  # strings
    ],
)
def test_broadcast_to_gives_numpys_values_small_results_copied(value, shape):
    got = tt.broadcast_to(tt.constant(value), shape).numpy()
    want = np.broadcast_to(value, shape)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    copied = np.prod(shape) < tt.ops.broadcast_ops.BROADCAST_COPIED_BELOW
    assert got.flags.writeable == copied  # a copy of its own, or the read-only view
