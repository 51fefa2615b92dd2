"""`tt.errors` and TensorFlow's exception kinds (issue 46).

Each test states what TensorFlow 2.21 does (observed with `tf.errors` and the ops named),
and checks that tracer matches, while the builtin class tracer raised before still catches.
"""

import pickle

import numpy as np
import pytest

import tracer as tt

# TF 2.21: [n for n in dir(tf.errors) if n.endswith("Error")] and each subclass's
# error_code (tf.errors.InvalidArgumentError(None, None, "m").error_code == 3, ...)
SUBCLASSES = {
    "CancelledError": ("CANCELLED", 1),
    "UnknownError": ("UNKNOWN", 2),
    "InvalidArgumentError": ("INVALID_ARGUMENT", 3),
    "DeadlineExceededError": ("DEADLINE_EXCEEDED", 4),
    "NotFoundError": ("NOT_FOUND", 5),
    "AlreadyExistsError": ("ALREADY_EXISTS", 6),
    "PermissionDeniedError": ("PERMISSION_DENIED", 7),
    "ResourceExhaustedError": ("RESOURCE_EXHAUSTED", 8),
    "FailedPreconditionError": ("FAILED_PRECONDITION", 9),
    "AbortedError": ("ABORTED", 10),
    "OutOfRangeError": ("OUT_OF_RANGE", 11),
    "UnimplementedError": ("UNIMPLEMENTED", 12),
    "InternalError": ("INTERNAL", 13),
    "UnavailableError": ("UNAVAILABLE", 14),
    "DataLossError": ("DATA_LOSS", 15),
    "UnauthenticatedError": ("UNAUTHENTICATED", 16),
}


@pytest.mark.parametrize("name", sorted(SUBCLASSES))
def test_each_subclass_of_op_error_has_tensorflows_code_and_constructor(name):
    """TF: `X.__mro__` is (X, OpError, Exception, ...); `X(node_def, op, message)`;
    `.message`, `.op`, `.node_def`, `.error_code`; `str()` is the message."""
    cls = getattr(tt.errors, name)
    code_name, code = SUBCLASSES[name]
    assert getattr(tt.errors, code_name) == code
    assert cls.__mro__[1:] == (tt.errors.OpError, Exception, BaseException, object)
    error = cls(None, None, "what went wrong")
    assert (error.message, error.op, error.node_def, error.error_code) == (
        "what went wrong",
        None,
        None,
        code,
    )
    assert str(error) == "what went wrong" and error.experimental_payloads == {}
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is cls and again.message == "what went wrong"


def test_op_error_takes_the_code_and_ok_is_zero():
    """TF: `tf.errors.OpError(None, None, "m", 3).error_code == 3`; `tf.errors.OK == 0`;
    `OperatorNotAllowedInGraphError` is a TypeError, not an OpError."""
    error = tt.errors.OpError(None, None, "m", tt.errors.INVALID_ARGUMENT)
    assert error.error_code == 3 and error.message == "m" and tt.errors.OK == 0
    assert issubclass(tt.errors.OperatorNotAllowedInGraphError, TypeError)
    assert not issubclass(tt.errors.OperatorNotAllowedInGraphError, tt.errors.OpError)
    assert "errors" in dir(tt)


def _gather(p, i):
    return tt.gather(p, i)


def _gather_nd(i):
    return tt.gather_nd(tt.constant([1.0, 2.0, 3.0]), i)


def _scatter_nd(i):
    return tt.scatter_nd(i, tt.constant([1.0]), [3])


def _segment(x, ids):
    return tt.math.unsorted_segment_sum(x, ids, 2)


SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)

# TF 2.21 raises InvalidArgumentError for each, eagerly and in tf.function:
#   tf.gather([1., 2., 3.], [5])             indices[0] = 5 is not in [0, 3)
#   tf.gather_nd([1, 2, 3], [[5]])           indices[0] = [5] does not index into param shape [3]
#   tf.scatter_nd([[5]], [1.], [3])          indices[0] = [5] does not index into shape [3]
#   tf.math.unsorted_segment_sum(x, [0, 5], 2)   segment_ids[1] = 5 is out of range [0, 2)
#   tf.linalg.inv(singular)                  Input is not invertible. [Op:MatrixInverse]
#   tf.linalg.solve(singular, rhs)           Input matrix is not invertible. [Op:MatrixSolve]
RUNTIME_ERRORS = {
    "gather": (_gather, (tt.constant([1.0, 2.0, 3.0]), tt.constant([5])), IndexError),
    "gather_nd": (_gather_nd, (tt.constant([[5]]),), IndexError),
    "scatter_nd": (_scatter_nd, (tt.constant([[5]]),), IndexError),
    "segment": (_segment, (tt.constant([1.0, 2.0]), tt.constant([0, 5])), IndexError),
    "inv": (tt.linalg.inv, (tt.constant(SINGULAR),), np.linalg.LinAlgError),
    "solve": (
        lambda a: tt.linalg.solve(a, tt.ones((2, 1))),
        (tt.constant(SINGULAR),),
        np.linalg.LinAlgError,
    ),
}


def _run(backend, function, args):
    if backend == "eager":
        return function(*args)
    return tt.function(function, backend=backend)(*args)


