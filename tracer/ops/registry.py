"""The op registry: every primitive is declared once, beside its public function, as an `OpDef`.

    SIN = primitive(
        "sin", shapes.unary_float, grad=_sin_grad, saves=(0,), fusion="elementwise",
        kernel=np.sin, c=forms.Expression(forms.libm("sin")),
    )

A declaration holds everything tracer knows about the op:

- `infer(attrs, *inputs) -> (shape, dtype)`: the shape and dtype rule; it raises ValueError
  or TypeError with a message for bad input.
- `grad(node, g, *saved) -> one cotangent or None per input`, written with tracer's own ops so
  that it can be differentiated again; None means no gradient flows through the op. `saves`
  says what the eager tape keeps for it: input positions and/or OUT (the op's own result),
  or ALL_INPUTS (ALL_INPUTS_AND_OUT). An op with several results (a `TupleType` node)
  gets `g` as a `tuple_ops.TupleCotangent`. `saved_for`, where given, names for each saved
  value the inputs whose cotangents read it: where all of those are Python numbers (`x *
  0.5` keeps no x: the 0.5 gets no cotangent), a tape keeps None in its place, and the
  rule gives those inputs None (`core._kept_for`).
- `narrow(node, used) -> node or None`: for an op with several results, the node without
  the results no `get` reads (`used`: the indices read); dead-code elimination asks.
- `resolve(node, simplified) -> [one node per result] or None`: for an op with several
  results, those results made of other nodes where the op needs no node of its own (a loop
  that runs once is its body); the simplification pass asks, and passes `simplified(node)`,
  its rules and folding, for the nodes the answer makes.
- `expand(node, tensors) -> Tensor, or core.Results of a node of several`: how the node runs
  on Tensors through the op path (`core.execute_graph`) instead of by its kernel: an op
  that runs the user's Python (a custom gradient's function) runs it there, so that the
  tapes recording see its ops.
- `decompose(node, tensors) -> Tensor`: the op written with other primitives, for an op that
  runs as one kernel eagerly but whose compiled code is that of its parts: the pipeline's
  first pass replaces its nodes with these (tracer/passes/decompose.py), so it needs no C
  form of its own.
- `jvp(node, tangents, inputs, out) -> the result's tangent`: the forward-mode rule, with
  tracer ops (`tangent_rules.py` has the common ones: LINEAR, DIAGONAL, PRODUCT, and
  TRANSPOSED_VJP for ops whose forward mode differentiates their gradient rule). Every op
  with a gradient rule has one.
- `fusion`: "elementwise", "view" or "reduction" for ops the fusion pass folds into loops;
  `needs_stored_input(node)` for a view that can only read a stored (contiguous) input.
- `batch(node, args, flags, size)`: the batching rule of vectorized jacobians (elementwise
  ops without one get `batching.elementwise`).
- `simplify`: rewrites of nodes of this op (each `node -> new node or None`).
- `kernel(*arrays, **attrs)`: the numpy kernel, registered in `runtime.kernels.KERNELS`;
  `infix`: the Python operator straight-line code may use for floating inputs.
- `c`: the C form (`codegen.forms`), registered in `codegen.forms.C_FORMS`.
- `strings=True`: the op takes tt.string tensors (`STRING_OPS`); every other op refuses
  them with a TypeError naming the op (tracer.ops.core). In a compiled module, such an op
  runs its kernel in Python on the strings, unless codegen/string_handles.py lists it
  among the ops that only move elements (`MOVES`), which move handles in C.

The layer tables stay in their layers (runtime/ and codegen/ import nothing of tracer's
front end); only the declaration writes to them. `missing_pieces` names what a declaration
lacks; tests/test_registry.py runs it over the catalogue.
"""

from codegen.forms import C_FORMS, Expression, Form, Generator, Pieces, Reduction, View
from runtime.kernels import FLOATING_INFIX, FLOATING_KERNELS, INFIX_OPERATORS, KERNELS

OUT = "out"
ALL_INPUTS = "all inputs"  # `saves` for ops with any number of inputs that keep them all
ALL_INPUTS_AND_OUT = "all inputs and out"  # ... and their own result (a while loop's)
# the fusion kinds, and the C forms each takes: fused loops compute such ops inside them
FUSION_FORMS = {
    None: (Form,),
    "elementwise": (Expression, Generator),
    "view": (View, Pieces),
    "reduction": (Reduction,),
}
FUSION_KINDS = tuple(FUSION_FORMS)

OPS = {}
STRING_OPS = set()  # the names of the ops that take tt.string tensors


def saved_slots(op, node):
    """What `op` keeps for `node`: input positions and OUT, in the order its rule takes them."""
    if op.saves == ALL_INPUTS:
        return tuple(range(len(node.inputs)))
    if op.saves == ALL_INPUTS_AND_OUT:
        return (*range(len(node.inputs)), OUT)
    return op.saves


