"""Convolution and pooling in a compiled module through the kernels installed with tracer.

A CNN's patch products (tracer/ops/patch_product_ops.py), depthwise convolutions
(tracer/ops/depthwise_ops.py) and max pooling's window kernels (tracer/ops/window_ops.py),
each specialised to its geometry, were most of the C compiler's time on its first call. runtime/conv_kernels.c holds the same loops for any geometry, built
once, when tracer is installed, and gives the same bits (the same sums in the same order).
A module of the C target calls them through their table, so its first call waits for far
less C; but the specialised kernels run faster, so tracer/executables.py builds the module
again with its own (`own_kernels`) in a thread, and swaps it in: the values do not change
when it does. The plan stored for later processes is the second module's.

Since that first module is built again anyway, the table serves the rest of a CNN's step where
it can too (`array_kernel`): the zero padding of a SAME convolution's gradient, relu's
gradient and a bias's gradient (a sum over the leading axes), which were most of the compiler's
time left on the first call. Only such a module calls them (`serves_convolutions`): any other
would be built twice for a kernel or two.

A matrix product that codegen/blocked_products.py gives the table's `blocked_products` (mid
sizes, and batches of smaller ones), and a triangular solve it gives `blocked_solves`, call
them in every module that has the table, the profiled one too, never replaced by a template:
eager kernels compute them with those kernels, and no template gives their bits.

The profiled target and exported C, which runs without tracer, keep the templates of the
convolutions, and exported C those of the products and solves, as does every module where
the table is missing or serves no such node: another dtype than float32 and float64, a
product's activation other than relu, a window gather other than max pooling, more channels
than the table's kernels take."""

import contextlib
import functools
import math
import threading

from codegen import blocked_products, forms
from codegen.ctypes import storage
from codegen.targets import C_MODULE, PROFILED_C
from runtime import installed_kernels
from tracer.ir.literal import Literal

_lowering = threading.local()  # .own: the module being lowered in this thread writes its own


@contextlib.contextmanager
def own_kernels():
    """Lower the modules of this thread with kernels of their own while in the block."""
    _lowering.own = True
    try:
        yield
    finally:
        _lowering.own = False


@functools.cache
def available():
    """Whether the installed kernels' table can be used in this process."""
    return installed_kernels.address() != 0


def _image(node, image, height, width):
    """The geometry's image and window part, or None where the table takes no such image."""
    return image_geometry(image.shape, height, width, node.attrs)


def image_geometry(shape, height, width, attrs):
    """The geometry's image and window part for an image of `shape` (N, ., ., C) read as
    `height` x `width` through the windows of `attrs` (tracer/ops/window_ops.py), or None
    where the table takes no such image."""
    channels = shape[3]
    if not isinstance(channels, int) or channels > installed_kernels.MOST_CHANNELS:
        return None
    return [shape[0], height, width, channels, *attrs["kernel"], *attrs["strides"]] + [
        *attrs["dilations"],
        *attrs["before"],
        *attrs["out"],
    ]


def window_geometry(shape, attrs):
    """The geometry of max pooling's gather or scatter on an image of `shape`, or None."""
    image = image_geometry(shape, *attrs["sizes"], attrs)
    return None if image is None else image + [0, 1, 0]


def _product(node):
    activation = node.attrs.get("activation")
    if activation not in (None, "relu"):
        return None
    x = node.inputs[0]
    image = _image(node, x, x.shape[1], x.shape[2])
    if image is None:
        return None
    params, arguments = _with_epilogue(node, ["x", "w"], ["bias", "gate"])
    return image + [node.shape[-1], 1, int(activation == "relu")], params, arguments


def _with_epilogue(node, operands, epilogue):
    """(the kernel's parameters, the call's arguments) of a node whose operands are named
    `operands`, and the inputs of its epilogue (tracer/ops/conv_epilogues.py) among those
    named `epilogue` (the table's kernel takes each, NULL where the node has none): the
    bias, then the gate where the attribute `gated` is set."""
    gated = bool(node.attrs.get("gated"))
    present = {"bias": len(node.inputs) - len(operands) - gated > 0, "gate": gated}
    params = operands + [name for name in epilogue if present[name]]
    arguments = operands + [name if present[name] else "NULL" for name in epilogue]
    return params, arguments + ["out"]


