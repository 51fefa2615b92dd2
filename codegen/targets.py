"""Targets: what turns an optimized graph into running code, one object each.

    INTERPRETER   the numpy interpreter (runtime/): an op's form is its numpy kernel
    C_MODULE      C compiled and loaded into this process (codegen/compile.py)
    EXPORTED_C    standalone C files for a program of the user's (codegen/export.py)
    PROFILED_C    the C module with each step timed, for the profiler (codegen/probes.py)

A target owns the form of each op (`form_for`), the cost hints the fusion pass reads
(`cost_hints`), its buffer planner (`plan_buffers`) and its emitter (`emit`), so that the
pass pipeline and the code generators ask a target instead of assuming C. The planner and
the emitter live in the target's home module (codegen/lower.py with codegen/compile.py,
codegen/export.py, codegen/interpreted.py), which registers them.

An op's record registers its forms beside the op (tracer/ops/registry.py): its `kernel=`
fills the interpreter's default table, its `c=` the default table of both C targets
(`codegen.forms.C_FORMS`). A form for one target alone goes in with `register_form`, and wins
there over the default. docs/adding-a-target.md is the recipe for a new target.

    >>> C_MODULE.form_for("sin").costly
    True
"""

import importlib

from codegen.forms import C_FORMS
from runtime.kernels import KERNELS


class CostHints:
    """What the fusion pass (tracer/passes/fuse.py) asks about the code of a node, answered
    from the forms of `target`: whether a value is costly to recompute, whether a view is a
    pointer into its input, whether a reduction may be reassociated, whether a kernel checks
    its elements."""

    def __init__(self, target):
        self._target = target

    def is_costly(self, node):
        """Whether computing the node calls the math library: fusion stores such a value
        rather than recompute it in several kernels."""
        return getattr(self._target.form_for(node.op), "costly", False)

    def block_offset(self, node):
        """The element offset at which a view's result starts in its input, when it is one
        contiguous block of it (x[3] of a row-major x), else None."""
        offset = getattr(self._target.form_for(node.op), "block_offset", None)
        return None if offset is None else offset(node)

    def reassociates(self, reduction):
        """Whether the reduction's loop may add its values up in any order (vectorized and
        shared by threads): a max or min of floating values or integers too, run again in
        order where the order decides (`reruns_in_order`), not one of bools."""
        form = self._target.form_for(reduction.op)
        return bool(form.simd) and not (form.rechecked and reduction.dtype.is_bool)

    def reruns_in_order(self, reduction):
        """Whether the reduction's loop, run reassociated, may run again in order (a max or
        min of floating values: forms.Reduction.rechecked): it needs a loop of its own, with
        no other reduction whose sum would then be taken in another order."""
        return self._target.form_for(reduction.op).rechecked and reduction.dtype.is_floating

    def products_in_rows(self):
        """Whether a loop kernel may compute a product it reads, a block of rows at a time
        (tracer/passes/row_products.py): the C module's may; exported C, whose loops have
        no buffers of their own, may not."""
        return self._target.computes_products_in_rows

    def may_fail(self, node):
        """Whether the node's code checks its elements (an integer pow's negative exponent):
        such a loop runs in order on one thread."""
        form = self._target.form_for(node.op)
        guard = getattr(form, "guard", None)
        if guard is None:
            return False
        typed = node.inputs[form.operand].dtype
        return guard.condition(typed, node.dtype, *("x" for _ in node.inputs)) is not None


class Target:
    """One kind of code tracer emits.

    `defaults` is the table (op name -> form) the op records fill for it. Its planner
    (`plan_buffers`: where the values of a graph live) and its emitter (`emit`, with a
    signature of its own: see each instance) are implemented in its `home` module, which
    registers them (`implement`) when imported, as the op records register their forms: so
    this module imports none of the code generators, which import it. `hints_from` names the
    target whose forms the fusion pass reads for this one (itself by default).
    `builds_modules` says whether it builds code the cache keeps (a plan stored for a later
    process, `codegen.plans`); `computes_products_in_rows` whether its loop kernels may
    compute the product they read (CostHints.products_in_rows).
    """

    def __init__(
        self, name, defaults, home, hints_from=None, builds_modules=True, products_in_rows=True
    ):
        self.name = name
        self.computes_products_in_rows = products_in_rows
        self.defaults = defaults
        self.home = home
        self.forms = {}  # op name -> a form registered for this target alone
        self.cost_hints = CostHints(hints_from or self)
        self.builds_modules = builds_modules
        self._emitter = self._planner = None

    def implement(self, emitter=None, planner=None):
        """Register the target's emitter or buffer planner (its home module does)."""
        self._emitter = emitter or self._emitter
        self._planner = planner or self._planner

    def emit(self, *args, **kwargs):
        """The target's code for a graph (or, exported, for entries): see each instance."""
        self._load()
        return self._emitter(*args, **kwargs)

    def plan_buffers(self, graph, updates=None):
        """Where the values of `graph` live when it is one entry point of this target;
        `updates` maps an output position to the input it is the new value of. None for a
        target that plans none (the interpreter: numpy allocates each value)."""
        self._load()
        return None if self._planner is None else self._planner(graph, updates, target=self)

    def _load(self):
        if self._emitter is None:
            importlib.import_module(self.home)

    def form_for(self, record):
        """The form of an op (its record, or its name) on this target: the one registered
        for the target alone, else its default; None when it has neither."""
        name = record if isinstance(record, str) else record.name
        form = self.forms.get(name)
        return form if form is not None else self.defaults.get(name)

    def register_form(self, record, form):
        """Make `form` the form of an op (its record, or its name) on this target alone."""
        name = record if isinstance(record, str) else record.name
        if name in self.forms:
            raise ValueError(f"op {name!r} has a form for target {self.name!r} already")
        self.forms[name] = form

    def __repr__(self):
        return f"<Target {self.name}>"


# emit(graph, name, updates=None, plan_key=None) -> runtime.compiled.CompiledGraph; raises
# codegen.errors.BuildFailure where the module cannot be built
C_MODULE = Target("c", C_FORMS, home="codegen.compile")
# emit(prefix, entries, native=False, origin="") -> {file name: text}
EXPORTED_C = Target("exported C", C_FORMS, home="codegen.export", products_in_rows=False)
# emit(graph, name, updates=None, plan_key=None) -> a CompiledGraph with `probes`; its forms
# are the C module's, and fusion reads the C module's hints, so that a profile times the very
# graph the C module runs
PROFILED_C = Target("profiled C", C_FORMS, home="codegen.compile", hints_from=C_MODULE)
# emit(graph, name, updates=None, plan_key=None) -> an executable (lists of arrays in, out).
# NOTE: it fuses as the C module does, so that the oracle runs the very graph the C module
# compiles (tests/test_backends.py holds the two to the same values)
INTERPRETER = Target(
    "interpreter", KERNELS, home="codegen.interpreted", hints_from=C_MODULE, builds_modules=False
)

TARGETS = (INTERPRETER, C_MODULE, EXPORTED_C, PROFILED_C)
