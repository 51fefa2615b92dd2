"""tt.debugging's assertions: what TensorFlow 2.21 raised for the same checks (the error
classes, check_numerics' text), eagerly, where values are known while tracing, and in
compiled and interpreted functions when they run, inside loops too."""

import numpy as np
import pytest

import tracer as tt

BACKENDS = ["interpreter", "c"]
debugging = tt.debugging


def test_eager_checks_raise_invalid_argument_error_naming_the_condition_and_values():
    """TF 2.21: InvalidArgumentError for each failed check, its message first; nothing (None)
    for one that holds; check_numerics gives the tensor back, or "bad : Tensor had NaN
    values"; assert_rank a ValueError ("Tensor must have rank 2"), assert_type a TypeError."""
    failing = [
        lambda: debugging.assert_equal([1, 2], [1, 3], message="nope"),
        lambda: debugging.assert_none_equal([1, 2], [3, 2]),
        lambda: debugging.assert_positive([1.0, -2.0]),
        lambda: debugging.assert_non_negative([-1]),
        lambda: debugging.assert_negative([0.0]),
        lambda: debugging.assert_non_positive([1]),
        lambda: debugging.assert_less([1.0, 5.0], 3.0),
        lambda: debugging.assert_less_equal([4], 3),
        lambda: debugging.assert_greater([1.0], [1.0]),
        lambda: debugging.assert_greater_equal([0], 1),
        lambda: debugging.assert_near([1.0], [1.0001]),
        lambda: debugging.Assert(tt.constant(False), [tt.constant([1, 2]), "text"]),
        lambda: debugging.check_numerics(tt.constant([1.0, np.nan]), "bad"),
        lambda: debugging.assert_all_finite(tt.constant([np.inf]), "inf!"),
    ]
    for check in failing:
        with pytest.raises(tt.errors.InvalidArgumentError):
            check()
    with pytest.raises(tt.errors.InvalidArgumentError, match=r"^nope\nCondition x == y"):
        failing[0]()
    with pytest.raises(tt.errors.InvalidArgumentError, match="bad : Tensor had NaN values"):
        failing[12]()
    with pytest.raises(tt.errors.InvalidArgumentError, match="inf! : Tensor had Inf values"):
        failing[13]()
    assert debugging.assert_equal([1, 2], [1, 2]) is None
    assert debugging.assert_near([1.0], [1.0 + 1e-7]) is None
    x = tt.constant([1.0, 2.0])
    assert debugging.check_numerics(x, "fine") is x
    with pytest.raises(ValueError, match="Tensor must have rank 2"):
        debugging.assert_rank(tt.ones(3), 2)
    debugging.assert_rank(tt.ones(3), 1)
    with pytest.raises(TypeError):
        debugging.assert_type(tt.ones(3), tt.int32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_checks_in_a_function_run_at_each_call_where_they_are(backend):
    """TF 2.21: a check in a tf.function raises InvalidArgumentError when a call's values
    fail it (message first), also inside a loop, and costs nothing where they pass; the
    error names the user's line. One on values known while tracing raises then."""

    def step(x, y):
        debugging.assert_positive(x, message="x must be positive")
        for i in tt.range(3):
            debugging.assert_less(tt.cast(i, tt.float32), x[0], message="in the loop")
        debugging.assert_near(x, y, atol=1e-3)
        return debugging.check_numerics(tt.math.log(x), "log")

    compiled = tt.function(step, backend=backend)
    np.testing.assert_allclose(compiled(tt.constant([5.0]), tt.constant([5.0001])), np.log(5.0))
    cases = [
        ([-1.0], [-1.0], "x must be positive"),
        ([1.0], [1.0], "in the loop"),
        ([5.0], [5.1], "not equal to tolerance"),
    ]
    for x, y, message in cases:
        with pytest.raises(tt.errors.InvalidArgumentError, match=message) as raised:
            compiled(tt.constant(x), tt.constant(y))
        assert "test_assertions.py" in str(raised.value)
    with pytest.raises(tt.errors.InvalidArgumentError, match="known"):
        tt.function(lambda: debugging.assert_equal(1, 2, message="known"), backend=backend)()
