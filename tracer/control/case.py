"""`tt.case` and `tt.switch_case`: TensorFlow's multi-way branches, as one `switch` node.

    switch_case(i, [f0, f1, f2])          =  switch[f0, f1, f2](i)    (outside [0, 3): f2)
    case([(p0, f0), (p1, f1)], default)   =  switch[f0, f1, default](the first k with pk,
                                                                      else 2)

A predicate or index known when the call is made (eagerly, or a constant while tracing)
runs only the chosen function, as `tt.cond` does (a known false predicate drops its pair,
a known true one ends the list). Unknown ones make one `switch`, a branch region
(branching.py) whose gradient, batching and compiled code (a C `switch`) are those of every
branch.

TensorFlow checks two things when the graph runs: with `exclusive=True`, that at most one
predicate is true, and, without a default, that one is. Here both raise TensorFlow's
`InvalidArgumentError`: at once where the predicates are known (always eagerly), and in a
traced function with predicates known only when it runs, then (a check node, as
`tt.debugging.Assert`'s).
"""

from tracer import assertions, dtypes, nest
from tracer.control.branching import SWITCH, check_same_results, traced_branches
from tracer.control.region import at_user_line, in_scope, open_scope
from tracer.errors import InvalidArgumentError, mixed
from tracer.ops import array_ops, convert, math_ops, structure_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.math_composites import reduce_any
from tracer.tensor import convert_to_tensor


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name=None):
    """The result of the function of the first true predicate: TensorFlow's `tf.case`.

    `pred_fn_pairs` is a list of (boolean scalar, callable) pairs, or a dict of them (in its
    order). With no true predicate, `default()` runs; without a default, that is an
    `tt.errors.InvalidArgumentError`. `exclusive=True` makes more than one true predicate an
    `InvalidArgumentError` too. Unless `strict`, a result that is a list or tuple of one item
    is that item, as in TensorFlow.

    >>> x = tt.constant(1.0)
    >>> float(tt.case([(x > 2.0, lambda: x * 10.0), (x > 0.0, lambda: x + 1.0)], default=lambda: x))
    2.0
    """
    predicates, fns = _pairs(pred_fn_pairs)
    if default is not None and not callable(default):
        raise TypeError(
            f"tt.case: default must be callable, not {type(default).__name__}{at_user_line()}"
        )
    known = [_known_truth(p) for p in predicates]
    _check_when_run(predicates, known, exclusive, default is not None)
    if exclusive and sum(k is True for k in known) > 1:
        raise mixed(InvalidArgumentError, ValueError)(
            f"tt.case: exclusive=True, but more than 1 of its conditions evaluated as True: "
            f"{_described(known)}{at_user_line()}"
        )
    if default is None:
        if all(k is False for k in known):
            raise mixed(InvalidArgumentError, ValueError)(
                f"tt.case: none of its conditions evaluated as True, and there is no default: "
                f"{_described(known)}{at_user_line()}"
            )
        default, predicates, fns = fns[-1], predicates[:-1], fns[:-1]
    unknown = []
    for predicate, fn, truth in zip(predicates, fns, known):
        if truth is True:  # the pairs after it are never reached
            default = fn
            break
        if truth is None:
            unknown.append((predicate, fn))
    if unknown:
        result = _switch(
            _first_true([p for p, _ in unknown]), [*(f for _, f in unknown), default], "case", name
        )
    else:
        result = default()
    return result if strict else _unpacked(result)


def _check_when_run(predicates, known, exclusive, has_default):
    """TensorFlow's checks of the predicates known only when the traced function runs (a
    check node, tracer/assertions.py): with `exclusive`, at most one true; without a
    default, at least one (unless one known now is)."""
    later = [p for p, truth in zip(predicates, known) if truth is None]
    if not later:
        return
    true_now = sum(truth is True for truth in known)
    flags = structure_ops.stack([convert.as_tensor(p) for p in later])
    if exclusive:
        count = reduce_sum(array_ops.cast(flags, dtypes.int32)) + true_now
        assertions.Assert(
            math_ops.less_equal(count, 1),
            [f"tt.case: exclusive=True, but more than 1 of its conditions evaluated as "
             f"True{at_user_line()}; the conditions known when it ran:", flags],
        )  # fmt: skip
    if not has_default and not true_now:
        assertions.Assert(
            reduce_any(flags),
            [f"tt.case: none of its conditions evaluated as True, and there is no "
             f"default{at_user_line()}; the conditions known when it ran:", flags],
        )  # fmt: skip


def switch_case(branch_index, branch_fns, default=None, name=None):
    """`branch_fns[branch_index]()`: TensorFlow's `tf.switch_case`.

    `branch_fns` is a list of callables, a list of (int, callable) pairs or a dict of them,
    whose keys are 0 to N-1. An index outside [0, N) runs `default`, or the last branch when
    there is no default, as TensorFlow documents.

    >>> int(tt.switch_case(tt.constant(1), [lambda: tt.constant(17), lambda: tt.constant(23)]))
    23
    """
    fns = _branches(branch_fns)
    index = _index(branch_index)
    if default is None:
        default = fns[-1]
    elif not callable(default):
        raise TypeError(
            f"tt.switch_case: default must be callable, not {type(default).__name__}"
            f"{at_user_line()}"
        )
    known = convert.static_int(index)
    if known is not None:
        return (fns[known] if 0 <= known < len(fns) else default)()
    if default is not fns[-1]:  # the last branch runs outside [0, n): default is it
        fns = [*fns, default]
    if len(fns) == 1:  # whatever the index
        return fns[0]()
    return _switch(index, fns, "switch_case", name)


