"""`tt.print`: print tensors when the code runs, eagerly and in compiled functions.

    @tt.function
    def step(x):
        tt.print("x:", x, "sum:", tt.reduce_sum(x))   # at every call, not at trace time
        return x * 2

Eagerly it prints at once. While a function is traced, the call becomes a `print` node,
which prints when it runs: at every call of the compiled function, and at every iteration
of a loop or in the branch taken, as TensorFlow's tf.print does in a tf.function. Compiled,
the module calls the node's Python function back (codegen.forms.HostCall). As a side
effect with no result, each node reads and writes a hidden variable, the print stream
(`STREAM`, a count of the prints): that keeps the node alive through the passes (it
assigns a variable, which every loop and branch carries out) and the prints in program
order (each reads the count the one before wrote). As in TensorFlow, it writes to standard
error by default (or to the stream, `file://<path>` or logging function of `output_stream`),
and tensors of more than 2 * summarize elements print their first and last `summarize`
elements around `...`.
"""

import sys

import numpy as np

from codegen import forms
from runtime.host import HOST_FUNCTIONS
from runtime.kernels import element_array
from tracer import dtypes, nest
from tracer.context import state
from tracer.ir import user_location
from tracer.ops.core import apply
from tracer.ops.registry import primitive, unbatchable
from tracer.tensor import TensorLike
from tracer.variable import Variable


class PrintCall:
    """One tt.print call: its inputs as a structure with tensors taken out, and how to write."""

    __slots__ = ("structure", "output_stream", "sep", "end", "summarize", "location")

    def __init__(self, structure, output_stream, sep, end, summarize, location=None):
        self.structure = structure
        self.output_stream = output_stream
        self.sep = sep
        self.end = end
        self.summarize = summarize
        self.location = location  # the user's (file, line), when traced

    def write(self, values):
        """Write the call with `values` (numpy arrays) in place of its tensors."""
        shown = iter(_Shown(format_value(v, self.summarize)) for v in values)
        leaves = [next(shown) if leaf is TENSOR else leaf for leaf in nest.flatten(self.structure)]
        parts = nest.pack_sequence_as(self.structure, leaves)
        text = self.sep.join(p.text if isinstance(p, _Shown) else str(p) for p in parts)
        self.output_stream.write(text + self.end)


TENSOR = object()  # where a tensor stands in a PrintCall's structure


class _Shown:
    """A formatted tensor: its text, also when it sits inside a list or dict that str() shows."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def print(*inputs, output_stream=None, sep=" ", end="\n", summarize=3, name=None):
    """Print `inputs` (tensors, variables, Python values and structures of them) when this
    line runs: at once eagerly, at every call of a compiled function (not at trace time)."""
    leaves = nest.flatten(list(inputs))
    tensors = [leaf._read() for leaf in leaves if isinstance(leaf, TensorLike)]
    structure = nest.pack_sequence_as(
        list(inputs), [TENSOR if isinstance(leaf, TensorLike) else leaf for leaf in leaves]
    )
    call = PrintCall(structure, _writer(output_stream), sep, end, summarize)
    if state.trace is not None:
        call.location = user_location()
        state.trace.check_print(STREAM)
        STREAM.assign(apply(PRINT, (STREAM._read(), *tensors), {"call": call}))
    else:
        call.write([t.numpy() for t in tensors])


class _AppendedTo:
    """A `file://` output stream: each print appended to the file, as TensorFlow's."""

    __slots__ = ("path",)

    def __init__(self, path):
        self.path = path

    def write(self, text):
        with open(self.path, "a") as file:
            file.write(text)


class _Logged:
    """A logging function as an output stream (`logging.info`): each print one message,
    without its trailing line break."""

    __slots__ = ("log",)

    def __init__(self, log):
        self.log = log

    def write(self, text):
        self.log(text[:-1] if text.endswith("\n") else text)


def _writer(output_stream):
    """What a print writes to: standard error by default, a stream, a file named
    `file://<path>` (appended to) or a logging function, as TensorFlow's output_stream."""
    if output_stream is None:
        return sys.stderr
    if isinstance(output_stream, str):
        if not output_stream.startswith("file://"):
            raise ValueError(
                f"tt.print: unsupported output stream {output_stream!r}: a stream such as "
                "sys.stdout, a logging function, or a file as 'file://<path>'"
            )
        return _AppendedTo(output_stream[len("file://") :])
    if not hasattr(output_stream, "write") and callable(output_stream):
        return _Logged(output_stream)
    return output_stream


def format_value(value, summarize):
    """A value as TensorFlow's tf.print (and tt.strings.format) writes it: `[1 2 3]`, floats
    with the digits they need (`0.744097471`), bools as 1 and 0, strings quoted, the middle of long axes as `...`; complex
    values as `?` (at most three, then `...`) and an empty array whose first axis is not
    empty as `[`, a line break per further axis, ` ...]`, as TensorFlow prints them."""
    value = np.asarray(element_array(value))  # a string scalar's `.numpy()` is its bytes
    if value.dtype.kind == "c":  # TensorFlow's tf.print has no format for complex values
        if value.ndim == 0:
            return "?"
        return "[" + " ".join("?" * min(value.size, 3)) + ("..." if value.size > 3 else "") + "]"
    if value.size == 0 and value.ndim > 1 and value.shape[0] > 0:
        return "[" + "\n" * (value.ndim - 1) + " ...]"  # TensorFlow's text, as it writes it
    element = _element_format(value.dtype)
    if value.ndim == 0:
        return element(value[()])
    if value.size == 0:
        return "[]"
    summarized = summarize is not None and 0 <= summarize and 2 * summarize < value.size
    return _array_text(value, element, max(summarize, 1) if summarized else None)


