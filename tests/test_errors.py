"""Bad input gives a clear error: the right exception type, naming what was wrong and where.

Op errors name the user's line (`test_errors.py:NN`); the line expected is the one in this
file whose statement raised, taken from the traceback.
"""

import sys

import numpy as np
import pytest

import tracer as tt


def _line():
    """The caller's line number."""
    return sys._getframe(1).f_lineno


def raising_line(info):
    """`test_errors.py:NN` for the line of this file whose statement raised."""
    entry = info.traceback[0]
    assert entry.path.name == "test_errors.py"
    return f"test_errors.py:{entry.lineno + 1}"


def assert_message(info, *parts):
    message = str(info.value)
    for part in parts:
        assert part in message, f"{part!r} not in {message!r}"


# --- shapes that do not broadcast ---------------------------------------------------------


def test_broadcast_error_names_both_shapes_and_the_line():
    a = tt.ones((2, 3))
    b = tt.ones((4,))
    line = _line() + 2
    with pytest.raises(ValueError) as info:
        a + b
    assert_message(info, "(2, 3)", "(4,)", f"test_errors.py:{line}")


@pytest.mark.parametrize(
    "op",
    [tt.add, tt.subtract, tt.multiply, tt.divide, tt.maximum, tt.minimum, tt.pow, tt.less],
    ids=lambda f: f.__name__,
)
def test_broadcast_error_from_every_binary_op(op):
    a = tt.ones((3, 2))
    b = tt.ones((3,))
    with pytest.raises(ValueError) as info:
        op(a, b)
    assert_message(info, "(3, 2)", "(3,)", raising_line(info))


# NOTE: `==` and `!=` are left out: TensorFlow 2's Tensor.__eq__ gives False (not an error)
# for shapes that do not broadcast.
@pytest.mark.parametrize("symbol", ["+", "-", "*", "/", "//", "%", "**", "<", ">="])
def test_broadcast_error_from_operators(symbol):
    a = tt.ones((5, 2))
    b = tt.ones((5,))
    with pytest.raises(ValueError) as info:
        eval(f"a {symbol} b")
    assert_message(info, "(5, 2)", "(5,)")


def test_broadcast_error_inside_a_tape_names_the_line():
    x = tt.ones((2, 3))
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = x * 2.0
        with pytest.raises(ValueError) as info:
            y + tt.ones((2,))
    assert_message(info, "(2, 3)", "(2,)", raising_line(info))


def test_broadcast_error_with_a_variable():
    v = tt.Variable(np.zeros((4, 1, 3)))
    with pytest.raises(ValueError) as info:
        v * tt.ones((2, 2), dtype=tt.float64)
    assert_message(info, "(4, 1, 3)", "(2, 2)", raising_line(info))


def test_broadcast_error_from_where():
    with pytest.raises(ValueError) as info:
        tt.where(tt.constant([True, False, True]), tt.ones((3,)), tt.ones((2,)))
    assert_message(info, "(3,)", "(2,)", raising_line(info))


def test_broadcast_to_an_incompatible_shape():
    with pytest.raises(ValueError) as info:
        tt.broadcast_to(tt.ones((3,)), (2, 4))
    assert_message(info, "(3,)", "(2, 4)", raising_line(info))


def test_broadcast_error_in_a_helper_names_the_helper_line():
    def helper(a, b):
        return a - b  # the line the error names

    helper_line = helper.__code__.co_firstlineno + 1
    with pytest.raises(ValueError) as info:
        helper(tt.ones((2, 2)), tt.ones((3,)))
    assert_message(info, "(2, 2)", "(3,)", f"test_errors.py:{helper_line}")


# --- matmul -------------------------------------------------------------------------------


def test_matmul_inner_dimension_mismatch():
    a = tt.ones((2, 3))
    b = tt.ones((4, 5))
    with pytest.raises(ValueError) as info:
        a @ b
    assert_message(info, "(2, 3)", "(4, 5)", raising_line(info))


def test_matmul_function_inner_dimension_mismatch():
    with pytest.raises(ValueError) as info:
        tt.matmul(tt.ones((7, 2, 3)), tt.ones((7, 2, 3)))
    assert_message(info, "(7, 2, 3)", raising_line(info))