def _switch(index, fns, kind, name):
    """`fns[index]()` (the last outside [0, len(fns))) as one traced switch node."""
    scope = open_scope(kind, name)
    named = [(f"branch{k}", in_scope(fn, scope)) for k, fn in enumerate(fns)]
    results, first = traced_branches(
        SWITCH, index, named, f"{{name}} of tt.{kind}", lambda traced: _check_branches(traced, kind)
    )
    if first.structure is None:
        return None
    return nest.pack_sequence_as(first.structure, results)


def _check_branches(traced, kind):
    first = traced[0]
    for k, other in enumerate(traced[1:], 1):
        difference = nest.structure_difference(first.structure, other.structure)
        if difference is None and first.n_results != other.n_results:
            difference = f"{first.n_results} and {other.n_results} tensors"
        if difference is not None:
            raise TypeError(
                f"the branches of tt.{kind} must have the same number, type, and overall "
                f"structure of return values; branches 0 and {k} return {difference}"
                f"{at_user_line()}"
            )
    check_same_results(traced, f"tt.{kind}")


def _first_true(predicates):
    """The position of the first true predicate, len(predicates) when none is: an int32
    scalar computed when the graph runs."""
    index = convert_to_tensor(len(predicates), dtypes.int32)
    for k in reversed(range(len(predicates))):
        index = math_ops.where(predicates[k], convert_to_tensor(k, dtypes.int32), index)
    return index


def _pairs(pred_fn_pairs):
    """(predicates as boolean scalar tensors, their callables), checked."""
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    if not isinstance(pred_fn_pairs, (list, tuple)):
        raise TypeError(
            "tt.case: pred_fn_pairs must be a list, tuple or dict of (predicate, callable) "
            f"pairs, not {type(pred_fn_pairs).__name__}{at_user_line()}"
        )
    if not pred_fn_pairs:
        raise ValueError(f"tt.case: pred_fn_pairs holds no pair{at_user_line()}")
    predicates, fns = [], []
    for k, pair in enumerate(pred_fn_pairs):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise TypeError(
                f"tt.case: entry {k} of pred_fn_pairs must be a (predicate, callable) pair, "
                f"not {pair!r}{at_user_line()}"
            )
        predicate, fn = convert.as_tensor(pair[0]), pair[1]
        if predicate.shape != () or not predicate.dtype.is_bool:
            raise TypeError(
                f"tt.case: predicate {k} must be a boolean scalar, not "
                f"{predicate.dtype.name}{list(predicate.shape)}{at_user_line()}"
            )
        if not callable(fn):
            raise TypeError(
                f"tt.case: the function of predicate {k} must be callable, not "
                f"{type(fn).__name__}{at_user_line()}"
            )
        predicates.append(predicate)
        fns.append(fn)
    return predicates, fns


def _known_truth(predicate):
    """True or False for a predicate known now, None for one known only at run time."""
    return None if predicate._value is None else bool(predicate)


def _described(known):
    return "[" + ", ".join("?" if k is None else str(k) for k in known) + "]"


def _unpacked(result):
    """A list or tuple of one item as that item (TensorFlow's non-strict mode)."""
    if type(result) in (list, tuple) and len(result) == 1:
        return result[0]
    return result


def _branches(branch_fns):
    """The branch functions as a list, index k holding branch k; checked."""
    if isinstance(branch_fns, dict):
        pairs = list(branch_fns.items())
    elif isinstance(branch_fns, (list, tuple)) and not all(callable(f) for f in branch_fns):
        pairs = list(branch_fns)
        if not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs):
            raise TypeError(
                "tt.switch_case: branch_fns must hold callables, or (int, callable) pairs"
                f"{at_user_line()}"
            )
    elif isinstance(branch_fns, (list, tuple)):
        pairs = list(enumerate(branch_fns))
    else:
        raise TypeError(
            "tt.switch_case: branch_fns must be a list, tuple or dict of callables, not "
            f"{type(branch_fns).__name__}{at_user_line()}"
        )
    if not pairs:
        raise ValueError(f"tt.switch_case: branch_fns holds no branch{at_user_line()}")
    keys = [key for key, _ in pairs]
    if any(isinstance(k, bool) or not isinstance(k, int) for k in keys) or sorted(keys) != list(
        range(len(pairs))
    ):
        raise ValueError(
            f"tt.switch_case: the branch indices must be 0 to {len(pairs) - 1}, not "
            f"{keys}{at_user_line()}"
        )
    fns = dict(pairs)
    for key, fn in pairs:
        if not callable(fn):
            raise TypeError(
                f"tt.switch_case: branch {key} must be callable, not {type(fn).__name__}"
                f"{at_user_line()}"
            )
    return [fns[k] for k in range(len(pairs))]


def _index(branch_index):
    """The branch index as an integer scalar tensor, or a clear error."""
    index = convert.as_tensor(branch_index)
    if index.dtype not in (dtypes.int32, dtypes.int64) or index.shape != ():
        raise TypeError(
            "tt.switch_case: branch_index must be an int32 or int64 scalar, not "
            f"{index.dtype.name}{list(index.shape)}{at_user_line()}"
        )
    return index