def _array_text(value, element, edge, indent=" "):
    """`value` (one axis or more, not empty) as numpy's `array2string` writes it with no line
    width and `element` for each element: the rows of each axis in brackets, set apart by
    one line break more per axis below it and indented one space more per axis above it; an
    axis longer than 2 * `edge` (None: no limit) shows its first and last `edge` rows around
    `...`.

        >>> _array_text(np.arange(6).reshape(2, 3), str, edge=1)
        '[[0 ... 2]\n [3 ... 5]]'
    """
    # NOTE: not np.array2string itself: it grows the line a word at a time, which on one
    # line of any length takes time quadratic in the number of elements (summarize=-1)
    long = edge is not None and 2 * edge < len(value)
    parts = (value[:edge], value[-edge:]) if long else (value,)
    if value.ndim == 1:
        between = " "
        texts = [between.join(map(element, part.tolist())) for part in parts]
    else:
        between = "\n" * (value.ndim - 1) + indent
        inner = indent + " "
        texts = [
            between.join(_array_text(row, element, edge, inner) for row in part) for part in parts
        ]
    return "[" + (between + "..." + between).join(texts) + "]"


def _element_format(dtype):
    """How tf.print writes one element of `dtype` (TensorFlow's C++ `SummarizeValue`)."""
    if dtype.kind == "b":
        return lambda v: "1" if v else "0"
    if dtype.kind == "f":
        return _shortest_float if dtype.itemsize <= 4 else _shortest_double
    if dtype.kind == "O":
        return _quoted_string
    return str


# C's escapes, as absl's Utf8SafeCEscape (which tf.print applies to strings) writes them
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "'": "\\'", "\\": "\\\\"}


def _quoted_string(value):
    """A tt.string element as tf.print writes it: in double quotes, with C's escapes for
    quotes, backslashes and control characters, and UTF-8 text as it is. A byte that is not
    UTF-8 is written `\\xff` (TensorFlow writes the raw byte, which a text stream cannot
    take)."""
    return '"' + "".join(map(_escaped, value.decode("utf-8", errors="surrogateescape"))) + '"'


def _escaped(character):
    code = ord(character)
    if character in _ESCAPES:
        return _ESCAPES[character]
    if code < 0x20 or code == 0x7F:
        return f"\\{code:03o}"
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as surrogateescape keeps it
        return f"\\x{code - 0xDC00:02x}"
    return character


def _shortest_float(value):
    """TensorFlow's `FloatToBuffer`: 6 significant digits, or 9 where 6 do not give the
    float32 back (`0.744097471`, `1`, `1e-08`)."""
    text = f"{value:.6g}"
    return text if np.float32(text) == value else f"{value:.9g}"


def _shortest_double(value):
    """TensorFlow's `DoubleToBuffer`: 15 significant digits, or 17 where 15 do not give the
    float64 back (`0.1`, `0.33333333333333331`)."""
    text = f"{value:.15g}"
    return text if float(text) == value else f"{value:.17g}"


def _infer(attrs, stream, *values):
    return (), dtypes.int64


def _kernel(stream, *values, call):
    """Print, and count the print."""
    call.write([np.asarray(v) for v in values])
    return np.asarray(stream + 1, dtype=np.int64)


def _print_from_c(values, out, call):
    """The host function of the compiled module: the same, on the arrays it hands over."""
    call.write(values[1:])
    out[0] = values[0] + 1


HOST_FUNCTION = "tracer.print"
HOST_FUNCTIONS[HOST_FUNCTION] = _print_from_c

PRINT = primitive(
    "print",
    _infer,
    strings=True,
    kernel=_kernel,
    c=forms.HostCall(lambda node: (HOST_FUNCTION, {"call": node.attrs["call"]}), reads_all=True),
    batch=unbatchable(
        "(tt.print) prints each value as it is: print outside the vectorized function"
    ),
)

# the print stream: each print node reads the count and writes it plus one (see above)
STREAM = Variable(np.int64(0), trainable=False, name="tt.print stream")


def side_effects(assigned):
    """What assigning the variables `assigned` does, in words ("calls tt.print", "assigns v")."""
    return " and ".join("calls tt.print" if v is STREAM else f"assigns {v.name}" for v in assigned)


def refuse_prints(assigned, what, why):
    """NotImplementedError if a function traced for `what` printed (`assigned`: the variables
    it assigns), where its prints would be lost or repeated (`why`)."""
    if any(v is STREAM for v in assigned):
        raise NotImplementedError(f"tt.print inside {what} is not supported: {why}")