class OpDef:
    # NOTE: the C op path (fast_apply.c) reads `name`, `grad`, `saves` and `saved_for` by
    # slot offset.
    __slots__ = (
        "name",
        "infer",
        "grad",
        "saves",
        "saved_for",
        "jvp",
        "fusion",
        "needs_stored_input",
        "batch",
        "simplify",
        "narrow",
        "expand",
        "decompose",
        "resolve",
    )

    def __init__(
        self,
        name,
        infer,
        grad,
        saves,
        jvp,
        fusion,
        needs_stored_input,
        batch,
        simplify,
        narrow=None,
        expand=None,
        decompose=None,
        resolve=None,
        saved_for=None,
    ):
        self.name = name
        self.infer = infer
        self.grad = grad
        self.saves = saves
        self.saved_for = saved_for
        self.jvp = jvp
        self.fusion = fusion
        self.needs_stored_input = needs_stored_input
        self.batch = batch
        self.simplify = simplify
        self.narrow = narrow
        self.expand = expand
        self.decompose = decompose
        self.resolve = resolve

    @property
    def elementwise(self):
        return self.fusion == "elementwise"

    def __repr__(self):
        return f"<OpDef {self.name}>"


def primitive(
    name,
    infer,
    *,
    kernel=None,
    c=None,
    grad=None,
    saves=(),
    saved_for=None,
    jvp=None,
    fusion=None,
    needs_stored_input=None,
    batch=None,
    simplify=(),
    infix=None,
    narrow=None,
    expand=None,
    decompose=None,
    resolve=None,
    strings=False,
):
    """Declare primitive `name` and register its kernel and C form; returns its OpDef.

    A declaration that lacks a piece (`missing_pieces`) raises ValueError naming the op and
    what it lacks, at import.
    """
    if name in OPS:
        raise ValueError(f"op {name!r} is declared twice")
    if fusion not in FUSION_KINDS:
        raise ValueError(f"op {name!r}: fusion must be one of {FUSION_KINDS}, not {fusion!r}")
    if c is not None and not isinstance(c, Form):
        raise TypeError(f"op {name!r}: its C form must be a codegen.forms form, not {c!r}")
    saves = saves if saves in (ALL_INPUTS, ALL_INPUTS_AND_OUT) else tuple(saves)
    if saved_for is not None:
        saved_for = tuple(tuple(int(position) for position in inputs) for inputs in saved_for)
        if not isinstance(saves, tuple) or len(saved_for) != len(saves):
            raise ValueError(f"op {name!r}: saved_for needs one entry per saved value")
    rules = simplify if isinstance(simplify, tuple) else (simplify,)
    op = OpDef(
        name,
        infer,
        grad,
        saves,
        jvp,
        fusion,
        needs_stored_input,
        batch,
        rules,
        narrow,
        expand,
        decompose,
        resolve,
        saved_for,
    )
    if infix is not None and infix not in INFIX_OPERATORS:
        raise ValueError(
            f"op {name!r}: infix must be one of {tuple(INFIX_OPERATORS)}, not {infix!r}"
        )
    tables = [
        (OPS, op),
        (KERNELS, kernel),
        (C_FORMS, c),
        (FLOATING_INFIX, infix),
        (FLOATING_KERNELS, INFIX_OPERATORS.get(infix)),
    ]
    for table, entry in tables:
        if entry is not None:
            table[name] = entry
    missing = missing_pieces(op)
    if missing:
        for table, _ in tables:
            table.pop(name, None)
        raise ValueError(f"op {name!r} is declared without {' or '.join(missing)}")
    if strings:
        STRING_OPS.add(name)
    return op


class NotVectorizable(Exception):
    """An op cannot be batched (here, or with these inputs); the caller loops instead."""


def unbatchable(reason):
    """The batching rule of an op that is never batched; `reason` says why (raised if asked)."""

    def rule(node, args, flags, size):
        raise NotVectorizable(f"{node.op} {reason}")

    return rule


def missing_pieces(op):
    """What the declaration of `op` lacks, as words ([] when it is whole)."""
    missing = []
    if not callable(KERNELS.get(op.name)):
        missing.append("a numpy kernel (kernel=)")
    forms = FUSION_FORMS[op.fusion]
    if op.decompose is None and not isinstance(C_FORMS.get(op.name), forms):
        kinds = " or ".join(f"forms.{form.__name__}" for form in forms)
        missing.append(f"a C form (c={kinds})" if op.fusion else "a C form (c=)")
    if op.batch is None and not op.elementwise:
        missing.append("a batching rule (batch=)")
    if op.grad is None and op.saves:
        missing.append("a gradient rule for the values it saves (grad=)")
    if op.grad is not None and op.jvp is None:
        missing.append("a forward-mode rule (jvp=; tangent_rules.py has the common ones)")
    return missing
