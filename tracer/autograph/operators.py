"""What converted code calls (as `ag__`): each statement runs as Python when its condition
is a Python value (or an eager tensor), and as tt.cond / tt.while_loop when it is a tensor
known only when the function runs.

State that a tensor `if` or loop carries must be tensors, or tuples, lists, dicts and
namedtuples of them, kept as those structures (numbers are converted), defined on every
path: a name first bound in one branch only, or inside a loop and not read after it, is
`UNDEFINED`, an object that says so, with the line, when it is used. The value a `return`
inside a loop sets (returns.py) starts as `UNDEFINED_RETURN`: a tensor loop or `if` gives it
a placeholder, zeros of the structure, dtypes and shapes its body returns (found by tracing
the body once, as TensorFlow does), so that it can carry it; so does a loop for a name
first bound in it and read after it, or None before it (TensorFlow 2.21).
"""

import functools
import inspect
import logging
import sysconfig
import types
import weakref

import numpy as np

from tracer import nest
from tracer.autograph.returns import VALUE
from tracer.context import state
from tracer.control.branches import cond
from tracer.control.case import case, switch_case
from tracer.control.folds import foldl, foldr
from tracer.control.loops import while_loop
from tracer.control.map_fn import map_fn
from tracer.control.scan import scan
from tracer.control.subgraph import trace_function
from tracer.control.vectorized_map import vectorized_map
from tracer.errors import OperatorNotAllowedInGraphError
from tracer.ir import dims
from tracer.ir.source import is_library_file
from tracer.ops import convert, dim_values, index_ops
from tracer.ops.array_ops import SymbolicRange, cast, range_, shape, zeros
from tracer.ops.math_ops import logical_and, logical_not, logical_or, minimum
from tracer.tensor import SymbolicValueError, Tensor, TensorLike

log = logging.getLogger("tracer.autograph")

# a Python loop that unrolls into more nodes than this in a traced graph gets a warning
UNROLLED_NODES_WARNING = 2000
_warned = set()  # the loops warned about (file:line), once each


class UndefinedNameError(NameError, ValueError):
    """A name used where converted control flow left it unbound: Python's NameError, and the
    ValueError TensorFlow's autograph raises there ("'y' must also be initialized in the else
    branch")."""


class Undefined:
    """The value of a name not bound on the path taken (or on every path of a tensor `if`)."""

    __slots__ = ("name", "where")

    def __init__(self, name="a variable", where=""):
        self.name = name
        self.where = where

    def _fail(self, *args, **kwargs):
        raise UndefinedNameError(
            f"'{self.name}' is not defined on every path through the converted control flow"
            + (f" at {self.where}" if self.where else "")
            + ": bind it before the `if` or loop, or on both branches"
        )

    __getattr__ = __bool__ = __call__ = __iter__ = __index__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __truediv__ = __rtruediv__ = __neg__ = __getitem__ = __float__ = __int__ = _fail

    def __repr__(self):
        return f"<undefined {self.name}>"


UNDEFINED = Undefined()


class UndefinedReturn(Undefined):
    """The value a function returns, before a `return` inside a loop has set it."""

    __slots__ = ()


UNDEFINED_RETURN = UndefinedReturn("the return value")


def ld(scope, name):
    """The value of `name` in `scope` (a function's locals()), or UNDEFINED."""
    return scope.get(name, UNDEFINED)


def ld_read(read):
    """`read()`: the value of a name declared `global` or `nonlocal`, or of a composite
    symbol (`st.v`, `d["a"]`); UNDEFINED where it is not bound."""
    try:
        return read()
    except (NameError, AttributeError, LookupError, TypeError):
        return UNDEFINED


def defined(value):
    """Whether `value` is bound (not UNDEFINED)."""
    return not isinstance(value, Undefined)


def _symbolic(value):
    return isinstance(value, Tensor) and value._value is None


# --- and, or, not -----------------------------------------------------------------------------


def and_(*operands):
    """`a and b and ...` (each operand a function giving its value): Python's, until a value
    is a tensor known only when the function runs; from there, logical_and of the rest."""
    value = operands[0]()
    for k in range(1, len(operands)):
        if _symbolic(value):
            return logical_and(value, and_(*operands[k:]))
        if not value:
            return value
        value = operands[k]()
    return value


