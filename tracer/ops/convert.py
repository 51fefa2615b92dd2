"""Turning op arguments into Tensors, TensorFlow style."""

import numpy as np

from tracer.context import state
from tracer.ir import format_location, user_location
from tracer.tensor import (
    SizeKnownWhenRun,
    SymbolicValueError,
    Tensor,
    TensorLike,
    _from_python,
    convert_to_tensor,
    holds_tensors,
    is_tensor_like,
)


def as_tensors(*values):
    """Tensors for `values`; those that are not tensors or variables (Python scalars, lists,
    numpy arrays) take the dtype of the first one that is, as TensorFlow's operators do; when
    none is, the first value's own dtype.

    >>> x, two = as_tensors(tt.constant(1.0, dtype=tt.float64), 2)
    >>> two.dtype
    tt.float64
    """
    if len(values) == 2:  # the common case, `x * 2`, `x * y` or `x @ w`, without the general loop
        x, y = values
        if isinstance(x, TensorLike) and type(x) is not Tensor:  # a Variable, read
            x = x._read()
        if type(x) is Tensor:
            if type(y) is Tensor:
                return x, y
            if type(y) in _PYTHON_SCALARS:
                return x, _scalar_constant(y, x.dtype)
            if isinstance(y, TensorLike):
                return x, y._read()
        elif type(y) is Tensor and type(x) in _PYTHON_SCALARS:
            return _scalar_constant(x, y.dtype), y
        values = (x, y)
    for v in values:  # a nested list holding tensors is packed first, and gives its dtype
        if type(v) in _SEQUENCES and holds_tensors(v):
            values = [convert_to_tensor(v) if _is_packable(v) else v for v in values]
            break
    dtype = None
    for v in values:
        if is_tensor_like(v) or hasattr(v, "_densify"):
            dtype = v.dtype
            break
    if dtype is None and values:
        # NOTE: with no tensor among them, the first value's own dtype is the one the others
        # take, as in TensorFlow's `args_to_matching_eager`: `maximum(0., [1, -1])` is float32
        # and `maximum(1, 0.5)` refuses 0.5
        first = _convert(values[0], None)
        return (first, *(_convert(v, first.dtype) for v in values[1:]))
    return tuple(v if type(v) is Tensor else _convert(v, dtype) for v in values)


def _is_packable(value):
    return isinstance(value, (list, tuple)) and holds_tensors(value)


_PYTHON_SCALARS = (float, int, bool)
_SEQUENCES = (list, tuple)
_SCALAR_CONSTANTS = {}  # (type, value, dtype) -> Tensor: the `2` of `x * 2`, converted once
_SCALAR_CONSTANTS_LIMIT = 4096
# the ids of those Tensors (kept alive by the table): no one else holds them, so no tape can
# watch one after an op read it, and a tape keeps no value only its cotangent would need
# (`OpDef.saved_for`)
SCALAR_CONSTANT_IDS = set()


def _scalar_constant(value, dtype):
    """The Tensor of a Python scalar operand, shared between uses: eager loops convert the
    same few constants at every step. It holds a numpy scalar (not a 0-d array), which
    numpy's arithmetic handles several times faster."""
    key = (type(value), value, dtype)
    tensor = _SCALAR_CONSTANTS.get(key)
    if tensor is None:
        tensor = Tensor(_from_python(value, dtype)[()])
        # 0.0 and -0.0 are equal keys with different values: keep zeros out of the table
        if value != 0 and len(_SCALAR_CONSTANTS) < _SCALAR_CONSTANTS_LIMIT:
            _SCALAR_CONSTANTS[key] = tensor
            SCALAR_CONSTANT_IDS.add(id(tensor))
    return tensor


def _convert(value, dtype):
    if is_tensor_like(value) or hasattr(value, "_densify"):  # variables, IndexedSlices
        return convert_to_tensor(value)
    return Tensor(_from_python(value, dtype))


def as_tensor(value):
    return value if type(value) is Tensor else convert_to_tensor(value)


def static_int(value):
    """A Python int for a size or an index known now (an int, or a tensor with a value);
    None for a tensor known only when a traced function runs."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    tensor = as_tensor(value)
    return None if tensor._value is None else int(tensor._value)


def known_value(value, what, hint=""):
    """`value`, or a tensor's numpy value, where it is known now; a TypeError naming `what`
    (an argument of a function, as "tt.slice: begin"), `hint` after it, for a tensor known
    only when a traced function runs."""
    if not isinstance(value, Tensor):
        return value
    if value._value is None:
        raise SymbolicValueError(
            f"{what} must be known when the function is traced, not a tensor computed while "
            f"it runs{hint}"
        )
    return value._value


def length_value(value, what, hint=""):
    """`value`, or a tensor's numpy value, where it sets the length of a result (a mask's
    count, the number of segments): `known_value`'s where it is known now. In a traced
    function, where it is computed when the function runs: RunsAsPython, so that the function
    runs as Python at each call, as TensorFlow's graph takes lengths known only then (tracer's
    compiled code holds sizes known when tracing), or a converted loop over rows known while
    tracing unrolls (SizeKnownWhenRun, as every size known only then); `hint`, after the
    reason, says what keeps the length fixed. (A tt.compat.v1 graph's is a TypeError, as known_value's.)"""
    if not isinstance(value, Tensor) or value._value is not None:
        return known_value(value, what)
    if state.trace is None:
        reason = ": it sets the length of a result, and tracer's graphs have sizes known when built"
        return known_value(value, what, reason + hint)
    location = format_location(user_location())
    where = f" (at {location})" if location else ""
    raise SizeKnownWhenRun(
        f"computes {what} when it runs{where}, and it sets the length of a result: compiled "
        f"code holds tensors of sizes known when tracing, so the function runs as Python at "
        f"each call{hint}"
    )
