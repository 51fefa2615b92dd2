"""tt.experimental.dispatch_for_*: a user's function runs in place of tracer's API where the
arguments are extension types, tracer's own op where they are tensors; values against
numpy's, and the same in a compiled function."""

import numpy as np
import pytest

import tracer as tt


class Masked(tt.experimental.ExtensionType):
    values: tt.Tensor
    mask: tt.Tensor


def _as_masked(x):
    return x if isinstance(x, Masked) else Masked(x, tt.ones_like(x, tt.bool))


def test_dispatch_for_api_runs_for_extension_types_only():
    @tt.experimental.dispatch_for_api(tt.stack)
    def masked_stack(values: list[Masked | tt.Tensor], axis=0):
        values = [_as_masked(v) for v in values]
        return Masked(
            tt.stack([v.values for v in values], axis), tt.stack([v.mask for v in values], axis)
        )

    try:
        x = Masked([1, 2, 3], [True, True, False])
        stacked = tt.stack([x, tt.constant([4, 5, 6]), x])
        assert isinstance(stacked, Masked)
        np.testing.assert_array_equal(stacked.values.numpy(), [[1, 2, 3], [4, 5, 6], [1, 2, 3]])
        np.testing.assert_array_equal(stacked.mask.numpy()[:, 2], [False, True, False])
        plain = tt.stack([tt.constant([1]), tt.constant([2])])  # tensors: tracer's own stack
        assert isinstance(plain, tt.Tensor) and plain.numpy().tolist() == [[1], [2]]
        compiled = tt.function(lambda a: tt.stack([a, a], 1))(x)
        np.testing.assert_array_equal(compiled.values.numpy(), [[1, 1], [2, 2], [3, 3]])
    finally:
        tt.experimental.unregister_dispatch_for(masked_stack)
    with pytest.raises(ValueError, match="was not registered"):
        tt.experimental.unregister_dispatch_for(masked_stack)
    with pytest.raises(TypeError):
        tt.stack([Masked([1], [True])])  # no target now: tracer's stack refuses it


def test_elementwise_dispatch():
    @tt.experimental.dispatch_for_unary_elementwise_apis(Masked)
    def unary(api_func, x):
        return Masked(api_func(x.values), x.mask)

    @tt.experimental.dispatch_for_binary_elementwise_apis(Masked, Masked)
    def binary(api_func, x, y):
        return Masked(api_func(x.values, y.values), x.mask & y.mask)

    try:
        x = Masked([1, -2, -3], [True, False, True])
        assert tt.abs(x).values.numpy().tolist() == [1, 2, 3]
        ones = tt.ones_like(x, dtype=tt.float32)
        assert ones.values.dtype == tt.float32 and ones.mask.numpy().tolist() == [1, 0, 1]
        y = Masked([[4], [5]], [[True], [False]])
        total = tt.math.add(x, y)
        np.testing.assert_array_equal(total.values.numpy(), np.add([1, -2, -3], [[4], [5]]))
        np.testing.assert_array_equal(total.mask.numpy(), [[True, False, True], [False] * 3])
        assert tt.abs(tt.constant([-1.5])).numpy().tolist() == [1.5]
    finally:
        tt.experimental.unregister_dispatch_for(unary)
        tt.experimental.unregister_dispatch_for(binary)
