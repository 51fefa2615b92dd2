"""What running TensorFlow's basics, variable and tensor_slicing guides on tracer found
missing or different: device listing and placement, eager shape errors caught as
InvalidArgumentError, a variable's repr, tensor_scatter_nd_min and _max (their values as
TensorFlow's guide prints them)."""

import numpy as np
import pytest

import tracer as tt


def test_devices_are_the_cpu():
    assert [d.device_type for d in tt.config.list_physical_devices()] == ["CPU"]
    assert tt.config.list_physical_devices("GPU") == []
    assert tt.config.list_logical_devices("cpu")[0].name == "/device:CPU:0"
    with tt.device("GPU:0"):  # soft placement: it runs on the CPU
        np.testing.assert_array_equal((tt.constant([1.0, 2.0]) * 2).numpy(), [2.0, 4.0])
    with pytest.raises(TypeError, match="device name"):
        with tt.device(0):
            pass


def test_the_cpu_splits_into_logical_devices_as_tensorflows():
    """TF 2.21's reprs and errors (the random_numbers guide's three virtual CPUs)."""
    cpu = tt.config.list_physical_devices("CPU")[0]
    config = tt.config.experimental.VirtualDeviceConfiguration()
    assert repr(config) == (
        "LogicalDeviceConfiguration(memory_limit=None, experimental_priority=None, "
        "experimental_device_ordinal=None)"
    )
    assert tt.config.get_logical_device_configuration(cpu) is None
    with pytest.raises(ValueError, match="memory limit on CPU virtual devices"):
        tt.config.set_logical_device_configuration(
            cpu, [tt.config.LogicalDeviceConfiguration(memory_limit=10)]
        )
    with pytest.raises(ValueError, match="^Unrecognized device: 'x'$"):
        tt.config.set_logical_device_configuration("x", [config])
    try:
        tt.config.experimental.set_virtual_device_configuration(cpu, [config] * 3)
        names = [d.name for d in tt.config.list_logical_devices()]
        assert names == ["/device:CPU:0", "/device:CPU:1", "/device:CPU:2"]
        assert tt.config.get_logical_device_configuration(cpu) == [config] * 3
        with tt.device("cpu:2"):
            assert (tt.constant([1.0]) * 2).numpy().tolist() == [2.0]
    finally:
        tt.config.set_logical_device_configuration(cpu, [])
    assert len(tt.config.list_logical_devices()) == 1


def test_an_eager_shape_error_is_an_invalid_argument_error_and_a_value_error():
    with pytest.raises(tt.errors.InvalidArgumentError, match="inner dimensions differ"):
        tt.matmul(tt.ones((1, 4)), tt.ones((3, 3)))
    with pytest.raises(ValueError, match="inner dimensions differ"):
        tt.matmul(tt.ones((1, 4)), tt.ones((3, 3)))
    with pytest.raises(ValueError) as traced:
        tt.function(lambda a, b: tt.matmul(a, b))(tt.ones((1, 4)), tt.ones((3, 3)))
    assert not isinstance(traced.value, tt.errors.InvalidArgumentError)  # TF's graph error


def test_a_variable_of_several_lines_starts_its_value_on_a_line_of_its_own():
    assert repr(tt.Variable([[1.0, 2.0], [3.0, 4.0]])).endswith(
        "numpy=\narray([[1., 2.],\n       [3., 4.]], dtype=float32)>"
    )
    assert repr(tt.Variable([1.0, 2.0])).endswith("numpy=array([1., 2.], dtype=float32)>")


def test_tensor_scatter_nd_min_and_max_as_the_guide_prints_them():
    t14 = tt.constant([[-2, -7, 0], [-9, 0, 1], [0, -3, -8]])
    indices = [[0, 2], [1, 1], [2, 0]]
    np.testing.assert_array_equal(
        tt.tensor_scatter_nd_min(t14, indices, [-6, -5, -4]).numpy(),
        [[-2, -7, -6], [-9, -5, 1], [-4, -3, -8]],
    )
    np.testing.assert_array_equal(
        tt.tensor_scatter_nd_max(t14, indices, [6, 5, 4]).numpy(),
        [[-2, -7, 6], [-9, 5, 1], [4, -3, -8]],
    )


def test_tensor_scatter_nd_extremes_of_repeated_coordinates_slices_and_infinities():
    base = np.array([[1.0, np.inf], [3.0, 4.0], [5.0, -np.inf]], np.float32)
    updates = np.array([[0.0, 9.0], [2.0, -1.0], [7.0, 7.0]], np.float32)
    expected_min, expected_max = base.copy(), base.copy()
    for row, update in zip([0, 0, 2], updates):
        expected_min[row] = np.minimum(expected_min[row], update)
        expected_max[row] = np.maximum(expected_max[row], update)
    indices = [[0], [0], [2]]

    def run_min(b, u):
        return tt.tensor_scatter_nd_min(b, indices, u)

    def run_max(b, u):
        return tt.tensor_scatter_nd_max(b, indices, u)

    for backend in ("c", "interpreter"):
        for run, expected in ((run_min, expected_min), (run_max, expected_max)):
            np.testing.assert_array_equal(run(base, updates).numpy(), expected)
            compiled = tt.function(run, backend=backend)
            np.testing.assert_array_equal(compiled(base, updates).numpy(), expected)
    with pytest.raises(tt.errors.InvalidArgumentError):
        tt.tensor_scatter_nd_min(tt.constant([1, 2]), [[5]], [0])


def test_tensor_scatter_nd_min_gradient_goes_to_the_winner():
    tensor = tt.constant([4.0, 1.0, 3.0])
    updates = tt.constant([2.0, 5.0])
    with tt.GradientTape() as tape:
        tape.watch([tensor, updates])
        y = tt.reduce_sum(
            tt.tensor_scatter_nd_min(tensor, [[0], [1]], updates) * [1.0, 10.0, 100.0]
        )
    grad_tensor, grad_updates = tape.gradient(y, [tensor, updates])
    np.testing.assert_array_equal(grad_tensor.numpy(), [0.0, 10.0, 100.0])
    np.testing.assert_array_equal(grad_updates.numpy(), [1.0, 0.0])