def test_matmul_transpose_flags_are_applied_before_checking():
    a, b = tt.ones((3, 2)), tt.ones((3, 4))
    assert tt.matmul(a, b, transpose_a=True).shape == (2, 4)
    with pytest.raises(ValueError) as info:
        tt.matmul(a, b)
    assert_message(info, "(3, 2)", "(3, 4)", raising_line(info))


def test_matmul_needs_rank_two():
    with pytest.raises(ValueError) as info:
        tt.matmul(tt.ones((3,)), tt.ones((3, 2)))
    assert_message(info, "(3,)", "(3, 2)", raising_line(info))


# --- dtypes -------------------------------------------------------------------------------


def test_mixed_dtypes_name_both_dtypes_and_the_line():
    a = tt.constant([1.0, 2.0])
    b = tt.constant([1.0, 2.0], dtype=tt.float64)
    with pytest.raises(TypeError) as info:
        a + b
    assert_message(info, "float32", "float64", raising_line(info))


@pytest.mark.parametrize(
    "first, second",
    [
        (tt.float32, tt.int32),
        (tt.int32, tt.int64),
        (tt.float64, tt.float16),
        (tt.complex64, tt.float32),
    ],
)
@pytest.mark.parametrize(
    "op",
    [tt.add, tt.subtract, tt.multiply, tt.divide, tt.maximum, tt.pow, tt.matmul, tt.equal],
    ids=lambda f: f.__name__,
)
def test_mixed_dtypes_in_ops(first, second, op):
    a = tt.ones((2, 2), dtype=first)
    b = tt.ones((2, 2), dtype=second)
    with pytest.raises(TypeError) as info:
        op(a, b)
    assert_message(info, first.name, second.name, raising_line(info))


def test_mixed_dtypes_with_a_variable():
    v = tt.Variable([1.0, 2.0])
    with pytest.raises(TypeError) as info:
        v * tt.constant([1, 2])
    assert_message(info, "float32", "int32", raising_line(info))


def test_mixed_dtypes_in_concat():
    with pytest.raises(TypeError) as info:
        tt.concat([tt.ones((2,)), tt.ones((2,), dtype=tt.float64)], axis=0)
    assert_message(info, "float32", "float64")


def test_python_float_with_an_int_tensor():
    # TensorFlow: "Cannot convert 2.5 to EagerTensor of dtype int32" (TypeError).
    with pytest.raises(TypeError) as info:
        tt.constant([1, 2]) * 2.5
    assert_message(info, "2.5", "int32")


# --- reshape ------------------------------------------------------------------------------


def test_reshape_to_an_incompatible_shape():
    with pytest.raises(ValueError) as info:
        tt.reshape(tt.ones((2, 3)), (4,))
    assert_message(info, "(2, 3)", "(4,)", raising_line(info))


def test_reshape_with_minus_one_that_does_not_divide():
    with pytest.raises(ValueError) as info:
        tt.reshape(tt.ones((2, 3)), (4, -1))
    assert_message(info, "(2, 3)", "(4, -1)")


def test_reshape_with_two_minus_ones():
    with pytest.raises(ValueError):
        tt.reshape(tt.ones((2, 3)), (-1, -1))


def test_reduction_axis_out_of_range():
    with pytest.raises(ValueError) as info:
        tt.reduce_sum(tt.ones((2, 3)), axis=2)
    assert_message(info, "2")


# --- the tape -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [3.0, 2, np.ones(2), [1.0, 2.0], "x", None],
    ids=["float", "int", "ndarray", "list-of-floats", "str", "None"],
)
def test_watch_of_a_non_tensor_raises_value_error(value):
    with tt.GradientTape() as tape:
        with pytest.raises(ValueError) as info:
            tape.watch(value)
    leaf = value[0] if isinstance(value, list) else value
    assert_message(info, type(leaf).__name__)


def test_watch_of_a_structure_with_one_non_tensor():
    x = tt.constant(1.0)
    with tt.GradientTape() as tape:
        with pytest.raises(ValueError) as info:
            tape.watch([x, {"bad": "oops"}])
    assert_message(info, "str")


def test_a_second_gradient_call_raises_runtime_error():
    x = tt.constant(3.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError) as info:
        tape.gradient(y, x)
    assert "persistent" in str(info.value)


