"""TensorFlow's framework functions (tracer/framework.py): init_scope, executing_eagerly,
inside_function, is_tensor, rank, get_static_value, ensure_shape, against what TensorFlow
documents for each."""

import numpy as np
import pytest

import tracer as tt


def test_init_scope_runs_its_block_outside_the_trace_and_the_tape():
    made, seen = [], []

    @tt.function
    def scaled(x):
        seen.append((tt.executing_eagerly(), tt.inside_function()))
        with tt.init_scope():
            seen.append((tt.executing_eagerly(), tt.inside_function()))
            if not made:  # a variable made once, eagerly, as TF's guides make them
                made.append(tt.Variable(tt.ones([2]) * 3.0))
        return x * made[0]

    np.testing.assert_allclose(scaled(tt.constant([1.0, 2.0])).numpy(), [3.0, 6.0])
    assert seen == [(False, True), (True, False)]
    assert tt.executing_eagerly() and not tt.inside_function()
    x = tt.constant(2.0)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        with tt.init_scope():
            hidden = x * x  # not recorded: the block is outside the tape
        y = x * x
    assert tape.gradient(hidden, x) is None and float(tape.gradient(y, x)) == 4.0


def test_is_tensor_rank_and_static_values():
    assert tt.is_tensor(tt.constant(1.0)) and tt.is_tensor(tt.Variable(1.0))
    assert not tt.is_tensor(np.ones(2)) and not tt.is_tensor(3.0)
    rank = tt.rank(np.ones((2, 3, 4)))
    assert rank.dtype == tt.int32 and int(rank) == 3
    np.testing.assert_array_equal(tt.get_static_value(tt.constant([1, 2])), [1, 2])
    found = []

    @tt.function
    def f(x):
        found.append((tt.get_static_value(x), tt.get_static_value(tt.constant(5.0))))
        return x

    f(tt.constant(1.0))
    assert found[0][0] is None and float(found[0][1]) == 5.0  # unknown until run; a constant


def test_ensure_shape_checks_and_names_both_shapes():
    x = tt.constant(np.ones((2, 3)))
    assert tt.ensure_shape(x, [None, 3]) is not None
    with pytest.raises(ValueError, match=r"\(2, 3\) is not compatible with \[2, 4\]"):
        tt.ensure_shape(x, [2, 4])
    with pytest.raises(ValueError, match="not compatible"):
        tt.ensure_shape(x, [None])


def test_tf_dtypes_has_cast_beside_the_dtypes():
    cast = tt.dtypes.cast(tt.constant([1.7, -2.2]), tt.dtypes.int32)
    assert cast.dtype == tt.int32 and cast.numpy().tolist() == [1, -2]  # toward zero, as TF
    assert tt.dtypes.float64 is tt.float64 and tt.dtypes.as_dtype("float32") is tt.float32