@pytest.mark.parametrize("backend", ["eager", "c", "interpreter"])
@pytest.mark.parametrize("case", sorted(RUNTIME_ERRORS))
def test_a_bad_runtime_value_raises_invalid_argument_error_and_the_old_class(case, backend):
    function, args, old = RUNTIME_ERRORS[case]
    try:
        _run(backend, function, args)
    except tt.errors.InvalidArgumentError as error:  # as TensorFlow's guides write it
        assert error.error_code == tt.errors.INVALID_ARGUMENT and error.message == str(error)
        assert error.op is None and error.node_def is None
    else:
        pytest.fail(f"{case} ({backend}) did not raise")
    with pytest.raises(old) as info:  # and the class tracer raised before still catches
        _run(backend, function, args)
    assert isinstance(info.value, tt.errors.InvalidArgumentError)


def test_the_converted_error_keeps_its_message_and_pickles():
    """The message tracer gave before is the TF error's `.message`; one class per pair."""
    with pytest.raises(tt.errors.InvalidArgumentError) as info:
        tt.gather(tt.constant([1.0, 2.0, 3.0]), [5])
    assert info.value.message == "gather: index 5 is out of range [0, 3)"
    assert info.value.args == ("gather: index 5 is out of range [0, 3)",)
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is type(info.value) and again.message == info.value.message
    assert tt.errors.as_tf(IndexError) is tt.errors.as_tf(IndexError)
    assert tt.errors.as_tf(KeyError) is KeyError  # not converted: unchanged


def test_an_int_index_out_of_range_is_invalid_argument_error():
    """TF (eager): `tf.constant([1, 2, 3])[5]` raises InvalidArgumentError ("slice index 5 of
    dimension 0 out of bounds"); tracer's IndexError is also one."""
    with pytest.raises(tt.errors.InvalidArgumentError, match="index 5 is out of bounds"):
        tt.constant([1, 2, 3])[5]
    with pytest.raises(IndexError):
        tt.constant([1, 2, 3])[5]


@pytest.mark.parametrize("backend", ["eager", "c", "interpreter"])
def test_reshape_to_another_size_is_invalid_argument_error_and_value_error(backend):
    """TF: `tf.reshape([1, 2, 3], (2,))` raises InvalidArgumentError eagerly ("Input to
    reshape is a tensor with 3 values, but the requested shape has 2") and ValueError inside
    tf.function (a static shape); tracer's error is both, in every mode."""
    function = lambda x: tt.reshape(x, (2,))  # noqa: E731
    with pytest.raises(tt.errors.InvalidArgumentError, match="cannot reshape"):
        _run(backend, function, (tt.constant([1, 2, 3]),))
    with pytest.raises(ValueError, match="cannot reshape"):
        _run(backend, function, (tt.constant([1, 2, 3]),))


def test_check_numerics_errors_are_invalid_argument_error():
    """TF: after `tf.debugging.enable_check_numerics()`, `tf.math.log(tf.constant(-1.))`
    raises InvalidArgumentError ("... Tensor had NaN values"); tracer's NumericsError is one
    (and still a FloatingPointError)."""
    tt.debugging.enable_check_numerics()
    try:
        with pytest.raises(tt.errors.InvalidArgumentError, match="log made NaN"):
            tt.math.log(tt.constant(-1.0))
        with pytest.raises(FloatingPointError, match="log made NaN"):
            tt.math.log(tt.constant(-1.0))
    finally:
        tt.debugging.disable_check_numerics()
    assert issubclass(tt.debugging.NumericsError, tt.errors.InvalidArgumentError)


def test_an_argument_outside_the_input_signature_is_a_type_error():
    """TF: `tf.function(f, input_signature=[tf.TensorSpec([2], tf.float32)])` called with a
    float32[3] or an int32[2] tensor raises TypeError ("Binding inputs to tf.function failed
    due to `Can not cast TensorSpec(shape=(3,), ...) to TensorSpec(shape=(2,), ...)`");
    tracer raises a TypeError that is also the ValueError it raised before."""
    f = tt.function(lambda x: x * 2, input_signature=[tt.TensorSpec([2], tt.float32)])
    for wrong, text in [([1.0, 2.0, 3.0], r"float32\[3\]"), ([1, 2], r"int32\[2\]")]:
        message = f"argument x is {text}, the input_signature says float32\\[2\\]"
        with pytest.raises(TypeError, match=message):
            f(tt.constant(wrong))
        with pytest.raises(ValueError, match=message):
            f(tt.constant(wrong))


def test_numpy_of_a_symbolic_tensor_is_an_attribute_error():
    """TF: `.numpy()` on a tensor leaked out of a tf.function, or called inside one, raises
    AttributeError ("'SymbolicTensor' object has no attribute 'numpy'"); tracer raises an
    AttributeError that is also the TypeError it raised before, with its own message."""
    leaked = []

    @tt.function
    def f(x):
        y = x * 2
        leaked.append(y)
        return y

    f(tt.constant(1.0))
    with pytest.raises(AttributeError, match="out of scope"):
        leaked[0].numpy()
    with pytest.raises(TypeError, match="out of scope"):
        leaked[0].numpy()
    with pytest.raises(AttributeError, match="symbolic"):
        tt.function(lambda x: x.numpy())(tt.constant(1.0))


def test_a_symbolic_tensor_as_a_python_bool_in_a_trace_is_operator_not_allowed():
    """TF 2.21: `bool()` of a symbolic tensor in code autograph does not convert raises
    OperatorNotAllowedInGraphError (a TypeError), not an error about scope."""

    def helper(x):
        return 1.0 if x > 0 else 2.0

    f = tt.function(lambda x: helper(x) * x, autograph=False)
    with pytest.raises(tt.errors.OperatorNotAllowedInGraphError, match="as a Python bool"):
        f(tt.constant(1.0))
