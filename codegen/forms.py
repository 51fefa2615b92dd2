"""How the code generator writes each primitive: its C form, one per op, in `C_FORMS`.

The forms are declared by each op's record (in `tracer/ops/`, beside the op), which registers
them here under the op's name; this layer reads nodes through their public attributes only.
`C_FORMS` is the default table of both C targets (the C module and exported C,
codegen/targets.py): `target.form_for(op)` gives a form registered for one target alone
where there is one, and this table's otherwise.

    Expression   an elementwise op: a C expression of its operands' values, and the prologue
                 helpers it calls (each written into a module only where it is used)
    Generator    an op whose elements are a function of their index alone (a jacobian's
                 seeds): computed inside the loops that read them, never stored
    View         a data-movement op fused loops read through: its input at a remapped index
    Pieces       a concat: a kernel of its own, or, fused, its inputs read where each lies
    Reduction    the accumulation that ends a fused loop nest
    Template     a C function of its own, from a template in `templates/`
    LoopNests    a C function of its own, made of loop nests (`templates/loops.c.j2`)
    FusedBody    a fused node: its body as one loop nest
    Structured   an op holding graphs (a branch, a loop): C statements around their code
    Projection   `get`, one result of a node of several: stored by that node's code
    HostCall     an op the module hands back to Python (a collective between processes)
    NotCompiled  an op whose nodes never reach the code generator, and why
"""

import string

from codegen.ctypes import MATH_SUFFIX, compute

C_FORMS = {}


class Form:
    """What every form answers: whether the module links the BLAS, and the prologue helpers
    it calls, in their versions for the dtype of input `operand` (or of the node itself when
    it has no inputs)."""

    uses_blas = False
    helpers = ()
    operand = 0

    def helper_definitions(self, node, vector_math):
        """[(key, C text)] of the helpers a node of this form calls."""
        dtype = node.inputs[self.operand].dtype if node.inputs else node.dtype
        return [item for h in self.helpers for item in h.definitions(dtype, vector_math)]


class Expression(Form):
    """`render(t, out, *operands) -> C expression`, with `t` the dtype of input `operand` (the
    first by default; `select` computes in its second input's type) and `out` the result's.
    A `guard` makes the kernel stop with an error where its condition holds. `costly` says it
    calls a math library function (tens of cycles, where arithmetic takes one): fusion
    stores such a value once rather than recompute it where it is cheap to keep."""

    def __init__(self, render, helpers=(), operand=0, guard=None, costly=False):
        self.render = render
        self.helpers = tuple(helpers)
        self.operand = operand
        self.guard = guard
        self.costly = costly


class Guard:
    """`condition(t, out, *operands) -> C condition` under which an element is an error (None
    when the types cannot err), the exception class the caller raises, and its message."""

    def __init__(self, condition, exception, message):
        self.condition = condition
        self.exception = exception
        self.message = message


class Generator(Form):
    """`render(node, index_map) -> C expression` of the element at `index_map` (Affine maps
    of the loop indices, one per axis of the node)."""

    def __init__(self, render):
        self.render = render


class View(Form):
    """`index_map(node, out_map) -> the input's index map`. With `flat_when_stored`, a stored
    (contiguous) input is read at the flat offset of the view's own index instead: a reshape.
    `block_offset(node)`, where given, is the element offset at which the view's result
    starts when it is one contiguous block of a stored input (x[3], x[2:5] of a row-major
    x), else None: such a view is a pointer into its input's buffer."""

    def __init__(self, index_map, flat_when_stored=False, block_offset=None):
        self.index_map = index_map
        self.flat_when_stored = flat_when_stored
        self.block_offset = block_offset


