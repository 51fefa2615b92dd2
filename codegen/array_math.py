"""Ops numpy lacks or runs as many passes, over whole arrays, for the eager kernels.

numpy has neither erf nor erfc. Computed element by element in Python (`math.erf`), they cost
far more than numpy's own functions, and GELU's erf made most of an eager transformer step
(benchmarks/RESULTS.md); GELU itself and its gradient, as numpy's passes, took five and ten
times the time of one loop, and the softmax and its gradient, as numpy's maxima, sums and
divisions over short rows, four times that of a loop per row; so did a classifier's sparse
softmax cross-entropy and its gradient (`cross_entropy`, templates/softmax_cross_entropy.c.j2's
rows, the labels passed as the element type). The gradients of tanh and the sigmoid, three
passes of numpy's on one thread, are one loop on the threads for large arrays. sin, cos,
exp, log and tanh over large arrays are glibc's vector functions here, several times faster
than numpy's loops (benchmarks/RESULTS.md), with the bits a compiled module gives for the op.

Each elementwise op here is one loop over the array of the op's own C form
(`codegen.forms.C_FORMS`: the expression compiled kernels write, with its prologue helpers);
the softmax and its vector-Jacobian product are templates/softmax.c.j2's loops with the
rows' count and length read at run time (the same maximum, exp, sums and division, in the
same order). The threads share whole blocks of elements, or whole rows, as compiled loops
do, so no value depends on their number. One module per element type holds every function,
called through its entry point.

The loops are installed built: runtime/array_math.c compiles both types' modules, as
`python -m codegen.array_math` writes them into runtime/array_math_loops.h, with the compiled
modules' flags and glibc's vector maths, when tracer is installed, so that an eager step's
first call waits for no compiler. Where that extension is missing (no compiler or no libmvec
at install), was built from other loops than these (an editable install not rebuilt after
a change here or in the forms) or cannot run on this CPU, the module is built as a compiled
one is (the same flags, the disk cache) at the first call; later processes load it from the
cache. Where neither can be had (no compiler, a cache that cannot hold it), `apply` says so
with None and the caller keeps its own way.
"""

import functools
import hashlib
import math
import os
import sys
import threading

import numpy as np

from codegen import build, conv_kernels, units
from codegen.ctypes import compute
from codegen.errors import BuildFailure
from codegen.forms import C_FORMS
from runtime import aligned, installed_kernels, native

BLOCK = 1024  # elements a vector loop runs over: the threads share whole blocks

# the ops `apply` computes, and their operands' count (all of one shape): elementwise ones
# through their C form, then the ones over the rows of the last axis; a module's entry point
# takes an op by its position here
ELEMENTWISE = {
    "erf": 1,
    "erfc": 1,
    "gelu": 1,
    "gelu_grad": 2,
    "sigmoid_grad": 2,
    "tanh_grad": 2,
    "sin": 1,
    "cos": 1,
    "exp": 1,
    "log": 1,
    "tanh": 1,
}
ROWS = {"softmax": 1, "softmax_backprop": 2}
# over the rows of logits x0, with one label per row in x1 (as the element type): the loss
# per row, or softmax minus the one-hot label (`cross_entropy`)
LABELED_ROWS = {"cross_entropy": 2, "cross_entropy_backprop": 2}
FUNCTIONS = {**ELEMENTWISE, **ROWS, **LABELED_ROWS}
_POSITIONS = {name: k for k, name in enumerate(FUNCTIONS)}
_TYPES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64"}
# the macros the helpers and the units' blocks use, as templates/prologue.h.j2 defines them
# (rendering that template would import jinja2 in every eager process)
_HEAD = """\
/* tracer: eager ops over arrays of {T} (codegen/array_math.py) */
#include <math.h>
#include <stdint.h>
#if defined(__GNUC__)
#define TR_INLINE __attribute__((always_inline))
#else
#define TR_INLINE
#endif
#define TR_IN_UNIT 1
#ifdef TR_UNIT
#define TR_PART __attribute__((visibility("hidden")))
#else
#define TR_PART static
#endif
"""
_SIGNATURE = "TR_PART void {name}(int64_t size, int64_t row, {parameters}, {T} *restrict out)"
_ELEMENTWISE = """\
{signature} {{
    #pragma omp parallel for schedule(static) if(size >= {parallel_min})
    for (int64_t start = 0; start < size; start += {block}) {{
        const int64_t end = start + {block} < size ? start + {block} : size;
        #pragma omp simd
        for (int64_t i = start; i < end; i++) out[i] = ({T})({value});
    }}
}}
"""
_ROWS = """\
{signature} {{
    const int64_t n = row, rows = n ? size / n : 0;
    #pragma omp parallel for schedule(static) if(size >= {parallel_min})
    for (int64_t r = 0; r < rows; r++) {{
{body}
    }}
}}
"""
# softmax.c.j2's row, of x0 (exp(x - max(x)) / sum(exp(x - max(x))))
_SOFTMAX = """\
        const {T} *restrict row = x0 + r * n;
        {T} *restrict o = out + r * n;
        {C} peak = -INFINITY;
        #pragma omp simd reduction(max:peak)
        for (int64_t j = 0; j < n; j++) peak = ({C})row[j] > peak ? ({C})row[j] : peak;
        {C} total = 0;
        #pragma omp simd reduction(+:total)
        for (int64_t j = 0; j < n; j++) {{
            const {C} e = {exp};
            o[j] = ({T})e;
            total += e;
        }}
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) o[j] = ({T})(({C})o[j] / total);"""
# softmax_cross_entropy.c.j2's row of logits x0 and label x1[r]: the row's maximum (NaN
# propagated), the sum of exponentials in double, then log(sum) - (x[label] - max), or
# exp(x - max) / sum less one at the label
_CROSS_ENTROPY = """\
        const {T} *restrict row = x0 + r * n;
        const int64_t label = (int64_t)x1[r];
        {C} peak = -INFINITY;
        for (int64_t j = 0; j < n; j++) {{
            const {C} v = ({C})row[j];
            peak = (v > peak || v != v) ? v : peak;
        }}
        double total = 0;
        #pragma omp simd reduction(+:total)
        for (int64_t j = 0; j < n; j++) total += {exp};
{tail}"""
_CROSS_ENTROPY_LOSS = """\
        out[r] = ({T})(({C})log(total) - (({C})row[label] - peak));"""
