"""`tt.debugging`: TensorFlow's assertions on values (tracer/assertions.py) and the check
that finds the first op to make a NaN or an Inf (tracer/numerics_check.py)."""

from tracer.assertions import (  # noqa: F401
    Assert,
    assert_all_finite,
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_less,
    assert_less_equal,
    assert_near,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_rank,
    assert_rank_at_least,
    assert_scalar,
    assert_type,
    check_numerics,
)
from tracer.numerics_check import (  # noqa: F401
    NumericsError,
    disable_check_numerics,
    enable_check_numerics,
)