class Reduction(Form):
    """`step` accumulates `{value}` into `{acc}` (C text with those two names); `init(dtype)` is
    the first value; `wide` accumulates float32 and float16 in double; `simd` is the OpenMP
    reduction clause of `{acc}` under which the loop may be reassociated ('' keeps it in
    order). `rechecked`, where given, is the step of the reassociated loop, whose value is
    the ordered loop's unless it is a zero (or infinite) or a NaN was met (max and min: the
    first of tied zeros, and the first NaN, win), so a floating loop run reassociated runs
    again in order, with `step`, where that happened (codegen/loops.py's `_reduction_nest`):
    its own step need not order NaNs (min's one comparison, a vector min of one instruction,
    not `step`'s three); an integer one needs no rerun, and a bool one, or one sharing its
    loop with other reductions, stays in order."""

    def __init__(self, step, init, wide=False, simd="", helpers=(), rechecked=None):
        self.step = step
        self.init = init
        self.wide = wide
        self.simd = simd
        self.helpers = tuple(helpers)
        self.rechecked = rechecked


class Template(Form):
    """`context(node, blas) -> the template's values` (besides `name` and `comment`). With
    `error(node) -> (exception class, message)`, the template's function returns `error`
    (a value it is given) when its input is bad, 0 otherwise."""

    def __init__(self, template, context, error=None, uses_blas=False):
        self.template = template
        self.context = context
        self.error = error
        self.uses_blas = uses_blas

    def template_for(self, node):
        """The template that writes `node`'s kernel."""
        return self.template


class LoopNests(Form):
    """`nests(node) -> ([(C type, parameter name)], [codegen.loops.Nest])`.

    `holds(node) -> {input position: element offset}` names the inputs that the result
    holds whole, as one contiguous run of its elements from that offset (a concat's parts):
    the lowering may compute such an input straight into the result's storage
    (codegen/placement.py), and then asks `nests(node, placed)` for the code without the
    parameters and the copies of the inputs at the positions `placed`."""

    def __init__(self, nests, helpers=(), holds=None):
        self.nests = nests
        self.helpers = tuple(helpers)
        self.holds = holds


class Pieces(LoopNests):
    """An op whose result is its inputs side by side along one axis (a concat): a kernel of
    its own where it is stored (LoopNests), and inside a fused kernel's loops, each input
    read where its range is (`pieces(node) -> (axis, [(start, stop) of each input])`): the
    loops are cut where the range read changes, so that each part of them reads one input
    (codegen/loops.py)."""

    def __init__(self, nests, pieces, holds=None):
        super().__init__(nests, holds=holds)
        self.pieces = pieces


class FusedBody(Form):
    """A fused node's body graph, written as one loop nest (codegen.loops.fused_loop_nest)."""


class Structured(Form):
    """An op holding graphs it runs (a branch, a loop): C statements in the entry point, not
    a kernel. `emit(node, site) -> C statements`, written with what `site` (a
    codegen.lower.StructuredSite) offers: the pointers of the node's inputs and results,
    scratch storage, and the statements of a held graph run on given pointers.

    `carried(node) -> {attribute: [(output, input), ...]}` names, for a held graph, the
    outputs that the op copies back to the storage of one of its inputs after each run (a
    loop's next variables): the lowering writes such an output straight into that storage
    where that is safe, and the copy is then of a value onto itself, which `emit` skips."""

    def __init__(self, emit, carried=None):
        self.emit = emit
        self.carried = carried or (lambda node: {})


class Projection(Form):
    """`get`: one result of a node of several. It is no code of its own: the code of that
    node writes the result where the `get` node's readers find it."""


class HostCall(Form):
    """An op the compiled module hands back to Python: `function(node) -> (name, options)`
    names a function registered in `runtime.host.HOST_FUNCTIONS`. The module calls it
    (through a C function pointer the caller passes) on the node's input and its result's
    buffer, which it updates in place; with `reads_all`, on every input of the node (each of
    a size known when compiled), to write the result. Exported C, which has no Python,
    refuses such ops."""

    def __init__(self, function, reads_all=False):
        self.function = function
        self.reads_all = reads_all


# the node of a step that a module hands back to Python for another op, on tt.string values
# (codegen/string_handles.py makes it; the op it stands for is its attribute `hosted_op`)
HOSTED = "strings_on_host"


def shown_op(node):
    """The op a step's C comment and its profile name: a hosted step names the op it stands
    for. Only that node's attribute, and only an op's name: any other node's attributes come
    from the user's graph, or from a file (a SavedModel), and must not reach the C."""
    hosted = node.attrs.get("hosted_op") if node.op == HOSTED else None
    return f"{hosted} (in Python)" if isinstance(hosted, str) and hosted.isidentifier() else node.op