_CROSS_ENTROPY_GRADIENT = """\
        {T} *restrict o = out + r * n;
        const {C} sum = ({C})total;
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) o[j] = ({T})({exp} / sum);
        o[label] = ({T})(({C})o[label] - 1);"""
# softmax.c.j2's backprop row, of y = x0 and v = x1 (y * (v - sum(v * y)))
_SOFTMAX_BACKPROP = """\
        const {T} *restrict yr = x0 + r * n, *restrict vr = x1 + r * n;
        {C} dot = 0;
        #pragma omp simd reduction(+:dot)
        for (int64_t j = 0; j < n; j++) dot += ({C})vr[j] * ({C})yr[j];
        {T} *restrict o = out + r * n;
        #pragma omp simd
        for (int64_t j = 0; j < n; j++) o[j] = ({T})(({C})yr[j] * (({C})vr[j] - dot));"""
_ENTRY = """\
int tracer_run(char **args) {{
    const int64_t function = *(const int64_t *)args[0];
    const int64_t size = *(const int64_t *)args[1], row = *(const int64_t *)args[2];
    switch (function) {{
{cases}
    }}
    return 0;
}}
"""
_ffi = build.Library.ffi
_entries = {}  # dtype name -> the loops' entry point (a cffi function), or None where none
_finding = threading.Lock()
LOOPS_HEADER = os.path.join(
    os.path.dirname(native.EXTENSIONS["array_math"].source), "array_math_loops.h"
)


def apply(name, *arrays):
    """The op `name` (one of ELEMENTWISE and ROWS; LABELED_ROWS are `cross_entropy`'s) of
    the float32 or float64 arrays `arrays` (of one shape and dtype, the rows' ops of rank 1
    or more), as a new array of that shape and dtype; None where no module can be built."""
    first = arrays[0]
    type_name = _TYPES.get(first.dtype)
    if name not in FUNCTIONS or name in LABELED_ROWS or type_name is None:
        names = tuple(n for n in FUNCTIONS if n not in LABELED_ROWS)
        raise ValueError(f"array_math computes {names} of float32 or float64, not {name}")
    if any(a.dtype != first.dtype or a.shape != first.shape for a in arrays):
        raise ValueError(f"array_math's {name} takes arrays of one shape and dtype")
    if name in ROWS and first.ndim == 0:
        raise ValueError(f"array_math's {name} takes rows: arrays of rank 1 or more")
    run = _entry(type_name)
    if run is None:
        return None
    arrays = [np.asarray(a, order="C") for a in arrays]  # (ascontiguousarray makes 0-d 1-d)
    out = aligned.empty(arrays[0].shape, arrays[0].dtype)
    row = first.shape[-1] if first.ndim else 1
    # the entry point's arguments: the function, the size and the row (an int64 each), then
    # the arrays' buffers (cffi's from_buffer: numpy's `ctypes.data` takes ten times as long)
    head = _ffi.from_buffer(np.array([_POSITIONS[name], first.size, row], np.int64))
    buffers = [_ffi.from_buffer(a) for a in (*arrays, out)]
    run(_ffi.new("char *[]", [head, head + 8, head + 16, *buffers]))
    return out