def _weights(node):
    x = node.inputs[0]
    image = _image(node, x, x.shape[1], x.shape[2])
    if image is None:
        return None
    return image + [node.shape[-1], node.attrs["chunks"], 0], ["x", "g"], ["x", "g", "out"]


def _window(inputs, arguments):
    def geometry(node):
        if inputs == ["x", "v"] and node.inputs[0] is not node.inputs[1]:
            return None  # a gather of another tensor's values than the image's maxima
        geometry = window_geometry(node.inputs[0].shape, node.attrs)
        return None if geometry is None else (geometry, inputs, arguments)

    return geometry


class _InstalledOrTemplate(forms.Template):
    """An op's template form, whose kernel calls the installed one (`kind`) where the table
    serves the node (`geometry(node)`: the geometry's values, the kernel's parameters and the
    call's arguments, or None). Where `own` (a convolution's or pooling's kernels), a module
    built with kernels of its own (`own_kernels`) writes the template instead; else (the
    blocked products, which no template of the module's matches bit for bit) both call it."""

    error = None

    def __init__(self, op, kind, geometry, own=True, run_time=None, parts=None):
        # (Template's own __init__ would set `context`)
        self.op = op
        self.kind = kind
        self.geometry = geometry
        self.own = own
        self.run_time = run_time  # a product's rule for sizes known when it runs: `_chosen`
        # where the table serves nothing else, the template's calls of the BLAS in parts on
        # the threads made by the table's kernel that makes the same ones: `parts(node,
        # context)` gives the context's changes (`_gemm_parts`, `_solve_parts`)
        self.parts = parts

    @property
    def default(self):
        """The op's own form (looked up when used: the op's module may load after this)."""
        return forms.C_FORMS[self.op]

    @property
    def template(self):
        return self.default.template

    @property
    def uses_blas(self):
        return self.default.uses_blas

    def _served(self, node):
        suffix = installed_kernels.suffix(node.dtype)
        if suffix is None or (self.own and getattr(_lowering, "own", False)) or not available():
            return None
        found = self.geometry(node)
        return None if found is None else (f"{self.kind}_{suffix}", *found)

    def _chosen(self, node):
        """Where the node's sizes are known only when the module runs and some of them could be
        the table's (`run_time(node)`: the C condition and geometry), the kernel that calls
        the table's for those and the op's own for the others: (its kernel's name, the
        condition, the geometry); else None."""
        suffix = installed_kernels.suffix(node.dtype)
        if self.run_time is None or suffix is None or not available():
            return None
        found = self.run_time(node)
        return None if found is None else (f"{self.kind}_{suffix}", *found)

    def template_for(self, node):
        if self._served(node):
            return "installed_kernel.c.j2"
        return "blocked_product_at_run_time.c.j2" if self._chosen(node) else self.default.template

    def _in_parts(self, node):
        """Whether the table's kernel makes the node's calls of the BLAS (`parts`)."""
        return self.parts is not None and installed_kernels.suffix(node.dtype) and available()

    def context(self, node, blas):
        served = self._served(node)
        if served is not None:
            return _call_context(node, *served)
        context = self.default.context(node, blas)
        if self._in_parts(node):
            context.update(self.parts(node, context))
        chosen = self._chosen(node)
        if chosen is not None:
            kernel, condition, geometry = chosen
            context.update(
                own_template=self.default.template,
                kernel=kernel,
                variable=installed_kernels.VARIABLE,
                index=installed_kernels.KERNELS.index(kernel),
                condition=condition,
                geometry=geometry,
            )
        return context

    def helper_definitions(self, node, vector_math):
        if self._served(node):
            return [("installed kernels", installed_kernels.DECLARATION)]
        own = self.default.helper_definitions(node, vector_math)
        if self._chosen(node) or self._in_parts(node):
            return [("installed kernels", installed_kernels.DECLARATION), *own]
        return own