class NotCompiled(Form):
    def __init__(self, reason):
        self.reason = reason


LOOP_FORMS = (
    Expression,
    Generator,
    View,
    Reduction,
    FusedBody,
)  # what codegen.loops writes as a loop nest


INLINE = "static inline"  # how a helper function's text starts


class Helper:
    """C text the module prologue holds, in one version per type it is used with: a helper
    function (`tr_maximum_f32`), or a declaration.

    Each text is a `string.Template` for one class of types ('float', 'integer', 'complex',
    'bool'),
    with $T the C type values are computed in, $f libm's suffix for it (`f` or nothing) and
    $tag the type's tag in helper names. A class without a text does not use the helper.
    `requires` lists helpers this one calls; `typed=False` gives one version for every type;
    `vector_math_only` keeps it out of modules built without glibc's vector math.
    """

    def __init__(
        self,
        name,
        float=None,
        integer=None,
        complex=None,
        boolean=None,
        requires=(),
        typed=True,
        vector_math_only=False,
    ):
        self.name = name
        self.texts = {
            kind: string.Template(text)
            for kind, text in (
                ("float", float),
                ("integer", integer),
                ("complex", complex),
                ("bool", boolean),
            )
            if text
        }
        self.requires = tuple(requires)
        self.typed = typed
        self.vector_math_only = vector_math_only

    def call(self, dtype, *args):
        """The C call of this helper's version for `dtype`."""
        return f"tr_{self.name}_{tag(dtype)}({', '.join(args)})"

    def definitions(self, dtype, vector_math=True):
        """[(key, C text)] for `dtype`: what it requires first, then itself."""
        kind = type_class(dtype)
        if kind not in self.texts or (self.vector_math_only and not vector_math):
            return []
        found = [item for h in self.requires for item in h.definitions(dtype, vector_math)]
        ctype = compute(dtype)
        text = self.texts[kind].substitute(T=ctype, f=MATH_SUFFIX.get(ctype, ""), tag=tag(dtype))
        if text.startswith(INLINE):  # inlined into every kernel (TR_INLINE, the prologue's)
            text = f"{INLINE} TR_INLINE{text[len(INLINE) :]}"
        key = (self.name, tag(dtype)) if self.typed else (self.name,)
        return [*found, (key, text)]


def vector_declaration(name, arity=1):
    """The declaration that lets loops calling libm's real `name` vectorize (glibc's libmvec
    has vector versions of it): `#pragma omp declare simd` on `float namef(float)`.

    It also says the function is `const` (its result depends on its arguments only, as
    -fno-math-errno makes libm's): the build's -fno-builtin-sin/cos hide that from GCC, which
    then would not if-convert a loop with a select around such a call (sigmoid, softplus,
    where) and left it scalar."""
    parameters = ", ".join(["$T"] * arity)
    return Helper(
        f"simd_{name}",
        float=f"#pragma omp declare simd notinbranch\n__attribute__((const)) $T {name}$f({parameters});",
        vector_math_only=True,
    )


def helper_call(helper):
    """An Expression render for ops that are one call of `helper`: tr_<name>_<tag>(args)."""
    return lambda t, out, *args: helper.call(t, *args)


def libm(name, vectorized=False, costly=True):
    """The Expression of an op that is libm's `name` (sinf, sin, csinf, csin by type); with
    `vectorized`, loops of it vectorize through glibc's libmvec. sqrt is one instruction,
    not `costly`."""

    def render(t, out, x):
        function = f"c{name}" if t.is_complex else name
        return f"{function}{MATH_SUFFIX[compute(t)]}({x})"

    helpers = (vector_declaration(name),) if vectorized else ()
    return Expression(render, helpers=helpers, costly=costly)


def type_class(dtype):
    if dtype.is_complex:
        return "complex"
    if dtype.is_floating:
        return "float"
    return "integer" if dtype.is_integer else "bool"


def tag(dtype):
    """The type tag in helper names; float16 computes in float, so it shares float32's."""
    return {"float16": "f32", "complex64": "c64", "complex128": "c128"}.get(
        dtype.name, dtype.short_name
    )