def cross_entropy(labels, logits, backprop):
    """Softmax cross-entropy of float32 or float64 `logits` (rows on the last axis) against
    integer `labels` in range, one per row, in one pass a row of the loops installed with
    tracer (the compiled template's, softmax_cross_entropy.c.j2): the loss of each row, or
    where `backprop` softmax less the one-hot labels; None where those loops were not
    installed (a module built for these few rows would keep the first call waiting) or the
    labels do not all fit the element type."""
    type_name = _TYPES.get(logits.dtype)
    classes = logits.shape[-1]
    if type_name is None or classes > 1 << np.finfo(logits.dtype).nmant:
        return None
    if type_name not in _entries and _installed_entry(type_name) is None:
        return None
    run = _entry(type_name)
    rows = np.ascontiguousarray(logits)
    out = np.empty(logits.shape if backprop else labels.shape, logits.dtype)
    if out.size:
        name = "cross_entropy_backprop" if backprop else "cross_entropy"
        head = _ffi.from_buffer(np.array([_POSITIONS[name], rows.size, classes], np.int64))
        values = np.ascontiguousarray(labels, dtype=logits.dtype)  # exact: checked above
        buffers = [_ffi.from_buffer(a) for a in (rows, values, out)]
        run(_ffi.new("char *[]", [head, head + 8, head + 16, *buffers]))
    return out


def _entry(type_name):
    """The entry point of the loops for `type_name`: the installed ones, else a module's."""
    if type_name not in _entries:
        with _finding:
            if type_name not in _entries:
                _entries[type_name] = _installed_entry(type_name) or _built_entry(type_name)
    return _entries[type_name]


def _installed_entry(type_name):
    """The entry point of runtime/array_math.c's loops for `type_name`, or None where that
    extension was not built, was built from other loops, or cannot run on this CPU."""
    module = native.load("array_math", _same_loops)
    address = module.entry(installed_kernels.suffix(np.dtype(type_name))) if module else 0
    return _ffi.cast(build.ENTRY_POINT[1], address) if address else None


def _same_loops(module):
    """'' where `module` was built from the loops this file writes (native.load's check)."""
    key = loops_key(loops_header_body())
    if module.LOOPS_KEY != key:
        return f"its loops are {module.LOOPS_KEY}, not {key} (python -m codegen.array_math)"
    return ""


def _built_entry(type_name):
    from tracer import dtypes  # the forms' types; imported at the first build

    try:
        return build.load(source(dtypes.as_dtype(type_name)), uses_blas=False)[0].run
    except BuildFailure:
        return None


def loops_header_body():
    """Both types' modules, as compiled with glibc's vector maths, in one translation unit:
    each entry point renamed array_math_run_ and the type's suffix."""
    from tracer import dtypes

    parts = []
    for dtype in (dtypes.float32, dtypes.float64):
        run = f"array_math_run_{installed_kernels.suffix(dtype)}"
        parts.append(f"#define tracer_run {run}\n{source(dtype, True)}#undef tracer_run\n")
    return "".join(parts)


def loops_key(body):
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def loops_header():
    """runtime/array_math_loops.h's text: `loops_header_body` and its key, LOOPS_KEY."""
    body = loops_header_body()
    return (
        "/* codegen/array_math.py's loops for runtime/array_math.c, written by\n"
        "   `python -m codegen.array_math`: not to be edited */\n"
        f'{body}#define LOOPS_KEY "{loops_key(body)}"\n'
    )


