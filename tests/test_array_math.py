"""codegen/array_math.py: C's erf over whole arrays, the eager kernel's way for arrays of 64
elements and more, against math.erf element by element (glibc's vector erf is within 4 ulp),
special values, shapes and strides included; and erf's eager gradient at that size against
its analytic value."""

import math

import numpy as np
import pytest

import tracer as tt
from codegen import array_math
from tracer.ops.math_ops import ERF_OVER_ARRAYS_FROM, _erf_kernel

rng = np.random.default_rng(20261130)
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-300, -1e-30, 6.0, -6.5, 27.0]


def _reference(x):
    return np.array([math.erf(v) for v in x.astype(np.float64).ravel()]).reshape(x.shape)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-15), (np.float32, 1e-6)])
def test_erf_over_an_array_is_maths_erf_within_a_few_ulp(dtype, rtol):
    x = np.concatenate([rng.standard_normal(3000) * 3, SPECIAL]).astype(dtype)
    result = array_math.apply("erf", x)
    assert result is not None and result.dtype == dtype and result.shape == x.shape
    expected = _reference(x)
    np.testing.assert_allclose(result, expected, rtol=rtol, atol=np.finfo(dtype).tiny)
    assert np.signbit(result[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()


def test_the_kernel_takes_any_layout_and_float16():
    x = rng.standard_normal((40, 30))[:, ::3].T  # 10 x 40, not contiguous
    assert x.size >= ERF_OVER_ARRAYS_FROM
    np.testing.assert_allclose(_erf_kernel(x), _reference(x), rtol=1e-15)
    half = x.astype(np.float16)
    result = _erf_kernel(half)
    assert result.dtype == np.float16
    np.testing.assert_array_equal(result, _reference(half).astype(np.float16))


def test_other_functions_and_types_are_refused_by_name():
    with pytest.raises(ValueError, match="erf"):
        array_math.apply("lgamma", np.zeros(3))
    with pytest.raises(ValueError, match="float32 or float64"):
        array_math.apply("erf", np.zeros(3, np.int32))


def test_erfs_eager_gradient_over_a_large_array_is_its_analytic_value():
    x = tt.constant(rng.standard_normal(4096))
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(tt.math.erf(x))
    expected = 2 / np.sqrt(np.pi) * np.exp(-(x.numpy() ** 2))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-14)
    np.testing.assert_allclose(y.numpy(), _reference(x.numpy()).sum(), rtol=1e-13)