def or_(*operands):
    """`a or b or ...`, as `and_` does it."""
    value = operands[0]()
    for k in range(1, len(operands)):
        if _symbolic(value):
            return logical_or(value, or_(*operands[k:]))
        if value:
            return value
        value = operands[k]()
    return value


def not_(value):
    """`not value`: logical_not of a tensor known only when the function runs."""
    return logical_not(value) if _symbolic(value) else not value


def if_exp(test, true_fn, false_fn):
    """`a if test else b` (each side a function giving its value): Python's on a Python
    test; on a tensor known only when the function runs, tt.cond of the two sides, as
    TensorFlow's autograph converts it."""
    if not _symbolic(test):
        return true_fn() if test else false_fn()
    _check_condition(test, "conditional expression", where=None)
    return cond(test, true_fn, false_fn)


def _check_condition(test, kind, where):
    """TensorFlow's ValueError for a tensor condition that is not a boolean scalar."""
    if test.dtype.is_bool and test.shape == ():
        return
    at = f" (the {kind} at {where})" if where else ""
    raise ValueError(
        f"condition of {kind} expected to be `tt.bool` scalar, got {test.dtype.name}"
        f"{list(test.shape)}{at}; to use as boolean Tensor, use `tt.cast`; to check for None, "
        "use `is not None`"
    )


# --- calls -------------------------------------------------------------------------------------

