"""Why a gradient is None: `tape.explain(target, sources)` gives, for each source whose
gradient is None, the reason and the user's line.

The reasons, checked in this order:
  - the target (or the source) is not floating or complex: it has no gradient;
  - the source is a Tensor computed from a Variable outside the tape (`x = x + 1` rather
    than `x.assign_add(1)`), naming the line where that happened;
  - the source is not watched: used in the tape but never `tape.watch`ed, a variable the
    tape does not watch (not trainable, or `watch_accessed_variables=False`), or used only
    under `stop_recording`, or not used while the tape recorded at all;
  - the path from the source stops: it left tracer through numpy, went through an op with
    no gradient (`stop_gradient`, a cast to an integer, `argmax`, ...), or continued under
    `stop_recording`;
  - the target does not depend on the source.
"""

from tracer import nest
from tracer.ir import format_location
from tracer.passes.prune import prune
from tracer.tensor import TensorLike


class UnconnectedGradientError(ValueError):
    """With strict gradients on (TRACER_STRICT_GRADIENTS=1 or tt.config.strict_gradients(True)),
    a None gradient raises this, with the explanation."""


def explain(tape, rec, target, sources):
    """One line per source whose gradient is None; '' when every source has a gradient."""
    targets = [t for t in nest.flatten(target)]
    lines = []
    for k, source in enumerate(nest.flatten(sources)):
        reason = why_none(tape, rec, targets, source)
        if reason is not None:
            lines.append(f"{_name(source, k)}: {reason}")
    return "\n".join(lines)


def why_none(tape, rec, targets, source):
    """The reason `source` gets no gradient from `targets` on this recording, or None."""
    if not isinstance(source, TensorLike):
        return f"it is a {type(source).__name__}, not a Tensor or Variable"
    if not source.dtype.is_differentiable:
        return (
            f"it has dtype {source.dtype.name}; gradients flow only through floating and complex "
            "values (tt.cast it to a float type before the tape uses it)"
        )
    for target in targets:
        if isinstance(target, TensorLike) and not target.dtype.is_differentiable:
            return f"the target has dtype {target.dtype.name}; only floating and complex values have gradients"
    source_node = rec.tracked_node(source)
    if source_node is None:
        return _unwatched(tape, rec, source)
    target_nodes = [rec.tracked_node(t) for t in targets if isinstance(t, TensorLike)]
    pruned = prune(rec.graph(), [source_node], [n for n in target_nodes if n is not None])
    if pruned.outputs:
        return None
    return _path_stops(rec, source_node, targets, target_nodes)


def _unwatched(tape, rec, source):
    from tracer.variable import Variable

    origin = getattr(source, "_origin", None)
    if origin is not None:
        name, location = origin
        return (
            f"it is a Tensor computed from the Variable {name!r} at {_at(location)} (outside the tape), "
            "not the Variable itself: the tape watches variables, so update it in place "
            "(x.assign_add(1) rather than x = x + 1)"
        )
    if isinstance(source, Variable):
        if not source.trainable:
            return "it is a Variable with trainable=False, which tapes do not watch; call tape.watch on it"
        if not tape._watch_accessed_variables:
            return (
                "the tape was made with watch_accessed_variables=False and this variable was never "
                "passed to tape.watch"
            )
        return (
            "this Variable was not read while the tape recorded, so the target cannot depend on it"
        )
    used = rec.events.first_untracked_use(source)
    if used is not None:
        return f"it is used at {_at(used)} inside the tape but was never watched: call tape.watch(x) first"
    return (
        "it was not used while the tape recorded: it, or what uses it, was computed outside the "
        "tape's context (or before tape.reset())"
    )


def _path_stops(rec, source_node, targets, target_nodes):
    """Why no recorded path joins the source to the targets, naming where it stops: the cut
    the target itself came through when it is known, else the first one the source reaches."""
    reached = {id(source_node)}
    for node in rec.nodes:
        if any(id(i) in reached for i in node.inputs):
            reached.add(id(node))
    for target in targets:
        cut = getattr(target, "_cut", None)
        if cut is not None and any(id(i) in reached for i in cut[2]):
            return _cut_reason(cut)
    for node, location, via in rec.events.numpy_exits:
        if id(node) not in reached:
            continue
        if via == "tt.constant":
            return (
                f"the path from it ends at {_at(location)}: tt.constant made a constant of the value "
                "there, as in TensorFlow; tt.convert_to_tensor or tt.stack keeps the gradient"
            )
        return (
            f"the path from it leaves tracer at {_at(location)}: the value went through numpy there "
            "and came back as a constant; use tracer ops instead"
        )
    for cut in rec.events.blocked:
        if any(id(i) in reached for i in cut[2]):
            return _cut_reason(cut)
    for inputs, location in rec.events.paused_uses:
        if any(id(i) in reached for i in inputs):
            return _cut_reason(("stop_recording", None, inputs, location))
    if all(n is None for n in target_nodes):
        return (
            "the target was not computed from anything the tape watched (it was computed outside the "
            "tape's context, or from values the tape does not watch)"
        )
    return "the target does not depend on it"


def _cut_reason(cut):
    op, dtype, _, location = cut
    if op == "stop_recording":
        return f"the path from it continues at {_at(location)} under tape.stop_recording(), which is not recorded"
    if op == "stop_gradient":
        return f"the path from it goes through tt.stop_gradient at {_at(location)}"
    if not dtype.is_differentiable:
        return (
            f"the path from it goes through {op} at {_at(location)}, whose result has dtype "
            f"{dtype.name}: gradients do not flow through integer or bool values"
        )
    return f"the path from it goes through {op} at {_at(location)}, which has no gradient"


def _at(location):
    return format_location(location) or "an unknown line"


def _name(source, position):
    name = getattr(source, "name", None)
    if isinstance(name, str):
        return name
    return (
        f"source {position} ({source.dtype.short_name}{list(source.shape)} tensor)"
        if isinstance(source, TensorLike)
        else f"source {position}"
    )
