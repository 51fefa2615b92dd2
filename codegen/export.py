"""Standalone C: graphs lowered into a header, a source and a Makefile that need no Python,
no tracer runtime and no allocation (docs/export-c.md).

Each entry point is a graph lowered as for a compiled module (`codegen.lower.lower`), its
kernels named after the entry. Where a module takes `char **args`, the entry point takes
named pointers and fills that array itself; constants (and frozen variables) are
`static const` arrays of the source; every intermediate lives in one workspace the caller
gives, of `<prefix>_work_size(dims)` bytes. The source is C99 with no OpenMP pragma and no
machine-specific flag; CBLAS is called only where `<PREFIX>_USE_CBLAS` is defined.
"""

import hashlib
import re
import unicodedata

import numpy as np

from codegen import templates, units
from codegen.ctypes import float_literal, storage
from codegen.forms import HostCall, NotCompiled
from codegen.libc import LIBRARY_NAMES, LIBRARY_PATTERN
from codegen.lower import ALIGN, lower, text_shape
from codegen.targets import EXPORTED_C
from tracer.ir import LEAF_OPS, all_nodes, dims, format_location

EXPORTED_DTYPES = ("float32", "float64", "complex64", "complex128", "int32", "int64", "bool")
# C99's keywords, C11's and C23's, and C++'s (the header is C++ too: `extern "C"`)
C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if "
    "inline int long register restrict return short signed sizeof static struct switch "
    "typedef union unsigned void volatile while _Bool _Complex _Imaginary "
    "alignas alignof bool constexpr false nullptr static_assert thread_local true typeof "
    "typeof_unqual _Alignas _Alignof _Atomic _BitInt _Generic _Noreturn _Static_assert "
    "_Thread_local "
    "and and_eq asm bitand bitor catch char8_t char16_t char32_t class compl concept "
    "const_cast consteval constinit co_await co_return co_yield decltype delete dynamic_cast "
    "explicit export friend mutable namespace new noexcept not not_eq operator or or_eq "
    "private protected public reinterpret_cast requires static_cast template this throw try "
    "typeid typename using virtual wchar_t xor xor_eq".split()
)
# what the generated C names itself: the prologue's macros and helpers (TR_*, tr_*), the
# CBLAS and LAPACKE it may include, and the locals of an entry point, where its arguments
# are in scope
_GENERATED_PATTERN = re.compile(r"TR_|tr_|cblas_|Cblas|CBLAS_|LAPACK|lapack")
_ENTRY_LOCALS = frozenset("args dims work code".split())
# A name past these lengths is cut, with a hash of the whole: 63 characters are all C99
# promises to tell apart; a function's name is shorter, as the names made from it
# (PREFIX_error_message, PREFIX_jacobian) must fit too, and it names the files.
MAX_NAME = 63
MAX_FILE_SCOPE_NAME = 40
# headers a prefix must not shadow (`cc -I DIR` reads DIR's math.h for <math.h>), and
# the names Windows gives its devices; compared without case, as file systems may
_FILE_NAMES = frozenset(
    "assert complex ctype errno fenv float inttypes iso646 limits locale math setjmp signal "
    "stdalign stdarg stdatomic stdbool stddef stdint stdio stdlib stdnoreturn string tgmath "
    "threads time uchar wchar wctype cblas lapacke lapack alloca endian features malloc "
    "memory pthread strings unistd con prn aux nul".split()
    + [f"{device}{k}" for device in ("com", "lpt") for k in range(1, 10)]
)
# The largest array exported C holds, in bytes: PTRDIFF_MAX of a 64-bit target, the
# largest object C compilers accept; int64_t then indexes every element, and a size_t
# holds every size.
MAX_BYTES = 2**63 - 1


class ExportError(ValueError):
    """A graph that has no standalone C: the op, dtype or line that stops it is named."""


