"""`tt.case` and `tt.switch_case`: TensorFlow's multi-way branches, as a chain of `tt.cond`s.

    case([(p0, f0), (p1, f1)], default)  =  cond(p0, f0, lambda: cond(p1, f1, default))
    switch_case(i, [f0, f1, f2])         =  cond(i == 0, f0, lambda: cond(i == 1, f1, f2))

A predicate or index known when the call is made (eagerly, or a constant while tracing)
runs only the chosen function, as `tt.cond` does; unknown ones become nested `cond` ops,
whose gradients and compiled code are `cond`'s.

TensorFlow checks two things when the graph runs: with `exclusive=True`, that at most one
predicate is true, and, without a default, that one is. Here both raise TensorFlow's
`InvalidArgumentError` wherever the predicates are known (always eagerly); in a traced
function with predicates known only at run time there is no check: the first true
predicate wins, and with none true (no default) the last pair's function runs.
"""

from tracer import dtypes
from tracer.control.branches import cond
from tracer.control.region import at_user_line
from tracer.errors import InvalidArgumentError, mixed
from tracer.ops import convert, math_ops


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
    result = _chain(predicates, fns, default)()
    return result if strict else _unpacked(result)


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
    predicates = [math_ops.equal(index, k) for k in range(len(fns))]
    if default is fns[-1]:  # the last branch is the default: one test fewer
        predicates, fns = predicates[:-1], fns[:-1]
    return _chain(predicates, fns, default)()


def _chain(predicates, fns, default):
    """A function running the first fn whose predicate holds, else default: nested conds."""
    chained = default
    for predicate, fn in reversed(list(zip(predicates, fns))):
        chained = _cond_of(predicate, fn, chained)
    return chained


def _cond_of(predicate, true_fn, false_fn):
    return lambda: cond(predicate, true_fn, false_fn)


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