def _call_context(node, kernel, geometry, params, arguments):
    """installed_kernel.c.j2's values for a kernel of `node` that calls the table's `kernel`
    with `geometry`, taking `params` (the names of its inputs) and passing `arguments`."""
    T = storage(node.dtype)
    types = [f"{T} *" if a == "out" else f"const {T} *" for a in arguments]
    return dict(
        kernel=kernel,
        variable=installed_kernels.VARIABLE,
        index=installed_kernels.KERNELS.index(kernel),
        geometry=[str(value) for value in geometry],
        params=[f"const {T} *restrict {p}" for p in params] + [f"{T} *restrict out"],
        unused=[p for p in params if p not in arguments],
        function_type=f"void (*)(const int64_t *, {', '.join(types)})",
        arguments=["geometry", *arguments],
    )


def serves_convolutions(nodes, target):
    """Whether the module of `nodes` on `target` calls a convolution or pooling kernel of
    the table: it is then built again with its own (tracer/executables.py), and the table's
    `array_kernel`s serve it too."""
    for node in nodes:
        form = target.form_for(node.op)
        if isinstance(form, _InstalledOrTemplate) and form.own and form._served(node):
            return True
    return False


def array_kernel(node):
    """installed_kernel.c.j2's values for the kernel of `node`, where the table's padding,
    relu gradient or sum over leading axes computes it (runtime/array_kernels_typed.h): a
    pad with +0, relu_grad(x, y) or select(x > 0, y, 0) of one shape, or a reduce_sum over
    the leading axes; float32 or float64, every size known. None otherwise."""
    suffix = installed_kernels.suffix(node.dtype)
    if suffix is None or not _known(node.shape) or not all(_known(i.shape) for i in node.inputs):
        return None
    for kind, geometry in _ARRAY_KINDS.get(node.op, ()):
        found = geometry(node)
        if found is not None:
            return _call_context(node, f"{kind}_{suffix}", *found)
    return None


def _known(shape):
    return all(isinstance(d, int) and d > 0 for d in shape)


def _positive_zero(value):
    return not isinstance(value, bool) and value == 0 and math.copysign(1.0, float(value)) > 0


def _pad(node):
    (x,) = node.inputs
    paddings = node.attrs["paddings"]
    if node.attrs["mode"] != "CONSTANT" or not _positive_zero(node.attrs.get("value", 0)):
        return None
    if len(x.shape) > installed_kernels.MOST_RANK or x.dtype != node.dtype:
        return None
    geometry = [len(x.shape), *x.shape, *(before for before, _ in paddings), *node.shape]
    return geometry, ["p0"], ["p0", "out"]


def _relu_gradient(node):
    """relu_grad(x, y), or select(x > 0, y, 0), x and y inputs of the node's shape (read
    through reshapes)."""
    body = node.attrs["kernel"].body
    ops = {n.op for n in body.nodes} - {"input", "const", "reshape"}
    root = body.outputs[0]
    if len(body.outputs) != 1:
        return None
    if ops == {"relu_grad"} and root.op == "relu_grad":
        x, y = root.inputs
    elif ops == {"greater", "select"} and root.op == "select":
        condition, y, zero = root.inputs
        if condition.op != "greater" or not _zero_constant(zero):
            return None
        x, other_zero = condition.inputs
        if not _zero_constant(other_zero):
            return None
    else:
        return None
    x, y = _param(body, x), _param(body, y)
    if x is None or y is None:
        return None
    if any(body.inputs[k].dtype != node.dtype for k in (x, y)):
        return None
    size = math.prod(node.shape)
    if any(math.prod(node.inputs[k].shape) != size for k in (x, y)):
        return None
    params = [f"p{k}" for k in range(len(node.inputs))]
    return [size], params, [f"p{x}", f"p{y}", "out"]


def _zero_constant(node):
    if node.op != "const" or node.shape != ():
        return False
    value = node.attrs["value"]
    return _positive_zero(value.array.item() if isinstance(value, Literal) else value)