def source(dtype, vector_math=None):
    """The module's C for arrays of `dtype` (tracer's float32 or float64), calling glibc's
    vector maths where `vector_math` (default: where the compiler has them): each function
    in a block of codegen/units.py's, so that its translation units compile at once."""
    from codegen.loops import PARALLEL_MIN  # (codegen.loops imports tracer, which imports this)

    C = compute(dtype)
    vector_math = build.vector_math() if vector_math is None else vector_math
    suffix = installed_kernels.suffix(dtype)
    helpers, declarations, functions, cases = {}, [], [], []
    for index, (name, arity) in enumerate(FUNCTIONS.items()):
        parameters = ", ".join(f"const {C} *restrict x{k}" for k in range(arity))
        function = f"{name}_{suffix}"
        signature = _SIGNATURE.format(name=function, parameters=parameters, T=C)
        declarations.append(signature + ";\n")
        common = dict(signature=signature, T=C, parallel_min=PARALLEL_MIN)
        if name in ELEMENTWISE:
            form = C_FORMS[name]
            value = form.render(dtype, dtype, *(f"x{k}[i]" for k in range(arity)))
            functions.append(_ELEMENTWISE.format(value=value, block=BLOCK, **common))
        else:
            form = C_FORMS["exp"]
            exp = form.render(dtype, dtype, f"({C})row[j] - peak")
            if name in LABELED_ROWS:
                tail = _CROSS_ENTROPY_GRADIENT if name.endswith("backprop") else _CROSS_ENTROPY_LOSS
                body = _CROSS_ENTROPY.format(T=C, C=C, exp=exp, tail=tail.format(T=C, C=C, exp=exp))
            else:
                body = (_SOFTMAX if name == "softmax" else _SOFTMAX_BACKPROP).format(
                    T=C, C=C, exp=exp
                )
            functions.append(_ROWS.format(body=body, **common))
        for h in form.helpers:
            helpers.update(h.definitions(dtype, vector_math))
        arguments = "".join(f"(const {C} *)args[{3 + k}], " for k in range(arity))
        cases.append(
            f"    case {index}: {function}(size, row, {arguments}({C} *)args[{3 + arity}]); break;"
        )
    blocks = [*functions, _ENTRY.format(cases="\n".join(cases))]
    return "".join(
        [
            _HEAD.format(T=C),
            *(text + "\n" for text in helpers.values()),
            *declarations,
            *_in_unit_blocks(blocks),
        ]
    )


