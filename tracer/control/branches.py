"""`tt.cond`: a branch, eager and compiled.

Eagerly, and whenever the predicate is known when tracing, only the chosen function runs.
Otherwise it is one `cond` node holding both functions as graphs, a branch region
(branching.py): the interpreter runs the chosen one, the C backend writes a real `if`
around their code, and its gradient is a cond of the branches' gradients.
"""

from tracer import nest
from tracer.control.branching import COND, check_same_results, traced_branches
from tracer.control.region import at_user_line, in_scope, open_scope, truth
from tracer.ops import convert


def cond(pred, true_fn=None, false_fn=None, name=None):
    """`true_fn()` if `pred` else `false_fn()`: TensorFlow's `tf.cond`.

    Eagerly, and whenever `pred` is known when tracing, only the chosen function runs.
    Otherwise both are traced, and must return the same structure of tensors of the same
    dtypes and shapes; the compiled code branches.

    >>> tt.cond(tt.constant(2.0) > 1.0, lambda: tt.constant(1.0), lambda: tt.constant(0.0)).numpy()
    1.0
    """
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("tt.cond: true_fn and false_fn must be callables")
    pred = convert.as_tensor(pred)
    if pred._value is not None:
        return true_fn() if truth(pred, "the predicate of tt.cond") else false_fn()
    if pred.shape != () or not pred.dtype.is_bool:
        raise TypeError(
            f"the predicate of tt.cond must be a boolean scalar, not "
            f"{pred.dtype.name}{list(pred.shape)}{at_user_line()}"
        )
    scope = open_scope("cond", name)
    return _traced_cond(pred, in_scope(true_fn, scope), in_scope(false_fn, scope))


def _traced_cond(pred, true_fn, false_fn):
    results, true = traced_branches(
        COND,
        pred,
        (("true", true_fn), ("false", false_fn)),
        "the {name} branch of tt.cond",
        _check_branches,
    )
    if true.structure is None:
        return None
    return nest.pack_sequence_as(true.structure, results)


def _check_branches(branches):
    # NOTE: the structures are compared before the tensors: branches returning dicts with
    # other keys flatten to as many tensors, and the false branch's would come back under the
    # true branch's keys. TensorFlow raises this TypeError (a list of another length too).
    true, false = branches
    difference = nest.structure_difference(true.structure, false.structure)
    if difference is None and true.n_results != false.n_results:
        difference = f"{true.n_results} and {false.n_results} tensors"
    if difference is not None:
        raise TypeError(
            "true_fn and false_fn arguments to tt.cond must have the same number, type, and "
            f"overall structure of return values; they return {difference}"
            f"\n  true_fn output: {_summary(true.structure)}"
            f"\n  false_fn output: {_summary(false.structure)}{at_user_line()}"
        )
    check_same_results(branches, "tt.cond")


def _summary(structure):
    """A branch's result, its tensors written as their dtype and shape."""
    flat = [
        f"{leaf.dtype.name}{list(leaf.shape)}" if hasattr(leaf, "dtype") else repr(leaf)
        for leaf in nest.flatten(structure)
    ]
    try:
        return repr(nest.pack_sequence_as(structure, [_Text(text) for text in flat]))
    except Exception:  # a TensorArray rebuilt from text: described by its tensors alone
        return f"{type(structure).__name__} of {', '.join(flat)}"


class _Text(str):
    def __repr__(self):
        return str(self)
