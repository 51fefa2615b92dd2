"""Large arrays that compiled kernels write and read start at a cache line
(runtime/aligned.py): a function's outputs, its workspace, variables; small ones are
numpy's own."""

import numpy as np
import pytest

import tracer as tt
from runtime import aligned


def _address(array):
    return array.__array_interface__["data"][0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.complex128])
@pytest.mark.parametrize("shape", [(256, 256), (3, 50_000), (70_001,)])
def test_a_large_array_starts_at_a_cache_line(dtype, shape):
    for _ in range(8):  # whatever the heap's layout
        array = aligned.empty(shape, dtype)
        assert _address(array) % aligned.ALIGNMENT == 0
        assert array.shape == shape and array.dtype == dtype and array.flags.c_contiguous
        assert array.flags.writeable
        array[...] = 7  # all of it is the array's own
        assert np.all(array == 7)


def test_small_arrays_and_arrays_of_objects_are_numpys_own():
    small = aligned.empty((4, 4), np.float64)
    assert small.base is None and small.shape == (4, 4)
    objects = aligned.empty((aligned.ALIGNED_FROM,), object)
    assert objects.dtype == object and objects.base is None


def test_a_copy_keeps_the_values_and_takes_the_dtype_asked_for():
    value = np.arange(300 * 301, dtype=np.float64).reshape(300, 301)[:, ::-1]
    copied = aligned.copy(value)
    assert _address(copied) % aligned.ALIGNMENT == 0 and copied.flags.c_contiguous
    np.testing.assert_array_equal(copied, value)
    as_float32 = aligned.copy(value, np.float32)
    assert as_float32.dtype == np.float32
    np.testing.assert_array_equal(as_float32, value.astype(np.float32))


def test_a_compiled_functions_large_output_and_a_variables_storage_are_aligned():
    v = tt.Variable(np.linspace(0.0, 1.0, 256 * 256).reshape(256, 256))
    assert _address(v.numpy()) % aligned.ALIGNMENT == 0

    @tt.function
    def step(x):
        v.assign(v * 0.5 + x)
        return tt.tanh(v) * 2.0

    x = tt.constant(np.full((256, 256), 0.25))
    expected_v = v.numpy() * 0.5 + 0.25
    for _ in range(3):
        out = step(x)
        assert _address(out.numpy()) % aligned.ALIGNMENT == 0
        np.testing.assert_allclose(out.numpy(), np.tanh(expected_v) * 2.0, rtol=1e-15)
        np.testing.assert_allclose(v.numpy(), expected_v, rtol=1e-15)
        expected_v = expected_v * 0.5 + 0.25
    v.assign(np.ones((256, 256)))  # an eager assignment's new storage too
    assert _address(v.numpy()) % aligned.ALIGNMENT == 0


@pytest.mark.parametrize("nbytes", [64, aligned.ALIGNED_FROM, 5 << 20])
def test_a_workspace_is_writable_memory_of_its_size(nbytes):
    workspace = aligned.workspace(nbytes)
    assert workspace.dtype == np.uint8 and workspace.shape == (nbytes,)
    assert workspace.flags.writeable and workspace.flags.c_contiguous
    if nbytes >= aligned.ALIGNED_FROM:  # a mapping of its own: whole pages, fresh zeros
        assert _address(workspace) % 4096 == 0 and not workspace.any()
    workspace[::4096] = 3
    assert np.count_nonzero(workspace == 3) == len(range(0, nbytes, 4096))


def test_a_workspace_larger_than_the_memory_is_a_memory_error():
    with pytest.raises(MemoryError, match="workspace of 1125899906842624 bytes"):
        aligned.workspace(1 << 50)
