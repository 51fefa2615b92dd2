"""The convolution and pooling kernels built when tracer is installed (runtime/conv_kernels.c),
with the padding, relu gradient and bias gradient around them, which compiled modules call
instead of compiling their own: where their table is, and the variable through which a module
reads it.

A module that calls them declares `DECLARATION` in its prologue; the runtime points that
variable at the table when it loads the module (runtime/compiled.py). codegen/conv_kernels.py
decides which kernels a module takes from the table. Eager max pooling calls two of them,
and eager relu_grad a third, directly (`call`: codegen/array_windows.py, codegen/array_math.py).
"""

import functools

import _cffi_backend
import numpy as np

from runtime import native

# the table's order, as conv_kernels.c fills it
KERNELS = (
    "patch_product_f32",
    "patch_product_f64",
    "patch_weights_f32",
    "patch_weights_f64",
    "window_max_pool_f32",
    "window_max_pool_f64",
    "window_max_scatter_f32",
    "window_max_scatter_f64",
    "pad_zeros_f32",
    "pad_zeros_f64",
    "select_positive_f32",
    "select_positive_f64",
    "column_sums_f32",
    "column_sums_f64",
    "adam_updates_f32",
    "adam_updates_f64",
    "relu_values_f32",
    "relu_values_f64",
    "triangular_solves_f32",
    "triangular_solves_f64",
    "gemm_parts_f32",
    "gemm_parts_f64",
    "select_values_f32",
    "select_values_f64",
    "arithmetic_rows_f32",
    "arithmetic_rows_f64",
    "blocked_products_f32",
    "blocked_products_f64",
    "blocked_solves_f32",
    "blocked_solves_f64",
    "depthwise_product_f32",
    "depthwise_product_f64",
    "depthwise_input_f32",
    "depthwise_input_f64",
    "depthwise_filter_f32",
    "depthwise_filter_f64",
)
_SUFFIXES = {"float32": "f32", "float64": "f64"}
_NUMPY_SUFFIXES = {np.dtype(name): value for name, value in _SUFFIXES.items()}
GEOMETRY = 17  # the int64 values of a kernel's geometry (conv_kernels.c)
MOST_CHANNELS = 4096  # the most channels of an image the kernels take
MOST_RANK = 8  # the most axes of an array pad_zeros takes
MOST_DEPTHWISE_TAPS = 49  # the most taps of a depthwise filter gradient (DEPTHWISE_TAPS)
VARIABLE = "tracer_conv_kernels"
DECLARATION = f"""\
/* the convolution and pooling kernels installed with tracer (runtime/conv_kernels.c): the
   runtime points this at their table when it loads the module */
#if defined(__GNUC__)
__attribute__((weak))  /* one variable for all the module's translation units */
#endif
void **{VARIABLE};"""


@functools.cache
def address():
    """The table's address, or 0 where the extension was not built, was built for another
    tracer, or cannot run on this CPU as it was built (another CPU's instructions, or another
    rounding of multiply-adds than this CPU's modules have)."""
    module = native.load("conv_kernels", _same_table)
    return 0 if module is None else module.table()


@functools.cache
def whole_arithmetic():
    """The extension's `arithmetic(op, x, y, out)`: x op y of float arrays, one of the
    result's shape and the other whole, a bias, a column or one element, by the table's
    arithmetic_rows, its checks, result and call in C (an eager step's large +, -, * and /:
    `call`'s Python took a third of a 100,000-element product's time); it returns None for
    other operands. None where there is no table."""
    return native.load("conv_kernels", _same_table).arithmetic if address() else None


@functools.cache
def pieces():
    """The extension's `pieces(out, parts)`: arrays and counts of zero bytes written one after
    the other into `out`, on the threads for many elements (an eager concat, a slice's
    gradient); None where there is no table."""
    return native.load("conv_kernels", _same_table).pieces if address() else None


_ffi = _cffi_backend.FFI()


@functools.cache
def function(name, c_type):
    """The table's kernel `name` as a cffi function of `c_type` (its C pointer type), for
    the eager kernels (cast once per process); None where there is no table, or where the
    table has no such kernel for this CPU (its slot is empty: the small products without
    AVX-512)."""
    if not address():
        return None
    table = _ffi.cast("void **", address())
    slot = table[KERNELS.index(name)]
    return None if slot == _ffi.NULL else _ffi.cast(c_type, slot)


def suffix(dtype):
    """The suffix of the table's kernels for `dtype` (numpy's or tracer's, by its name): 'f32'
    or 'f64'; None for any other dtype. A native numpy dtype is looked up as it is: numpy
    makes its name anew at each ask, a microsecond and a half, on every eager kernel's call."""
    found = _NUMPY_SUFFIXES.get(dtype)
    return found if found is not None else _SUFFIXES.get(dtype.name)


def pointer(array):
    """A C pointer to an array's first element, for `function`'s kernels: its buffer where
    it is C-contiguous (cffi's from_buffer, which keeps the array alive, in a tenth of the
    time numpy's `ctypes.data` takes: an eager step makes dozens of these calls), else its
    address."""
    if array.flags.c_contiguous:
        return _ffi.from_buffer(array)
    return _ffi.cast("void *", array.ctypes.data)  # a strided or broadcast view


@functools.cache
def _kernel_taking(name, count):
    """The table's kernel `name` as a cffi function of a geometry, `count` inputs and an
    output, each a `void *` (the same pointers in C: cffi passes an array's buffer, `char[]`,
    to no other pointer type)."""
    parameters = ", ".join(["const void *"] * (1 + count) + ["void *"])
    return function(name, f"void (*)({parameters})")


def call(name, geometry, inputs, out):
    """Run the table's kernel `name` (its dtype's suffix included) on the int64 array
    `geometry` and the C-contiguous arrays `inputs` (None: a NULL pointer, the patch
    product's absent bias), into `out` (the eager kernels' way)."""
    kernel = _kernel_taking(name, len(inputs))
    kernel(*[_ffi.NULL if a is None else pointer(a) for a in (geometry, *inputs, out)])


def uses(source):
    """Whether the module of C `source` reads the table."""
    return DECLARATION in source


def _same_table(module):
    """'' where `module` fills the table and reads the geometry as this file says."""
    names = tuple(module.KERNELS.split())
    shape = (module.GEOMETRY, module.MOST_CHANNELS, getattr(module, "MOST_RANK", None))
    if names != KERNELS or shape != (GEOMETRY, MOST_CHANNELS, MOST_RANK):
        return (
            f"its table holds {names}, for geometries of {shape[0]}, {shape[1]} channels and "
            f"{shape[2]} axes"
        )
    return ""
