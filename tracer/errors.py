"""`tt.errors`: TensorFlow's exception classes and error codes, as `tf.errors` has them.

    try:
        tt.gather(tt.constant([1.0, 2.0]), [5])
    except tt.errors.InvalidArgumentError as error:
        print(error.message)   # gather: index 5 is out of range [0, 2)

Where TensorFlow raises one of these on a bad runtime value, tracer raises a class that is
both TensorFlow's and the builtin one tracer raised before (`mixed(InvalidArgumentError,
IndexError)`), so `except tt.errors.InvalidArgumentError` (as TensorFlow's guides write)
and `except IndexError` both catch it. `as_tf` says which builtin classes are converted:
the raising paths call it (compiled code's error codes map to its classes:
codegen/lower.py), the ops' fast paths never do.
"""

import functools

import numpy as np

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """The base class of TensorFlow's runtime errors: `OpError(node_def, op, message,
    error_code)`, with those as read-only properties (`op` and `node_def` are None in
    tracer, as `op` is in TensorFlow's eager mode); `str()` is the message."""

    def __init__(self, node_def, op, message, error_code, *args):
        super().__init__()
        self._node_def = node_def
        self._op = op
        self._message = message
        self._error_code = error_code
        self._experimental_payloads = args[0] if args else {}

    def __reduce__(self):
        return _rebuild, (type(self), self._node_def, self._op, self._message, self._error_code)

    @property
    def message(self):
        """The error message that describes the error."""
        return self._message

    @property
    def op(self):
        """The operation that failed, if known (always None in tracer)."""
        return self._op

    @property
    def node_def(self):
        """The NodeDef of the op that failed, if known (always None in tracer)."""
        return self._node_def

    @property
    def error_code(self):
        """The integer error code that describes the error."""
        return self._error_code

    @property
    def experimental_payloads(self):
        """A dictionary describing the details of the error."""
        return self._experimental_payloads

    def __str__(self):
        return str(self._message)


def _rebuild(cls, node_def, op, message, error_code):
    """An unpickled OpError (its subclasses take fewer arguments than OpError)."""
    error = OpError.__new__(cls)
    OpError.__init__(error, node_def, op, message, error_code)
    return error


def _subclass(name, code, doc):
    """TensorFlow's `OpError` subclass `name`: constructed as `name(node_def, op, message)`."""

    def __init__(self, node_def, op, message, *args):
        OpError.__init__(self, node_def, op, message, code, *args)

    return type(name, (OpError,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


CancelledError = _subclass("CancelledError", CANCELLED, "An operation was cancelled.")
UnknownError = _subclass("UnknownError", UNKNOWN, "An error of an unknown kind.")
InvalidArgumentError = _subclass(
    "InvalidArgumentError", INVALID_ARGUMENT, "An operation received an invalid argument."
)
DeadlineExceededError = _subclass(
    "DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired before the operation ended."
)
NotFoundError = _subclass("NotFoundError", NOT_FOUND, "A requested entity was not found.")
AlreadyExistsError = _subclass(
    "AlreadyExistsError", ALREADY_EXISTS, "An entity to be created already exists."
)
PermissionDeniedError = _subclass(
    "PermissionDeniedError", PERMISSION_DENIED, "The caller may not run the operation."
)
UnauthenticatedError = _subclass(
    "UnauthenticatedError", UNAUTHENTICATED, "The request has no valid credentials."
)
ResourceExhaustedError = _subclass(
    "ResourceExhaustedError", RESOURCE_EXHAUSTED, "A resource (memory, quota) ran out."
)
FailedPreconditionError = _subclass(
    "FailedPreconditionError", FAILED_PRECONDITION, "The system is not in a state to run it."
)
AbortedError = _subclass("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _subclass(
    "OutOfRangeError", OUT_OF_RANGE, "The operation went past the valid range (end of input)."
)
UnimplementedError = _subclass(
    "UnimplementedError", UNIMPLEMENTED, "The operation is not implemented or supported."
)
InternalError = _subclass("InternalError", INTERNAL, "An internal invariant was broken.")
UnavailableError = _subclass("UnavailableError", UNAVAILABLE, "The service is unavailable.")
DataLossError = _subclass("DataLossError", DATA_LOSS, "Unrecoverable data loss or corruption.")


class OperatorNotAllowedInGraphError(TypeError):
    """An operator that a graph cannot run (as TensorFlow's, a TypeError)."""


@functools.cache
def mixed(tf_class, builtin):
    """The class that is both `tf_class` (an OpError subclass) and `builtin`, constructed
    as `builtin` is, from the message alone; one class per pair.

    >>> error = mixed(InvalidArgumentError, IndexError)("index 5 is out of range")
    >>> isinstance(error, InvalidArgumentError) and isinstance(error, IndexError)
    True
    """

    def __init__(self, message="", *args):
        builtin.__init__(self, message, *args)
        tf_class.__init__(self, None, None, message)
        self.args = (message, *args)

    def __reduce__(self):
        return _remake, (tf_class, builtin, self.args)

    namespace = {
        "__init__": __init__,
        "__reduce__": __reduce__,
        "__module__": __name__,
        "builtin": builtin,  # the class mixed in (`builtin_of`)
    }
    return type(tf_class.__name__, (tf_class, builtin), namespace)


def _remake(tf_class, builtin, args):
    """An unpickled `mixed` error (its class is made at run time, so pickled by recipe)."""
    return mixed(tf_class, builtin)(*args)


# the builtin classes tracer raises on a bad runtime value, and TensorFlow's class for it
_TF_CLASS = {
    IndexError: InvalidArgumentError,  # an index out of range (gather, scatter, segment ids)
    np.linalg.LinAlgError: InvalidArgumentError,  # a singular or non-positive-definite input
    ZeroDivisionError: InvalidArgumentError,  # an integer divided by zero
}


def as_tf(exception):
    """`exception` (a class) as tracer raises it: mixed with TensorFlow's class where
    TensorFlow raises one for the same error, else unchanged.

    >>> issubclass(as_tf(IndexError), InvalidArgumentError)
    True
    """
    if issubclass(exception, OpError):
        return exception
    tf_class = _TF_CLASS.get(exception)
    return exception if tf_class is None else mixed(tf_class, exception)


def builtin_of(exception):
    """The class `as_tf` made `exception` from (itself where it is not a `mixed` class):
    what a stored plan names (codegen/plans.py), to be converted again when loaded."""
    return exception.__dict__.get("builtin", exception)


class RunsAsPython(Exception):
    """Raised while a tt.function is traced by code that tracer runs only as Python (a
    tt.py_function with results, a tt.data.Dataset's next element, a TensorArray or a
    tt.range whose sizes are known only when the function runs): the function then runs as
    Python at each call (tracer/function.py), and its message, after the function's name,
    says why. Here, below the ops that raise it."""