class Entry:
    """One exported function: `graph`, the names of its inputs and of its first
    len(output_names) outputs (as Python gives them: parameters, variables, dict keys;
    `export_sources` makes them C identifiers); the outputs after those are the new values
    of inputs (`updates`: output position -> input position), which the caller passes
    read-write. `frozen` maps an input position to the array built into the source in its
    place."""

    def __init__(self, name, graph, input_names, output_names, updates=None, frozen=None):
        self.name = name
        self.graph = graph
        self.input_names = list(input_names)
        self.output_names = list(output_names)
        self.updates = dict(updates or {})
        self.frozen = dict(frozen or {})
        self.summary = ""  # one line for the header: what the entry computes


def identifier(name, taken=(), file_scope=False):
    """A C identifier for `name` (a Python name, a variable's, a dict key), the same for
    the same arguments: none that C, C++, the C library or the generated code reserves,
    and none in `taken`.

    After NFKC normalization (as Python normalizes its identifiers), ASCII characters other
    than letters, digits and `_` become `_`, and others `u` and their code point in hex
    (`U` and 8 digits past FFFF). A reserved name (a keyword of C or C++; a name the C
    library's headers declare, or of the patterns the standard reserves for them: `_` and
    an uppercase letter or `_`, E and an uppercase letter or digit, int..._t, INT..._MAX;
    the generated code's TR_*, tr_*, cblas_*, LAPACKE_*, ...; a leading digit; at
    `file_scope`, `main` and any leading `_`; elsewhere, the entry point's locals) gets
    `py_` in front, or `py` before a `_`. A name over 63 characters (40 at `file_scope`)
    is cut, and ends with a hash of the whole; one in `taken` gets `_1`, `_2`, ...

        >>> identifier("sin"), identifier("_Bool"), identifier("α"), identifier("x", {"x"})
        ('py_sin', 'py_Bool', 'u03b1', 'x_1')
    """
    text = unicodedata.normalize("NFKC", str(name))
    cleaned = "".join(map(_ascii, text)) or "arg"
    if _reserved(cleaned, file_scope):
        cleaned = ("py" if cleaned[0] == "_" else "py_") + cleaned
    limit = MAX_FILE_SCOPE_NAME if file_scope else MAX_NAME
    unique, k = _shortened(cleaned, limit, str(name)), 0
    while unique in taken:
        k += 1
        unique = _shortened(f"{cleaned}_{k}", limit, f"{name}\0{k}")
    return unique


def prefix_name(name):
    """The C prefix of an exported file (its functions' names start with it, and its files
    are PREFIX.h, PREFIX.c): `identifier` at file scope, and no standard header's name.

        >>> prefix_name("math"), prefix_name("arm")
        ('py_math', 'arm')
    """
    prefix = identifier(name, file_scope=True)
    return identifier(f"py_{prefix}", file_scope=True) if prefix.lower() in _FILE_NAMES else prefix


def _ascii(char):
    if char.isascii():
        return char if char.isalnum() or char == "_" else "_"
    point = ord(char)
    return f"u{point:04x}" if point <= 0xFFFF else f"U{point:08x}"


def _reserved(name, file_scope):
    return (
        name in C_KEYWORDS
        or name in LIBRARY_NAMES
        or bool(LIBRARY_PATTERN.match(name) or _GENERATED_PATTERN.match(name))
        or name[0].isdigit()
        or (file_scope and (name[0] == "_" or name == "main"))
        or (not file_scope and name in _ENTRY_LOCALS)
    )