def _in_unit_blocks(texts):
    """`texts` each in a block of codegen/units.py's, weighed as units.py weighs a kernel;
    the last, the entry point, which only calls the others, as it weighs such a text."""
    works = [units.function_weight(text) for text in texts[:-1]]
    works.append(len(texts[-1]) // units.ENTRY_SHARE)
    total = sum(works)
    start = 0
    for text, work in zip(texts, works):
        middle = min(start + work // 2, total - 1)
        yield f"#if TR_IN_UNIT  /* work {work} at {middle} of {total} */\n{text}#endif\n"
        start += work


def leading_sums(x, leading):
    """The sums of a float32 or float64 array over its `leading` first axes, through the
    kernel installed with tracer (runtime/array_kernels_typed.h's column sums: each column's
    terms in the order of the rows, in double, as compiled code sums over leading axes);
    None where its table is not there. A bias's gradient in an eager CNN step: numpy's
    pairwise sums over 50,176 rows of 32 columns take three times as long."""
    suffix = installed_kernels.suffix(x.dtype)
    if suffix is None or not 0 < leading < x.ndim or x.size == 0 or not conv_kernels.available():
        return None
    rows = math.prod(x.shape[:leading])
    out = np.empty(x.shape[leading:], x.dtype)
    geometry = np.array([rows, x.size // rows], np.int64)
    installed_kernels.call(f"column_sums_{suffix}", geometry, (np.asarray(x, order="C"),), out)
    return out


@functools.cache
def adam_updates_run(dtype):
    """The call that makes Adam's update of many variables of numpy `dtype` at once
    (`adam_updates`'s kernel, installed with tracer), or None where its table is not there or
    `dtype` is not float32 or float64 (found once: an eager step asks for each variable)."""
    suffix = installed_kernels.suffix(dtype)
    if suffix is None or not conv_kernels.available():
        return None
    return installed_kernels.function(
        f"adam_updates_{suffix}", "void (*)(const void *, const void *, void *const *)"
    )


def adam_updates(updates, scalars):
    """[(m', v', x')]: Adam's update of each (x, m, v, grad) of `updates` (a variable, its
    slots and gradient: float32 or float64 arrays of one dtype and shape each), `scalars`
    (b1, c1, b2, c2, step, eps) in that dtype, in one call of the kernel installed with
    tracer, one pass over each variable, each operation rounded as numpy's (the same bits);
    None where its table is not there or the arrays do not fit."""
    run = adam_updates_run(scalars.dtype)
    if run is None:
        return None
    for arrays in updates:
        x = arrays[0]
        for a in arrays:
            if a.dtype != scalars.dtype or a.shape != x.shape:
                return None
    results, pointers, sizes = [], [], [len(updates)]
    for arrays in updates:
        arrays = [np.ascontiguousarray(a) for a in arrays]
        shape, dtype = arrays[0].shape, arrays[0].dtype
        outs = (
            aligned.empty(shape, dtype),
            aligned.empty(shape, dtype),
            aligned.empty(shape, dtype),
        )
        results.append(outs)  # (m', v', x'): the kernel's pointers are x, m, v, grad, m', v', x'
        pointers += [_ffi.from_buffer(a) for a in (*arrays, *outs)]
        sizes.append(arrays[0].size)
    geometry = np.array(sizes, np.int64)
    run(_ffi.from_buffer(geometry), _ffi.from_buffer(scalars), _ffi.new("void *[]", pointers))
    return results


def relu(x):
    """numpy's maximum(x, 0) of a float32 or float64 array through the kernel installed with
    tracer (one vector loop, on the threads for large arrays; the same selection, so the same
    bits); None where its table is not there."""
    suffix = installed_kernels.suffix(x.dtype)
    if suffix is None or not conv_kernels.available():
        return None
    x = np.asarray(x, order="C")
    out = aligned.empty(x.shape, x.dtype)
    installed_kernels.call(f"relu_values_{suffix}", np.array([x.size], np.int64), (x,), out)
    return out


def select_positive(x, y):
    """relu's gradient, select(x > 0, y, 0), of float32 or float64 arrays of one shape,
    through the kernel installed with tracer (runtime/array_kernels_typed.h: one loop, on
    the threads for large arrays, where numpy compares, then selects through a mask); None
    where its table is not there. A selection, so numpy's bits."""
    suffix = installed_kernels.suffix(x.dtype)
    if suffix is None or y.dtype != x.dtype or y.shape != x.shape or not conv_kernels.available():
        return None
    x, y = np.asarray(x, order="C"), np.asarray(y, order="C")
    out = aligned.empty(x.shape, x.dtype)
    installed_kernels.call(f"select_positive_{suffix}", np.array([x.size], np.int64), (x, y), out)
    return out


def select(condition, x, y):
    """numpy's where(condition, x, y) for a bool `condition` and float32 or float64 `x` of its
    shape, `y` of that shape or a scalar of x's dtype, through the kernel installed with tracer
    (one loop, on the threads for large arrays, where numpy branches on each element or
    masks its bits in four passes); None where its table is not there. A selection, so
    numpy's bits."""
    suffix = installed_kernels.suffix(x.dtype)
    if (
        suffix is None
        or condition.dtype != np.bool_
        or condition.shape != x.shape
        or y.dtype != x.dtype
        or y.shape not in ((), x.shape)
        or not conv_kernels.available()
    ):
        return None
    arrays = [np.asarray(a, order="C") for a in (condition, x, y)]
    out = aligned.empty(arrays[1].shape, arrays[1].dtype)
    geometry = np.array([x.size, y.ndim != 0], np.int64)
    installed_kernels.call(f"select_values_{suffix}", geometry, tuple(arrays), out)
    return out


_ARITHMETIC = {"+": 0, "-": 1, "*": 2, "/": 3}  # the installed arithmetic_rows's operations
_NEGATION = 4  # arithmetic_rows's -x


def arithmetic(symbol, x, y, out=None):
    """x op y (op: "+", "-", "*" or "/") of float32 or float64 arrays, one of the result's shape
    and the other of it too, or its last axes alone (a bias; an attention mask over the
    scores' last two), its last axis of one (a column) or one element, through the kernel
    installed with tracer (rows on the threads for large arrays, where numpy's loop is one
    thread); None for other shapes, dtypes or layouts, or where its table is not there.
    IEEE's operations one by one, so numpy's bits. `out`, where given, is a C-contiguous
    array of the result's shape and dtype that takes the result, x or y itself included.
    Where one operand has the result's shape, the installed `whole_arithmetic` does all of
    this in C."""
    whole = installed_kernels.whole_arithmetic()
    if whole is not None:
        found = whole(_ARITHMETIC[symbol], x, y, out)
        if found is not None:
            return found
    suffix = installed_kernels.suffix(x.dtype)
    if suffix is None or y.dtype != x.dtype or not conv_kernels.available():
        return None
    shape = _result_shape(x.shape, y.shape)
    kinds = (_operand_kind(x, shape), _operand_kind(y, shape))
    if None in kinds or 0 not in kinds:
        return None
    if 1 in kinds:  # a row of the bias's size: the result's last axes flattened
        columns = (x if kinds[0] == 1 else y).size
    else:
        columns = shape[-1] if shape else 1
    if out is None:
        out = aligned.empty(shape, x.dtype)
    if out.size:
        geometry = np.array([_ARITHMETIC[symbol], out.size // columns, columns, *kinds], np.int64)
        operands = (np.asarray(x), np.asarray(y))  # a numpy scalar has no address
        installed_kernels.call(f"arithmetic_rows_{suffix}", geometry, operands, out)
    return out


def joined(parts, shape, dtype):
    """An array of `shape` and `dtype` (a number's or a bool's) whose elements in C order are
    `parts` one after the other: C-contiguous arrays of `dtype`, each copied whole, and ints,
    that many zeros. Written by the installed `pieces`, on the threads from
    ELEMENTS_PARALLEL_MIN elements, each thread the elements a static loop over them gives
    it, those it wrote in an eager step's last op of that size (runtime/thread_pool.c's owned
    shares; numpy's concatenate and zeros are one thread's, which then reads what the other
    core wrote). None where the kernels are not installed or a part is not such an array."""
    fill = installed_kernels.pieces()
    if fill is None or dtype.kind not in "biufc":
        return None
    data = []
    for part in parts:
        if isinstance(part, int):
            data.append(part * dtype.itemsize)
        elif type(part) is np.ndarray and part.dtype == dtype and part.flags.c_contiguous:
            data.append(part)
        else:
            return None
    return fill(aligned.empty(shape, dtype), tuple(data))


def negative(x):
    """-x of a float32 or float64 array stored in C order, through arithmetic's installed
    kernel (on the threads for large arrays); None for others, or where its table is not
    there. numpy's bits."""
    suffix = installed_kernels.suffix(x.dtype)
    if suffix is None or not x.flags.c_contiguous or not conv_kernels.available():
        return None
    out = aligned.empty(x.shape, x.dtype)
    if out.size:
        columns = x.shape[-1] if x.ndim else 1
        geometry = np.array([_NEGATION, x.size // columns, columns, 0, 3], np.int64)
        installed_kernels.call(f"arithmetic_rows_{suffix}", geometry, (x, x), out)
    return out


def _result_shape(x_shape, y_shape):
    """The broadcast shape of arithmetic's operands; the larger one's at once where the other's
    is the same, its last axis alone (a bias), a scalar, or the same rank with ones where
    the larger has other sizes (a column: a layer norm's mean), where numpy's
    broadcast_shapes takes a microsecond of an eager step's add."""
    if x_shape == y_shape or y_shape == x_shape[-1:] or not y_shape:
        return x_shape
    if x_shape == y_shape[-1:] or not x_shape:
        return y_shape
    if len(x_shape) == len(y_shape):
        if all(b == a or b == 1 for a, b in zip(x_shape, y_shape)):
            return x_shape
        if all(a == b or a == 1 for a, b in zip(x_shape, y_shape)):
            return y_shape
    return np.broadcast_shapes(x_shape, y_shape)


def _operand_kind(x, shape):
    """How an operand of arithmetic's result `shape` is read: 0 whole (its shape, stored in
    C order), 1 one row (the result's last axes, ones before them), 2 one column (the
    result's leading axes, a last axis of one), 3 one element; None for anything else."""
    if x.size == 1:
        return 3
    if not x.flags.c_contiguous or x.ndim > len(shape):
        return None
    padded = (1,) * (len(shape) - x.ndim) + x.shape
    if padded == shape:
        return 0
    leading = next(a for a, size in enumerate(padded) if size != 1)
    if padded[leading:] == shape[leading:]:
        return 1
    if padded[-1] == 1 and padded[:-1] == shape[:-1]:
        return 2
    return None


if __name__ == "__main__":  # python -m codegen.array_math: write the installed loops' header
    with open(LOOPS_HEADER, "w") as handle:
        handle.write(loops_header())
    sys.stdout.write(f"wrote {LOOPS_HEADER}; pip install -e . builds it\n")