@pytest.mark.parametrize("second", ["gradient", "jacobian", "batch_jacobian"])
def test_any_second_differentiation_raises_runtime_error(second):
    x = tt.constant([[1.0, 2.0]])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    tape.jacobian(y, x)
    with pytest.raises(RuntimeError):
        getattr(tape, second)(y, x)


def test_jacobian_without_pfor_on_a_non_persistent_tape_raises_runtime_error():
    x = tt.constant([1.0, 2.0])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(RuntimeError):
        tape.jacobian(y, x, experimental_use_pfor=False)


def test_stop_recording_on_a_tape_never_entered():
    tape = tt.GradientTape()
    with pytest.raises(RuntimeError):
        with tape.stop_recording():
            pass


def test_stop_recording_after_the_tape_exited():
    x = tt.constant(1.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
    with pytest.raises(ValueError):
        with tape.stop_recording():
            pass


def test_stop_recording_inside_stop_recording():
    tape = tt.GradientTape()
    with tape:
        with tape.stop_recording():
            with pytest.raises(ValueError):
                with tape.stop_recording():
                    pass


def test_tape_re_entry_raises_value_error():
    tape = tt.GradientTape()
    with tape:
        with pytest.raises(ValueError) as info:
            tape.__enter__()
    assert "recording" in str(info.value)


def test_output_gradients_with_a_wrong_shape():
    x = tt.constant([1.0, 2.0])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError) as info:
        tape.gradient(y, x, output_gradients=tt.ones((3,)))
    assert_message(info, "(3,)", "(2,)")


def test_output_gradients_with_a_wrong_count():
    x = tt.constant([1.0, 2.0])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = x + x
    with pytest.raises(ValueError):
        tape.gradient([y, z], x, output_gradients=[tt.ones((2,))])


def test_unknown_unconnected_gradients_value():
    x = tt.constant(1.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(ValueError):
        tape.gradient(y, x, unconnected_gradients="sometimes")


def test_batch_jacobian_with_different_batch_sizes():
    x = tt.constant(np.ones((3, 2)))
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reshape(x, (2, 3))
    with pytest.raises(ValueError) as info:
        tape.batch_jacobian(y, x)
    assert_message(info, "(2, 3)", "(3, 2)")


# --- indexing -----------------------------------------------------------------------------


@pytest.mark.parametrize("index", [3, -4, 100, (0, 5), (slice(None), 2), (0, -3)], ids=repr)
def test_index_out_of_range_raises_index_error(index):
    t = tt.constant(np.zeros((3, 2)))
    with pytest.raises(IndexError) as info:
        t[index]
    message = str(info.value)
    assert any(ch.isdigit() for ch in message)


def test_index_out_of_range_names_the_index_and_size():
    t = tt.constant([1.0, 2.0, 3.0])
    with pytest.raises(IndexError) as info:
        t[7]
    assert_message(info, "7", "3")


def test_too_many_indices_raises_index_error():
    with pytest.raises(IndexError):
        tt.constant([1.0, 2.0])[0, 0]


def test_iteration_stops_at_the_end():
    # IndexError is what ends iteration protocols that index: the last row is the last.
    rows = [r.numpy() for r in tt.constant([[1, 2], [3, 4]])]
    assert len(rows) == 2


@pytest.mark.parametrize(
    "index",
    [1.0, (0, 1.5), "a", tt.constant(1.0), tt.constant([0, 1])],
    ids=["float", "float-in-tuple", "str", "float-tensor", "vector-tensor"],
)
def test_indexing_with_a_non_integer_raises_type_error(index):
    t = tt.constant(np.zeros((3, 2)))
    with pytest.raises(TypeError) as info:
        t[index]
    assert "index" in str(info.value).lower()


def test_indexing_a_scalar_raises():
    with pytest.raises(IndexError):
        tt.constant(1.0)[0]


def test_convert_to_tensor_with_a_conflicting_dtype():
    with pytest.raises(ValueError) as info:
        tt.convert_to_tensor(tt.constant([1.0]), dtype=tt.float64)
    assert_message(info, "float32", "float64")


def test_reset_on_a_tape_that_is_not_recording():
    x = tt.constant(1.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
    with pytest.raises(ValueError):
        tape.reset()
