"""Convolution and pooling in a compiled module through the kernels installed with tracer.

A CNN's patch products (tracer/ops/patch_product_ops.py) and max pooling's window kernels
(tracer/ops/window_ops.py), each specialised to its geometry, were most of the C compiler's
time on its first call. runtime/conv_kernels.c holds the same loops for any geometry, built
once, when tracer is installed, and gives the same bits (the same sums in the same order).
A module of the C target calls them through their table, so its first call waits for far
less C; but the specialised kernels run faster, so tracer/executables.py builds the module
again with its own (`own_kernels`) in a thread, and swaps it in: the values do not change
when it does. The plan stored for later processes is the second module's.

The profiled target and exported C, which runs without tracer, keep the templates, as does
every module where the table is missing or serves no such node: another dtype than float32
and float64, a product's activation other than relu, a window gather other than max
pooling, more channels than the table's kernels take."""

import contextlib
import functools
import threading

from codegen import forms, thread_pools
from codegen.ctypes import storage
from codegen.targets import C_MODULE
from runtime import installed_kernels

_SUFFIXES = {"float32": "f32", "float64": "f64"}
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
    """Whether the installed kernels' table can be used in this process (loaded after the
    thread pool's settings, which OpenMP reads once)."""
    thread_pools.prepare()
    return installed_kernels.address() != 0


def _image(node, image, height, width):
    """The geometry's image and window part, or None where the table takes no such image."""
    channels = image.shape[3]
    if not isinstance(channels, int) or channels > installed_kernels.MOST_CHANNELS:
        return None
    a = node.attrs
    return [image.shape[0], height, width, channels, *a["kernel"], *a["strides"]] + [
        *a["dilations"],
        *a["before"],
        *a["out"],
    ]


def _product(node):
    activation = node.attrs.get("activation")
    if activation not in (None, "relu"):
        return None
    x = node.inputs[0]
    image = _image(node, x, x.shape[1], x.shape[2])
    if image is None:
        return None
    params = ["x", "w", "bias"] if len(node.inputs) == 3 else ["x", "w"]
    arguments = ["x", "w", "bias" if len(node.inputs) == 3 else "NULL", "out"]
    return image + [node.shape[-1], 1, int(activation == "relu")], params, arguments


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
        image = _image(node, node.inputs[0], *node.attrs["sizes"])
        return None if image is None else (image + [0, 1, 0], inputs, arguments)

    return geometry


class _InstalledOrTemplate(forms.Template):
    """An op's template form, whose kernel calls the installed one (`kind`) where the table
    serves the node (`geometry(node)`: the geometry's values, the kernel's parameters and the
    call's arguments, or None)."""

    error = None

    def __init__(self, op, kind, geometry):  # (Template's own would set `context`)
        self.op = op
        self.kind = kind
        self.geometry = geometry

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
        suffix = _SUFFIXES.get(node.dtype.name)
        if suffix is None or getattr(_lowering, "own", False) or not available():
            return None
        found = self.geometry(node)
        return None if found is None else (f"{self.kind}_{suffix}", *found)

    def template_for(self, node):
        return "installed_kernel.c.j2" if self._served(node) else self.default.template

    def context(self, node, blas):
        served = self._served(node)
        if served is None:
            return self.default.context(node, blas)
        kernel, geometry, params, arguments = served
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

    def helper_definitions(self, node, vector_math):
        if self._served(node):
            return [("installed kernels", installed_kernels.DECLARATION)]
        return self.default.helper_definitions(node, vector_math)


_KINDS = {
    "patch_product": ("patch_product", _product),
    "patch_weights": ("patch_weights", _weights),
    "window_max_gather": ("window_max_pool", _window(["x", "v"], ["x", "out"])),
    "window_max_scatter": ("window_max_scatter", _window(["x", "g"], ["x", "g", "out"])),
}
for _op, (_kind, _geometry) in _KINDS.items():
    C_MODULE.register_form(_op, _InstalledOrTemplate(_op, _kind, _geometry))
