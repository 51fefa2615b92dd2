"""The op registry: every primitive is declared once, here, as an `OpDef`.

An OpDef names the op, gives its shape-and-dtype rule (`infer(attrs, *inputs) -> (shape,
dtype)`, raising ValueError/TypeError with a message for bad input), its gradient rule
(`grad(node, g, *saved) -> one cotangent or None per input`, written with tracer's own ops so
that it can be differentiated again), and what the eager tape must keep for that rule
(`saves`: input positions, and/or OUT for the op's own result; or ALL_INPUTS). The numpy kernel lives in
`runtime.kernels` under the same name.
"""

OUT = "out"
ALL_INPUTS = "all inputs"  # `saves` for ops with any number of inputs that keep them all

OPS = {}


def saved_slots(op, node):
    """What `op` keeps for `node`: input positions and OUT, in the order its rule takes them."""
    return tuple(range(len(node.inputs))) if op.saves == ALL_INPUTS else op.saves


class OpDef:
    __slots__ = ("name", "infer", "grad", "saves", "elementwise")

    def __init__(self, name, infer, grad, saves, elementwise):
        self.name = name
        self.infer = infer
        self.grad = grad
        self.saves = saves
        self.elementwise = elementwise

    def __repr__(self):
        return f"<OpDef {self.name}>"


def primitive(name, infer, grad=None, saves=(), elementwise=False):
    """Declare primitive `name`; `grad=None` means no gradient flows through it."""
    if name in OPS:
        raise ValueError(f"op {name!r} is declared twice")
    OPS[name] = OpDef(
        name, infer, grad, saves if saves == ALL_INPUTS else tuple(saves), elementwise
    )
    return OPS[name]