def _param(body, node):
    """The position among the body's inputs of the input `node` reads through reshapes, or
    None where it reads anything else."""
    while node.op == "reshape":
        node = node.inputs[0]
    for k, param in enumerate(body.inputs):
        if param is node:
            return k
    return None


def _leading_sum(node):
    """A sum over the leading axes: each column's terms in the order of the rows."""
    (x,) = node.inputs
    axes = tuple(node.attrs["axis"] or ())
    if not 0 < len(axes) < len(x.shape) or axes != tuple(range(len(axes))):
        return None
    if x.dtype != node.dtype:
        return None
    rows = math.prod(x.shape[: len(axes)])
    return [rows, math.prod(x.shape) // rows], ["p0"], ["p0", "out"]


# op -> the table's kinds that may compute it, each with its geometry (or None)
_ARRAY_KINDS = {
    "pad": [("pad_zeros", _pad)],
    "fused": [("select_positive", _relu_gradient)],
    "reduce_sum": [("column_sums", _leading_sum)],
}


def _blocked_products(node):
    """A product (or batch) that eager products compute with the installed `blocked_products`
    (codegen/blocked_products.py's rule, for C-contiguous operands): the same kernel, the same
    bits."""
    product = _product_of_its_dtype(node)
    if product is None:
        return None
    a, b, ta, tb = product
    steps = [blocked_products.contiguous_steps(x.shape) for x in (a, b)]
    if None in steps:
        return None
    found = blocked_products.geometry(
        node.dtype.name, a.shape, b.shape, *steps, ta, tb, threads_from=GEMM_PARALLEL_MIN
    )
    return None if found is None else (found[1], ["a", "b"], ["a", "b", "out"])


def _blocked_products_at_run_time(node):
    """A single product whose sizes the module knows only when it runs: codegen/
    blocked_products.py's rule in C, so that where those sizes are the kernel's the module
    gives the bits of one built for them."""
    product = _product_of_its_dtype(node)
    if product is None:
        return None
    a, b, ta, tb = product
    return blocked_products.run_time_rule(
        node.dtype.name, a.shape, b.shape, ta, tb, threads_from=GEMM_PARALLEL_MIN
    )


def _product_of_its_dtype(node):
    """(a, b, transpose_a, transpose_b) of a matmul node whose operands have its dtype, else
    None."""
    a, b = node.inputs
    if a.dtype != node.dtype or b.dtype != node.dtype:
        return None
    return a, b, node.attrs.get("transpose_a", False), node.attrs.get("transpose_b", False)


def _blocked_solves(node):
    """A triangular solve that eager kernels compute with the installed `blocked_solves`
    (codegen/blocked_products.py's rule): the same kernel, the same bits."""
    a, b = node.inputs
    if a.dtype != node.dtype or b.dtype != node.dtype or a.shape[:-2] != b.shape[:-2]:
        return None
    n, k = b.shape[-2:]
    count = math.prod(b.shape[:-2]) if _known(b.shape[:-2]) else None
    found = blocked_products.solve_geometry(
        node.dtype.name, count, n, k, node.attrs["lower"], node.attrs["adjoint"]
    )
    return None if found is None else (found[1], ["a", "rhs"], ["a", "rhs", "out"])


def _gemm_parts(node, context):
    """A product's calls of the BLAS in parts on the threads (templates/gemm_parts.c.j2, the
    module's one function for them; a batch's in its own kernel, templates/matmul.c.j2) made
    by the table's gemm_parts, which makes the same: the same bits, at the same speed (the
    sizes are arguments of that function either way), and the compiler spared its parallel
    loop (the thread's function OpenMP outlines). A batch of more than MOST_GEMMS products, or
    of a size known only when the module runs, keeps the template's loop."""
    shared = context.get("shared_kernel")
    if shared is None:
        return {}
    name, _, values = shared
    kernel = f"gemm_parts_{installed_kernels.suffix(node.dtype)}"
    T = storage(node.dtype)
    table = dict(
        table_kernel=kernel,
        table_variable=installed_kernels.VARIABLE,
        table_index=installed_kernels.KERNELS.index(kernel),
        # (its geometry, the BLAS's gemm, the products' offsets in a and in b, a, b, out)
        table_type=f"void (*)(const int64_t *, const uintptr_t *, const int64_t *, "
        f"const int64_t *, const {T} *, const {T} *, {T} *)",
    )
    changes = {"shared_kernel": (name, "gemm_parts_installed.c.j2", {**values, **table})}
    gemms = context["gemms"]
    if context["batch_loops"] and isinstance(gemms, int) and gemms <= MOST_GEMMS:
        changes.update(table)
    return changes


# the most products of a batch whose offsets a kernel lists on its stack for the table's
# gemm_parts: 64 KB
MOST_GEMMS = 4096


def _solve_parts(node, context):
    """A triangular solve's calls of the BLAS (templates/triangular_solve.c.j2: its right-hand
    sides in parts on the threads, each solved by halves) made by the table's
    triangular_solves, which makes the same: the same bits, and the compiler spared the
    solve's parallel loop and the halves' function."""
    kernel = f"triangular_solves_{installed_kernels.suffix(node.dtype)}"
    return dict(
        table_variable=installed_kernels.VARIABLE,
        table_index=installed_kernels.KERNELS.index(kernel),
    )


# multiply-adds from which a module's products are shared among the threads (tracer/ops/
# linalg_ops.py's GEMM_PARALLEL_MIN: a compiled step's parallel loops find the pool awake)
GEMM_PARALLEL_MIN = 1 << 20


def _depthwise(image_of, inputs, epilogue=(), most_taps=None):
    """The geometry of a depthwise kernel, its image `image_of(node)` (N, H, W, C), the table's
    kernel taking the inputs of an epilogue named `epilogue` after the operands."""

    def geometry(node):
        taps = node.attrs["kernel"][0] * node.attrs["kernel"][1]
        activation = node.attrs.get("activation")
        if (most_taps is not None and taps > most_taps) or activation not in (None, "relu"):
            return None
        image = image_of(node)
        found = image_geometry(image.shape, *node.attrs["sizes"], node.attrs)
        if found is None:
            return None
        params, arguments = _with_epilogue(node, inputs, list(epilogue))
        return found + [0, 0, int(activation == "relu")], params, arguments

    return geometry


_KINDS = {
    "patch_product": ("patch_product", _product),
    "patch_weights": ("patch_weights", _weights),
    "depthwise_conv2d": (
        "depthwise_product",
        _depthwise(lambda n: n.inputs[0], ["x", "w"], ["bias"]),
    ),
    "depthwise_conv2d_backprop_input": (
        "depthwise_input",
        _depthwise(lambda n: n, ["g", "w"], ["gate"]),
    ),
    "depthwise_conv2d_backprop_filter": (
        "depthwise_filter",
        _depthwise(
            lambda n: n.inputs[0], ["x", "g"], most_taps=installed_kernels.MOST_DEPTHWISE_TAPS
        ),
    ),
    "window_max_gather": ("window_max_pool", _window(["x", "v"], ["x", "out"])),
    "window_max_scatter": ("window_max_scatter", _window(["x", "g"], ["x", "g", "out"])),
}
for _op, (_kind, _geometry) in _KINDS.items():
    C_MODULE.register_form(_op, _InstalledOrTemplate(_op, _kind, _geometry))
# the profiled module times the products and solves the C module computes
# (tests/profiled_c.py)
for _target in (C_MODULE, PROFILED_C):
    _target.register_form(
        "matmul",
        _InstalledOrTemplate(
            "matmul",
            "blocked_products",
            _blocked_products,
            own=False,
            run_time=_blocked_products_at_run_time,
            parts=_gemm_parts,
        ),
    )
    _target.register_form(
        "triangular_solve",
        _InstalledOrTemplate(
            "triangular_solve", "blocked_solves", _blocked_solves, own=False, parts=_solve_parts
        ),
    )
