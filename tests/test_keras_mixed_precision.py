"""`tt.keras.mixed_precision`: Keras 3's dtype policies against what TensorFlow 2.21 printed
for the same calls; mixed precision itself is refused by name."""

import numpy as np
import pytest

import tracer as tt

keras = tt.keras
mixed_precision = keras.mixed_precision


@pytest.fixture(autouse=True)
def _float32_afterwards():
    yield
    mixed_precision.set_global_policy("float32")


def test_policies_print_and_name_their_dtypes():
    """TensorFlow 2.21 printed <DTypePolicy "float32"> float32 float32 float32 for a
    float32 policy's str, name, compute_dtype and variable_dtype; <DTypePolicy
    "mixed_float16"> float16 float32 for mixed_float16's; the global policy and a Dense
    layer's dtype_policy <DTypePolicy "float32">; and Keras's ValueError for 'foo'."""
    policy = mixed_precision.Policy("float32")
    assert (str(policy), policy.name, policy.compute_dtype, policy.variable_dtype) == (
        '<DTypePolicy "float32">',
        "float32",
        "float32",
        "float32",
    )
    mixed = mixed_precision.Policy("mixed_float16")
    assert (repr(mixed), mixed.compute_dtype, mixed.variable_dtype) == (
        '<DTypePolicy "mixed_float16">',
        "float16",
        "float32",
    )
    assert repr(mixed_precision.global_policy()) == '<DTypePolicy "float32">'
    dense = keras.layers.Dense(2)
    assert repr(dense.dtype_policy) == '<DTypePolicy "float32">'
    assert (dense.compute_dtype, dense.variable_dtype) == ("float32", "float32")
    with pytest.raises(ValueError, match="^Cannot convert 'foo' to a mixed precision"):
        mixed_precision.Policy("foo")
    with pytest.raises(ValueError, match="Invalid `policy` argument"):
        mixed_precision.set_global_policy(None)


def test_a_float_global_policy_is_the_dtype_of_new_layers():
    """TensorFlow 2.21: after set_global_policy("float64") a new Dense layer's policy is
    <DTypePolicy "float64">, its kernel and its output float64; a layer's own dtype wins."""
    mixed_precision.set_global_policy("float64")
    dense = keras.layers.Dense(2, kernel_initializer="ones")
    out = dense(np.ones((1, 3), np.float32))
    assert repr(dense.dtype_policy) == '<DTypePolicy "float64">'
    assert dense.kernel.dtype == tt.float64 and out.dtype == tt.float64
    np.testing.assert_array_equal(out.numpy(), [[3.0, 3.0]])
    assert keras.layers.Dense(2, dtype="float32").compute_dtype == "float32"
    mixed_precision.set_global_policy("float32")
    assert keras.layers.Dense(2).dtype == tt.float32


def test_mixed_precision_is_refused_by_name():
    policy = mixed_precision.Policy("mixed_float16")
    with pytest.raises(NotImplementedError, match="does not support mixed precision"):
        mixed_precision.set_global_policy(policy)
    with pytest.raises(NotImplementedError, match="'mixed_bfloat16'"):
        mixed_precision.set_global_policy("mixed_bfloat16")
    assert mixed_precision.global_policy().name == "float32"  # unchanged
    with pytest.raises(NotImplementedError, match="mixed precision"):
        keras.layers.Dense(2, dtype="mixed_float16")
    with pytest.raises(NotImplementedError, match="LossScaleOptimizer"):
        mixed_precision.LossScaleOptimizer(keras.optimizers.RMSprop())


def test_set_floatx_is_the_dtype_of_layers_inputs_and_metrics_made_after_it():
    """TensorFlow 2.21 (Keras 3), the neural ODE held-out program's first line: after
    `set_floatx("float64")` a Dense layer's kernel and output, an Input and a Mean metric are
    float64 (float64 inputs given, no cast); Keras makes its global policy from floatx when
    a layer first asks for it and keeps it, so `set_floatx("float32")` afterwards still
    gives float64 layers; "float8" is Keras's ValueError."""
    saved_policy, saved_floatx = mixed_precision._global["policy"], keras.backend.floatx()
    try:
        mixed_precision._global["policy"] = None  # as in a new process
        keras.backend.set_floatx("float64")
        assert keras.backend.floatx() == "float64"
        dense = keras.layers.Dense(2, kernel_initializer="ones")
        out = dense(np.full((1, 3), 0.1))
        assert dense.kernel.dtype == tt.float64 and out.dtype == tt.float64
        np.testing.assert_array_equal(out.numpy(), [[0.1 + 0.1 + 0.1] * 2])  # not 0.3000000119
        assert keras.Input((3,)).dtype == "float64"
        assert keras.metrics.Mean().dtype == tt.float64
        keras.backend.set_floatx("float32")
        assert keras.layers.Dense(2).dtype == tt.float64
        with pytest.raises(ValueError, match="Unknown `floatx` value: float8"):
            keras.backend.set_floatx("float8")
    finally:
        mixed_precision._global["policy"] = saved_policy
        keras.backend.set_floatx(saved_floatx)