_CONVERTED_CALLS = weakref.WeakKeyDictionary()  # a user's function -> it converted
# autograph's `convert`, which tracer/autograph/__init__.py sets here (it imports this module)
_convert = [None]
# where Python and its installed packages live: their functions are called as they are
_INSTALLED = tuple(
    {sysconfig.get_paths()[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")}
)


def converted(function):
    """`function` converted by autograph where it is a plain Python function (or a bound
    method) of the user's own code, as TensorFlow's autograph converts the functions a
    converted one calls; anything else as it is: builtins, classes, tracer's and installed
    packages' functions, tt.functions, layers. A function that cannot be converted is
    called as written."""
    plain = function.__func__ if isinstance(function, types.MethodType) else function
    if type(plain) is not types.FunctionType:
        return function
    taking_functions = _taking_functions(plain)
    if taking_functions is not None:
        return taking_functions
    code = plain.__code__
    if (
        is_library_file(code.co_filename)
        or code.co_filename.startswith(_INSTALLED)
        or code.co_flags
        & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR)
    ):
        return function
    made = _CONVERTED_CALLS.get(plain)
    if made is None:
        try:
            made = _convert[0](plain)
        except Exception:  # a function autograph cannot read runs as written
            made = plain
        _CONVERTED_CALLS[plain] = made
    if made is plain:
        return function
    return types.MethodType(made, function.__self__) if plain is not function else made


def _converting_its_functions(op, parameters):
    """`op` (a structured op) calling it with the functions given as `parameters` converted,
    as TensorFlow's autograph converts the functions converted code gives tf.cond,
    tf.while_loop or tf.map_fn: a branch that calls a function with an `if` on a tensor
    compiles."""
    signature = inspect.signature(op)

    @functools.wraps(op)
    def call(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name in parameters:
            if name in bound.arguments:
                bound.arguments[name] = _converted_functions(bound.arguments[name])
        return op(*bound.args, **bound.kwargs)

    return call


def _converted_functions(value):
    """`value` with each function in it converted: a function, or a list, tuple or dict of
    them (a switch_case's branches, a case's (predicate, function) pairs)."""
    if isinstance(value, dict):
        return {key: _converted_functions(item) for key, item in value.items()}
    if type(value) in (list, tuple):
        return type(value)(_converted_functions(item) for item in value)
    return converted(value) if callable(value) else value


# tracer's structured ops -> their parameters that take functions, which converted code
# gives them converted (`converted`); an op wrapped by another (tt.map_fn's ragged dispatch:
# functools.wraps) is found through `__wrapped__`
_FUNCTION_PARAMETERS = {
    cond: ("true_fn", "false_fn"),
    while_loop: ("cond", "body"),
    case: ("pred_fn_pairs", "default"),
    switch_case: ("branch_fns", "default"),
    map_fn: ("fn",),
    scan: ("fn",),
    foldl: ("fn",),
    foldr: ("fn",),
    vectorized_map: ("fn",),
}
_CONVERTING = weakref.WeakKeyDictionary()  # such an op, as called -> it, converting them


def _taking_functions(plain):
    """`plain` calling it with its function parameters converted, where it is one of the
    structured ops (or wraps one); else None."""
    parameters = _FUNCTION_PARAMETERS.get(plain)
    wrapped = getattr(plain, "__wrapped__", None)
    if parameters is None and type(wrapped) is types.FunctionType:
        parameters = _FUNCTION_PARAMETERS.get(wrapped)
    if parameters is None:
        return None
    made = _CONVERTING.get(plain)
    if made is None:
        made = _CONVERTING[plain] = _converting_its_functions(plain, parameters)
    return made


# --- builtins ---------------------------------------------------------------------------------


def builtin(function, *args, **kwargs):
    """`function(*args)` where `function` is range, len, int or float (or a local of that
    name): on a tensor known only when the function runs, what TensorFlow's autograph makes
    of it (`_CONVERTED_BUILTINS`); otherwise the call itself."""
    converted = next((c for f, c in _CONVERTED_BUILTINS if f is function), None)
    if converted is None or not any(isinstance(a, Tensor) for a in args):
        return function(*args, **kwargs)
    result = converted(*args, **kwargs)
    return function(*args, **kwargs) if result is NotImplemented else result


def _range(*args, **kwargs):
    return range_(*args, **kwargs) if any(_symbolic(a) for a in args) else NotImplemented


def _len(value):
    """The first dimension of a tensor, read when the function runs where it is unknown while
    tracing (`tf.shape(x)[0]`)."""
    if value.ndim == 0:
        raise TypeError(f"len() of a scalar tensor: {value!r} has no dimensions")
    first = value.shape[0]
    return first if isinstance(first, int) else shape(value)[0]


def _cast_to(dtype):
    def cast_symbolic(value):
        return cast(value, dtype) if _symbolic(value) else NotImplemented

    return cast_symbolic


_CONVERTED_BUILTINS = (
    (range, _range),
    (len, _len),
    (int, _cast_to("int32")),
    (float, _cast_to("float32")),
)


# --- if --------------------------------------------------------------------------------------


def if_stmt(test, true_fn, false_fn, names, values, where, one_side=()):
    """`if test: ... else: ...`, which binds `names` (now `values`); their new values. With a
    tensor `test`, a name of `one_side` (bound in one branch only) that was not bound before
    the `if` is that branch's own, as a loop body's own names are: UNDEFINED after it."""
    if not _symbolic(test):
        return true_fn(*values) if test else false_fn(*values)
    _check_condition(test, "if statement", where)
    if _return_unset(names, values):
        branches = [lambda f=f: f(*values) for f in (true_fn, false_fn)]
        values = _with_return_placeholder(names, values, branches, (), "a branch of an `if`")
    carried = [
        k
        for k, (name, value) in enumerate(zip(names, values))
        if not (name in one_side and isinstance(value, Undefined) or _static(name, value))
    ]
    returns = []  # (side, the value it leaves to return), for `_check_returned`
    dtypes = []  # (side, the dtypes of what it carries), for `_check_dtypes`

    def branch(function, side):
        def run():
            results = function(*values)
            if VALUE in names:
                k = names.index(VALUE)
                _check_none(values[k], results[k], where)
                if k in carried:
                    returns.append((f"{side} branch", results[k]))
                    _check_returned(returns, where)
            for k in carried:
                if isinstance(results[k], Undefined):
                    raise ValueError(
                        f"'{names[k]}' is bound in one branch of the `if` at {where} only: "
                        "with a tensor condition, bind it before the `if` or in both branches"
                    )
            outputs = [
                _carried(results[k], names[k], where, f"the {side} branch of the `if`")
                for k in carried
            ]
            dtypes.append((side, [_dtypes(v) for v in outputs]))
            _check_dtypes(dtypes, [names[k] for k in carried], where)
            return outputs

        return run

    outputs = iter(cond(test, branch(true_fn, "true"), branch(false_fn, "false")))
    kept = set(carried)
    return tuple(
        next(outputs) if k in kept else _unbound(name, values[k], where)
        for k, name in enumerate(names)
    )


def _dtypes(value):
    return [convert.as_tensor(leaf).dtype for leaf in nest.flatten(value)]


def _check_dtypes(dtypes, names, where):
    """TensorFlow's TypeError where a name is of other dtypes after the two branches of a
    tensor `if`: `dtypes` holds (side, the dtypes of each name's leaves) pairs."""
    if len(dtypes) < 2:
        return
    (side_a, a), (side_b, b) = dtypes
    for name, x, y in zip(names, a, b):
        if len(x) == len(y) and x != y:
            first, second = next((p, q) for p, q in zip(x, y) if p != q)
            raise TypeError(
                f"'{name}' has dtype {first.name} in the {side_a} branch, but dtype "
                f"{second.name} in the {side_b} branch of the `if` at {where}: with a tensor "
                "condition, give it the same dtype on both branches"
            )


def _unbound(name, value, where):
    """The value after a tensor `if` or loop of a name it does not carry (`value` before)."""
    return value if name == VALUE else Undefined(name, where)


def _static(name, value):
    """Whether `value` of `name` is a return value that no tensor holds: None (`return` with
    no value) or not set yet."""
    return name == VALUE and (value is None or isinstance(value, Undefined))


def _check_none(before, after, where):
    """TensorFlow's ValueError where a return value goes from None to a value or back
    through a tensor `if` or loop: one way returns nothing, another a value."""
    if isinstance(before, Undefined) or isinstance(after, Undefined):
        return
    if (before is None) != (after is None):
        raise ValueError(
            f"the function returns nothing (None) on one way and a value on another, chosen "
            f"by the tensor condition at {where}: return a tensor on every way"
        )


def if_return(test, true_fn, false_fn, true_values, false_values, where, from_loop=False):
    """`if test: ... return a` else: ... return b`: the value returned. `from_loop`: the `if`
    is returns.py's after a loop that returns (`test` and `a` are the loop's flag and value,
    the `else` the rest of the function)."""
    if not _symbolic(test):
        return true_fn(*true_values) if test else false_fn(*false_values)
    _check_condition(test, "if statement", where)
    sides = ("inside the loop", "after the loop") if from_loop else ("true branch", "false branch")
    results = []  # (side, the value it returns), for `_check_returned`

    def branch(function, values, side):
        def run():
            result = function(*values)
            results.append((side, result))
            if len(results) == 2 and (results[0][1] is None) != (results[1][1] is None):
                none = results[0][0] if results[0][1] is None else results[1][0]
                raise ValueError(_returns_nothing(none, where, from_loop))
            _check_returned(results, where)
            return result

        return run

    return cond(
        test, branch(true_fn, true_values, sides[0]), branch(false_fn, false_values, sides[1])
    )


def returned(flag, value):
    """Whether a `return` inside a loop ran (`flag`, a tensor after a tensor loop): False
    where the value is still undefined, as no `return` of the traced loop set it (nor the
    flag, which it sets together with the value)."""
    return False if isinstance(value, UndefinedReturn) else flag


def _returns_nothing(side, where, from_loop):
    if from_loop:
        return (
            f"the function returns nothing (None) {side} at {where}, and a value on another "
            "way, chosen by a tensor: return a tensor on every way (TensorFlow: the else "
            "branch must also have a return statement)"
        )
    return (
        f"the {side} of the `if` at {where} returns nothing, and its condition is a tensor: "
        "both branches must return tensors"
    )


def _check_returned(returned, where):
    """A TypeError (TensorFlow's) where two ways of a tensor `if` or loop return values of
    other structures or dtypes: `returned` holds (side, value) pairs."""
    if len(returned) < 2:
        return
    (side_a, a), (side_b, b) = returned[:2]
    if a is None or b is None:
        return  # (one None and one value: a ValueError of its own)
    difference = nest.structure_difference(a, b)
    flat_a, flat_b = nest.flatten(a), nest.flatten(b)
    if difference is None and len(flat_a) != len(flat_b):
        difference = f"{len(flat_a)} and {len(flat_b)} values"
    if difference is None:
        for x, y in zip(flat_a, flat_b):
            x, y = convert.as_tensor(x), convert.as_tensor(y)
            if x.dtype != y.dtype:
                difference = f"{x.dtype.name} and {y.dtype.name}"
                break
    if difference is not None:
        raise TypeError(
            f"the function returns values of different kinds on the ways the tensor "
            f"condition at {where} chooses between ({side_a}: {_described(a)}; {side_b}: "
            f"{_described(b)}; {difference}): return the same structure of tensors of the "
            "same dtypes on every way"
        )


def _described(value):
    leaves = [convert.as_tensor(leaf) for leaf in nest.flatten(value)]
    text = [f"{t.dtype.name}{list(t.shape)}" for t in leaves]
    if len(text) == 1 and not isinstance(value, (list, tuple, dict)):
        return text[0]
    return f"{type(value).__name__} of {', '.join(text)}"


def _return_unset(names, values):
    """Whether a statement's state holds the return value, not set yet (`UNDEFINED_RETURN`)."""
    return VALUE in names and isinstance(values[names.index(VALUE)], UndefinedReturn)


def _with_return_placeholder(names, values, ways, arguments, what):
    """`values`, with the return value (`UNDEFINED_RETURN`, `_return_unset`) a placeholder
    shaped as the value the first of `ways` to set it gives, when one does: each way (a
    function of `arguments` giving a statement's new values) is traced, alone, until one
    does. None where it is a `return` with no value."""
    k = names.index(VALUE)
    for way in ways:
        like = _traced_alone(lambda *args, way=way: way(*args)[k], arguments, what)
        if not isinstance(like, Undefined):
            values = list(values)
            values[k] = (
                None
                if like is None
                else nest.pack_sequence_as(like, [_zeros_like(v) for v in nest.flatten(like)])
            )
            return tuple(values)
    return values


def _with_placeholders(values, missing, first_iteration, arguments):
    """`values`, where those at `missing` (None, or not bound before a loop) are zeros of the
    structure, dtypes and shapes that `first_iteration(*arguments)` (traced alone) gives
    them, as TensorFlow 2.21's autograph makes them; left as they are where it gives no
    tensors, or fails (the loop's trace then raises the error again, or names the value).
    NOTE: TensorFlow asserts when the loop runs that it iterates at least once; here a loop
    that runs no iteration leaves the zeros."""
    try:
        like = _traced_alone(first_iteration, arguments, "a loop body")
    except Exception:  # the loop's own trace raises it again
        return values
    values = list(values)
    for k in missing:
        leaves = nest.flatten(like[k])
        if not leaves or not all(map(_convertible, leaves)):
            continue
        zeros_like = [_zeros_like(leaf) for leaf in leaves]
        values[k] = nest.pack_sequence_as(like[k], zeros_like)
    return values


def _traced_alone(function, arguments, what):
    """What `function(*arguments)` gives when traced into a graph of its own, left unused."""
    found = []
    trace_function(lambda *args: found.append(function(*args)), arguments, what)
    return found[0]


def _zeros_like(leaf):
    leaf = convert.as_tensor(leaf)
    return zeros(leaf.shape, leaf.dtype)


def _carried(value, name, where, what):
    """`value` as what a cond or loop can carry, or an error that names `name`: a tensor, or
    a structure (tuple, list, dict, namedtuple) of tensors kept as that structure, as
    TensorFlow's nest keeps it; numbers become tensors, each leaf with its own dtype."""
    if isinstance(value, Undefined):
        raise ValueError(f"'{name}' must be bound before {what} at {where}")
    if hasattr(value, "_tensor_components") or isinstance(value, TensorLike):
        return value
    leaves = nest.flatten(value)
    try:
        tensors = [_carried_leaf(leaf) for leaf in leaves]
    except (TypeError, ValueError):
        bad = next(leaf for leaf in leaves if not _convertible(leaf))
        held = "" if bad is value else f" holding {type(bad).__name__} {bad!r}"
        raise TypeError(
            f"'{name}', set in {what} at {where}, is {type(value).__name__} {value!r}{held}: "
            "with a tensor condition it must be a tensor (or a number), or a tuple, list or "
            "dict of them"
        ) from None
    return nest.pack_sequence_as(value, tensors)


def _carried_leaf(leaf):
    if isinstance(leaf, Undefined):
        raise ValueError("undefined")
    return leaf if isinstance(leaf, TensorLike) else convert.as_tensor(leaf)


def _convertible(leaf):
    try:
        _carried_leaf(leaf)
    except (TypeError, ValueError):
        return False
    return True


# --- loops -----------------------------------------------------------------------------------


def while_stmt(test_fn, body_fn, names, values, where, read_after=(), options=None):
    """`while test: body`, which binds `names` (now `values`); their values after it.
    `read_after`: the names the function reads after the loop (`_tensor_loop`); `options`:
    what a `set_loop_options` call in the body gave (tt.autograph.experimental): its
    `maximum_iterations` bounds a loop whose condition is a tensor, counting the iterations
    run as Python while its value was known (a loop from `tt.zeros`), as TensorFlow's loop
    counts all of them; a condition of Python values is Python's loop, which it leaves alone
    (as TensorFlow's autograph does)."""
    values = list(values)
    start, iterations = _nodes_made(), 0
    while True:
        test = test_fn(*values)
        if _symbolic(test):
            _check_condition(test, "while loop", where)
            limit = _bounded(None, options, iterations)
            invariants = (options or {}).get("shape_invariants", ())
            return _tensor_loop(
                test_fn, body_fn, names, values, where, limit, read_after, invariants=invariants
            )
        if not test or isinstance(test, TensorLike) and _bound_reached(options, iterations):
            break
        values = list(body_fn(*values))
        iterations += 1
    _check_unrolling(start, iterations, where)
    return tuple(values)


def for_stmt(iterable, body_fn, names, values, where, extra_test=None, read_after=(), options=None):
    """`for item in iterable: body`: over a tensor (or a tt.range of one), a loop;
    over anything else, Python's. `extra_test(*values)`, when given, must hold for the next
    iteration to run (a `break` sets a flag it reads). `read_after`, `options`: as
    `while_stmt`'s."""
    loop = (body_fn, names, values, where, extra_test, read_after, options)
    if isinstance(iterable, SymbolicRange):
        return _range_loop(iterable, *loop)
    if isinstance(iterable, TensorLike) and state.trace is not None:
        return _rows_loop(convert.as_tensor(iterable), *loop)
    return _python_loop(iterable, body_fn, values, where, extra_test)


def _python_loop(iterable, body_fn, values, where, extra_test=None):
    """Python's `for`, unrolled into the trace: the body traced once per item."""
    values = list(values)
    start, iterations = _nodes_made(), 0
    # whether the loop could be a tensor's: over a range, or over numbers and tensors (a loop
    # over models, optimizers or layers has nothing to iterate as a tensor)
    of_numbers = True
    for item in iterable:
        of_numbers = of_numbers and isinstance(item, (int, float, np.number, TensorLike))
        if extra_test is not None:
            go_on = extra_test(*values)
            if _symbolic(go_on):
                raise NotImplementedError(
                    f"the `for` at {where} runs over a Python iterable and breaks or returns "
                    "under a tensor condition: iterate over tt.range(n) (or a tensor) instead"
                )
            if not go_on:
                break
        values = list(body_fn(item, *values))
        iterations += 1
    if isinstance(iterable, range) or of_numbers:
        _check_unrolling(start, iterations, where)
    return tuple(values)


def _rows_loop(tensor, body_fn, names, values, where, extra_test=None, read_after=(), options=None):
    """A loop over the rows of a tensor: one iteration per row, known in number."""
    if tensor.ndim == 0:
        raise TypeError(f"the `for` at {where} iterates over a scalar tensor")
    count = tensor.shape[0]
    bound = count if isinstance(count, int) else shape(tensor)[0]  # an unknown size, read then
    index = convert.as_tensor(0)

    def test(i, *state):
        return _and_extra(i < bound, extra_test, state)

    def body(i, *state):
        return (i + 1, *body_fn(index_ops.gather(tensor, i), *state))

    limit = _bounded(count if isinstance(count, int) else None, options)
    try:
        invariants = (options or {}).get("shape_invariants", ())
        return _tensor_loop(test, body, names, values, where, limit, read_after, index, invariants)
    except SymbolicValueError:
        if tensor._value is None:
            raise
    # NOTE: the body asked a value computed from the row for a size (a slice bound, say):
    # TensorFlow's loop then holds tensors of sizes unknown until it runs, which compiled code
    # cannot, so a loop over rows known while tracing (tt.range of numbers: the
    # integrated-gradients tutorial's batches) runs as Python, each row a constant. The
    # abandoned loop's body was traced into its own graph; its Python effects ran once more.
    log.info(
        "tracer: the `for` at %s runs over a tensor known while tracing, and its body needs a "
        "value of the row as a size: unrolled, one trace of the body per row",
        where,
    )
    rows = [convert.as_tensor(row) for row in tensor._value]
    return _python_loop(rows, body_fn, values, where, extra_test)


def _range_loop(
    bounds, body_fn, names, values, where, extra_test=None, read_after=(), options=None
):
    """A loop over tt.range(start, limit, delta) of tensors: up to the limit where delta > 0,
    down to it where delta < 0, as Python's range. A delta known while tracing (a number) of
    0 is tt.range's error; one known only when the function runs ends the loop at once where
    it is 0 (TensorFlow raises: a compiled loop has no error to raise there)."""
    delta = dim_values.dims_of(bounds.delta)
    sign = None if delta is None or delta.ndim or isinstance(delta[()], dims.Dim) else delta[()]
    if sign == 0:
        raise ValueError(f"tt.range: delta must not be 0 (the `for` at {where})")

    def before_limit(i):
        if sign is not None:
            return i < bounds.limit if sign > 0 else i > bounds.limit
        zero = zeros((), bounds.dtype)
        return logical_or(
            logical_and(bounds.delta > zero, i < bounds.limit),
            logical_and(bounds.delta < zero, i > bounds.limit),
        )

    def test(i, *state):
        return _and_extra(before_limit(i), extra_test, state)

    def body(i, *state):
        return (i + bounds.delta, *body_fn(i, *state))

    limit = _bounded(None, options)
    invariants = (options or {}).get("shape_invariants", ())
    return _tensor_loop(
        test, body, names, values, where, limit, read_after, bounds.start, invariants
    )


def _bounded(limit, options, done=0):
    """A loop's bound on its iterations: `limit` (None: none), or the `maximum_iterations` of
    its `options`, less the `done` iterations run as Python before it, where that is
    smaller."""
    bound = (options or {}).get("maximum_iterations")
    if bound is None:
        return limit
    known = convert.static_int(bound)
    bound = known - done if known is not None else convert.as_tensor(bound) - done
    if limit is None:
        return bound
    return min(bound, limit) if known is not None else minimum(bound, limit)


def _bound_reached(options, done):
    """Whether a loop on a tensor condition known while tracing has run the
    `maximum_iterations` its options allow (one known only when the function runs bounds the
    loop it becomes)."""
    bound = (options or {}).get("maximum_iterations")
    known = None if bound is None else convert.static_int(bound)
    return known is not None and done >= known


def _and_extra(condition, extra_test, state):
    if extra_test is None:
        return condition
    return logical_and(condition, convert.as_tensor(extra_test(*state)))


def _tensor_loop(
    test_fn, body_fn, names, values, where, limit, read_after=(), first=None, invariants=()
):
    """tt.while_loop over the names bound before the loop; `first`, when given, is a counter
    the functions take first; `invariants`, `set_loop_options`' shape_invariants: pairs of a
    value bound before the loop and the shape its name may take in it. A name None before the loop, or first bound in it and read
    after it (`read_after`), starts as zeros shaped as the first iteration leaves it
    (`_with_placeholders`), as in TensorFlow 2.21; the other names first bound in it are the
    body's own: UNDEFINED after it."""
    counter = [] if first is None else [first]

    def carried_of(values, none=True):  # none: None is carried (and refused by `_carried`)
        return [
            k
            for k, (name, v) in enumerate(zip(names, values))
            if not (isinstance(v, Undefined) or _static(name, v) or v is None and not none)
        ]

    def initial_of(carried):
        return [*counter, *(_carried(values[k], names[k], where, "the loop") for k in carried)]

    def full(state, carried):
        merged = [
            None if value is None else _unbound(name, value, where)
            for name, value in zip(names, values)
        ]
        for k, value in zip(carried, state):
            merged[k] = value
        return merged

    def first_iteration(*state):  # traced alone, for the shape of the value it returns
        head = state[: len(counter)]
        return list(body_fn(*head, *full(state[len(counter) :], before)))[len(counter) :]

    before = carried_of(values, none=False)
    if _return_unset(names, values):
        values = _with_return_placeholder(
            names, values, [first_iteration], initial_of(before), "a loop body"
        )
        before = carried_of(values, none=False)
    missing = [
        k
        for k, (name, v) in enumerate(zip(names, values))
        if name != VALUE and (v is None or isinstance(v, Undefined) and name in read_after)
    ]
    if missing:
        values = _with_placeholders(values, missing, first_iteration, initial_of(before))
    carried = carried_of(values)

    def loop_test(*state):
        return test_fn(*state[: len(counter)], *full(state[len(counter) :], carried))

    def loop_body(*state):
        head = state[: len(counter)]
        result = list(body_fn(*head, *full(state[len(counter) :], carried)))
        head, rest = result[: len(counter)], result[len(counter) :]
        if VALUE in names:
            _check_none(values[names.index(VALUE)], rest[names.index(VALUE)], where)
        return [*head, *(_carried(rest[k], names[k], where, "the loop") for k in carried)]

    initial = initial_of(carried)
    shapes = None
    if invariants:
        given = {id(value): shape for value, shape in invariants}
        shapes = [*([None] * len(counter)), *(given.get(id(values[k])) for k in carried)]
        shapes = [s if s is not None else t.shape for s, t in zip(shapes, initial)]
    final = while_loop(
        loop_test, loop_body, initial, shape_invariants=shapes, maximum_iterations=limit
    )
    return tuple(full(list(final)[len(counter) :], carried))


# --- statements left as Python ---------------------------------------------------------------


def python_test(test, kind, reason, where, unsupported_else=False):
    """The condition of an `if` or `while` left as Python (its body has `break`, `continue`
    or `return`, or it has an `else`): a tensor known only when the function runs cannot
    be one."""
    if _symbolic(test):
        if unsupported_else:
            raise OperatorNotAllowedInGraphError(
                f"the `{kind}` at {where} has a tensor condition, and {reason}: converted "
                "loops do not support a loop's `else` (nor does TensorFlow's autograph, which "
                "runs such a function unconverted): set a flag where the loop breaks and test "
                "it after the loop instead"
            )
        raise NotImplementedError(
            f"the `{kind}` at {where} has a tensor condition, and {reason}, which converted "
            f"control flow does not support: make the condition a Python value, or write the "
            f"{kind} without it (a flag in the loop's condition, say)"
        )
    return test


def python_iterable(iterable, reason, where, unsupported_else=False):
    """The iterable of a `for` left as Python."""
    if isinstance(iterable, SymbolicRange) or (unsupported_else and _symbolic(iterable)):
        error = OperatorNotAllowedInGraphError if unsupported_else else NotImplementedError
        what = "tt.range of a tensor" if isinstance(iterable, SymbolicRange) else "a tensor"
        raise error(
            f"the `for` at {where} runs over {what}, and {reason}, which "
            "converted loops do not support: write the loop without it"
            + (
                " (set a flag where the loop breaks and test it after the loop)"
                if unsupported_else
                else ""
            )
        )
    return iterable


# --- unrolling ------------------------------------------------------------------------------


def _nodes_made():
    trace = state.trace
    return trace.nodes_made if trace is not None else 0


def _check_unrolling(start, iterations, where):
    """A warning, once per loop, for a Python loop that unrolled into many graph nodes."""
    made = _nodes_made() - start
    if iterations > 1 and made > UNROLLED_NODES_WARNING and where not in _warned:
        _warned.add(where)
        log.warning(
            "tracer: the Python loop at %s was unrolled into %d graph nodes (%d iterations); "
            "iterate over tt.range(n) (or make its condition a tensor) to compile one loop",
            where,
            made,
            iterations,
        )


__all__ = [
    "UNDEFINED",
    "UNDEFINED_RETURN",
    "and_",
    "builtin",
    "not_",
    "or_",
    "for_stmt",
    "if_return",
    "if_stmt",
    "ld",
    "ld_read",
    "defined",
    "python_iterable",
    "python_test",
    "returned",
    "while_stmt",
]