def _shortened(name, limit, whole):
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(whole.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{name[: limit - 9]}_{digest}"


def export_sources(prefix, entries, native=False, origin=""):
    """{file name: text} of `prefix`.h, `prefix`.c and the Makefile for `entries`; the
    prefix, the entries' names and their arguments' made C identifiers (`prefix_name`,
    `identifier`), each one the header shows beside the name it was given."""
    prefix = prefix_name(prefix)
    macro = prefix.upper() + "_USE_CBLAS"
    # the names of the file's functions and static arrays, each one once
    statics = {f"{prefix}_{name}" for name in ("work_size", "error_message", "larger")}
    rendered, helpers, errors = [], {}, {}
    for entry in entries:
        _check(entry)
        name = identifier(entry.name, statics, file_scope=True)
        statics.add(name)
        plan = lower(
            entry.graph,
            title=name,
            blas=True,
            updates=entry.updates,
            names=f"{name}_",
            cblas_guard=macro,
            first_error=len(errors),
            in_place=False,
            compact_calls=False,  # every call written out, however many: a file to read
            target=EXPORTED_C,
        )
        errors.update({code: message for code, (_, message) in plan.errors.items()})
        helpers.update(dict.fromkeys(plan.helpers))
        rendered.append(_entry_context(entry, name, plan, statics))
    symbols = sorted({s for r in rendered for s in r["symbols"]}, key=dims.symbol_order)
    values = dict(
        prefix=prefix,
        guard=re.sub(r"\W", "_", prefix.upper()) + "_H",
        cblas_macro=macro,
        entries=rendered,
        symbols=symbols,
        errors=sorted(errors.items()),
        origin=_comment(origin),
    )
    prologue = templates.render(
        "prologue.h.j2",
        title=prefix,
        libc=None,
        vector_math=False,
        helpers=list(helpers),
        compact=False,
    )
    return {
        f"{prefix}.h": templates.render("export.h.j2", **values),
        f"{prefix}.c": templates.render("export.c.j2", prologue=prologue, **values),
        "Makefile": templates.render("export.mk.j2", native=native, **values),
    }


def _check(entry):
    """Raise ExportError for what standalone C cannot hold."""
    arguments = {id(node): name for node, name in zip(entry.graph.inputs, entry.input_names)}
    for node in all_nodes(entry.graph):
        is_tuple = getattr(node.dtype, "is_tuple", False)
        arrays = node.dtype.parts if is_tuple else [(node.shape, node.dtype)]
        for _, dtype in arrays:
            if dtype.name not in EXPORTED_DTYPES:
                raise ExportError(
                    f"{entry.name}: {node.op}{_where(node)} computes {dtype.name} values; "
                    f"exported C holds {', '.join(EXPORTED_DTYPES)}"
                )
        form = EXPORTED_C.form_for(node.op)
        if node.op not in LEAF_OPS and (form is None or isinstance(form, NotCompiled)):
            reason = f": {form.reason}" if form is not None else ""
            raise ExportError(f"{entry.name}: {node.op}{_where(node)} has no C form{reason}")
        if isinstance(form, HostCall):
            raise ExportError(
                f"{entry.name}: {node.op}{_where(node)} calls back into Python, which exported "
                "C does not have; export the function without it (the gradients, say) and "
                "combine its results in the C program (with MPI_Allreduce, say)"
            )
        for shape, dtype in arrays:
            if _least(_c_bytes_of(shape, dtype)) > MAX_BYTES:
                name = arguments.get(id(node))
                what = f"argument {name}" if name is not None else f"{node.op}{_where(node)}"
                raise ExportError(f"{entry.name}: {what} {_too_large(shape, dtype)}")


def _least(size):
    """A size's least value (unknown sizes are at least 1), or the largest coefficient of a
    polynomial of sizes if more (it is a C constant as well)."""
    if isinstance(size, dims.Dim):
        least = size.evaluate(dict.fromkeys(size.symbols, 1))
        return max(least, *(abs(coefficient) for _, coefficient in size.terms))
    return size


def _too_large(shape, dtype):
    elements = dims.size(shape)
    return (
        f"of shape [{', '.join(map(str, shape))}] ({dtype.name}) holds {elements} elements, "
        f"{_c_bytes_of(shape, dtype)} bytes: exported C indexes arrays of at most "
        f"{MAX_BYTES} bytes (2**63 - 1, the largest object C compilers accept)"
    )


def _where(node):
    where = format_location(node.location)
    return f" (at {where})" if where else ""


def _entry_context(entry, name, plan, statics):
    """What export.c.j2 and export.h.j2 need of the entry point `name`; its static arrays
    and functions are named apart from `statics` (and added to them)."""
    graph = entry.graph
    n_inputs, n_constants = len(graph.inputs), len(plan.constants)
    input_names, output_names = _argument_names(entry, plan.symbols)
    scope = {*input_names, *output_names, *plan.symbols}  # the entry point's arguments

    def static(stem):  # a file-scope name, which no argument hides inside the entry point
        unique = identifier(stem, statics | scope, file_scope=True)
        statics.add(unique)
        return unique

    slots, params, outputs, before, after, docs = [], [], [], [], [], []
    arrays = []  # (C name, C type, initializer) of the static arrays: constants, frozen inputs
    for k, node in enumerate(graph.inputs):
        c_name = input_names[k]
        if k in entry.frozen:
            array_name = static(f"{name}_{c_name}")
            arrays.append(_static_array(array_name, entry.frozen[k]))
            slots.append(f"(char *){array_name}")
            continue
        written = k in plan.updated_inputs
        params.append(f"{'' if written else 'const '}{storage(node.dtype)} *{c_name}")
        slots.append(f"(char *){c_name}")
        role = "input, read and written (its new value)" if written else "input"
        shape = _shape_text(node.dtype, plan.input_shapes[k])
        docs.append((c_name, shape, _role(role, entry.input_names[k], c_name)))
    for j, array in enumerate(plan.constants):
        array_name = static(f"{name}_c{j}")
        arrays.append(_static_array(array_name, array))
        slots.append(f"(char *){array_name}")
    buffer_slots = [None] * len(plan.buffers)
    for position, c_name in enumerate(output_names):
        out = graph.outputs[position]
        kind, where = plan.outputs[position]
        outputs.append(f"{storage(out.dtype)} *{c_name}")
        role = _role("output", entry.output_names[position], c_name)
        docs.append((c_name, _shape_text(out.dtype, text_shape(out.shape)), role))
        if kind == "buffer" and buffer_slots[where] is None:
            buffer_slots[where] = f"(char *){c_name}"
            continue
        if kind == "buffer":  # an output the function returns twice
            source = buffer_slots[where]
        elif kind == "constant":  # a static array of its own
            array_name = static(f"{name}_out{position}")
            arrays.append(_static_array(array_name, where))
            source = f"(const char *){array_name}"
        else:  # "input", "input before": an argument returned as it is
            source = slots[where]
        copy = f"memcpy({c_name}, {source}, {_c(_c_bytes(out))});"
        (before if kind == "input before" else after).append(copy)
    work_bytes, least = _c(plan.workspace_bytes), _least(plan.workspace_bytes)
    for k, slot in enumerate(buffer_slots):
        if slot is None:  # a buffer no output names (an input's old value): in the workspace
            shape, dtype = plan.buffers[k]
            start = f"(({work_bytes} + {ALIGN - 1}) / {ALIGN} * {ALIGN})"
            buffer_slots[k] = f"((char *)work + {start})"
            work_bytes = f"({start} + {_c(_c_bytes_of(shape, dtype))})"
            least = -(-least // ALIGN) * ALIGN + _least(_c_bytes_of(shape, dtype))
    if least > MAX_BYTES:
        raise ExportError(
            f"{entry.name}: its workspace needs {least} bytes: exported C indexes arrays of at "
            f"most {MAX_BYTES} bytes (2**63 - 1, the largest object C compilers accept)"
        )
    slots += buffer_slots
    slots.append("(char *)work")
    if plan.symbols:
        slots.append("(char *)dims")
    run_name = static(f"{name}_run")
    return dict(
        name=name,
        summary=_comment(entry.summary),
        symbols=plan.symbols,
        params=[*params, *(f"int64_t {s}" for s in plan.symbols), *outputs, "void *work"],
        docs=docs,
        arrays=arrays,
        slots=slots,
        before=before,
        after=after,
        work_bytes=work_bytes,
        run_name=run_name,
        run=templates.render(
            "module.c.j2",
            prologue="",
            entry_point=f"static int {run_name}",
            # one file: every kernel defined before it is called, none in a block, and no
            # estimates of compile work
            layout=units.Layout(
                [],
                [(_without_openmp(kernel), None) for kernel, _ in plan.layout.kernels],
                ["#if TR_IN_UNIT"] * len(plan.layout.parts),
                "#if TR_IN_UNIT",
            ),
            parts=plan.parts,
            title=name,
            n_inputs=n_inputs,
            n_constants=n_constants,
            n_outputs=len(plan.buffers),
            dims=plan.symbols,
            n_host_calls=0,  # (refused by _check: exported C has no Python to call)
            offered=[],  # nothing to lend: its kernels are its program's alone
        ),
    )


def _argument_names(entry, symbols):
    """The C names of `entry`'s inputs and outputs, in order: each one once, none of the
    sizes `symbols` (d0, ...) or the entry point's own locals."""
    taken = set(symbols)
    names = []
    for given in [*entry.input_names, *entry.output_names]:
        names.append(identifier(given, taken))
        taken.add(names[-1])
    return names[: len(entry.input_names)], names[len(entry.input_names) :]


def _role(role, given, c_name):
    """A header line's role of an argument, with its name where C's is another."""
    return role if str(given) == c_name else _comment(f"{role} (named {given!r} in Python)")


def _comment(text):
    """`text` as it can stand in a C comment: printable ASCII (other characters escaped),
    no comment delimiter, no trigraph."""
    text = str(text).encode("ascii", "backslashreplace").decode()
    text = re.sub(r"[^ -~]", " ", text)
    return text.replace("*/", "*\\/").replace("/*", "/\\*").replace("??", "?\\?")


def _static_array(name, array):
    """(name, C element type, initializer) of `array` as a static const array (one element
    at least: C has no empty arrays)."""
    array = np.ascontiguousarray(array)
    if array.dtype.kind == "c":  # C99: a complex is an array of its real and imaginary parts
        array = array.view(array.real.dtype)
    flat = array.reshape(-1)
    if array.dtype == np.bool_:
        items = ["1" if v else "0" for v in flat]
    elif array.dtype.kind in "iu":
        items = [_integer_literal(int(v), array.dtype) for v in flat]
    else:
        suffix = "f" if array.dtype == np.float32 else ""
        items = [_float_item(float(v), suffix) for v in flat]
    ctype = {"bool": "bool", "float32": "float", "float64": "double"}.get(
        array.dtype.name, f"{array.dtype.name}_t"
    )
    return (name, ctype, len(items) or 1, ", ".join(items) or "0")


def _float_item(value, suffix):
    text = float_literal(value)
    return text + suffix if text[-1].isdigit() else text


def _integer_literal(value, dtype):
    """An integer literal of `dtype` (the most negative value written as C requires)."""
    bits = np.dtype(dtype).itemsize * 8
    if value == -(2 ** (bits - 1)):
        return f"(-INT{bits}_C({2 ** (bits - 1) - 1}) - 1)"
    return f"INT{bits}_C({value})"


def _without_openmp(kernel):
    """A kernel without its OpenMP pragmas: exported C is plain C99 (compilers warn of
    pragmas they do not know)."""
    return "".join(
        line for line in kernel.splitlines(True) if not line.lstrip().startswith("#pragma omp")
    )


def _shape_text(dtype, shape):
    return f"{dtype.name}[{', '.join(str(d) for d in shape)}]"


def _c_bytes(node):
    return _c_bytes_of(node.shape, node.dtype)


def _c_bytes_of(shape, dtype):
    itemsize = np.dtype(getattr(dtype, "as_numpy_dtype", dtype)).itemsize
    return dims.size(shape) * itemsize


def _c(size):
    """A size (an int, or a Dim of the dims) as a C expression."""
    return f"(size_t)({size})"


EXPORTED_C.implement(emitter=export_sources)
