"""`tt.print`: print tensors when the code runs, eagerly and in compiled functions.

    @tt.function
    def step(x):
        tt.print("x:", x, "sum:", tt.reduce_sum(x))   # at every call, not at trace time
        return x * 2

Eagerly it prints at once. While a function is traced, the call is kept in order with the
tensors it prints (they become outputs of the compiled code), and each call of the compiled
function prints them, in program order. As in TensorFlow, it writes to standard error by
default, and tensors of more than 2 * summarize elements print their first and last
`summarize` elements around `...`.
"""

import sys

import numpy as np

from tracer import nest
from tracer.context import state
from tracer.ir import user_location
from tracer.tensor import TensorLike


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
        shown = iter(_Shown(_format(v, self.summarize)) for v in values)
        leaves = [next(shown) if leaf is _TENSOR else leaf for leaf in nest.flatten(self.structure)]
        parts = nest.pack_sequence_as(self.structure, leaves)
        text = self.sep.join(p.text if isinstance(p, _Shown) else str(p) for p in parts)
        self.output_stream.write(text + self.end)


_TENSOR = object()  # where a tensor stands in a PrintCall's structure


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
        list(inputs), [_TENSOR if isinstance(leaf, TensorLike) else leaf for leaf in leaves]
    )
    call = PrintCall(structure, output_stream or sys.stderr, sep, end, summarize)
    if state.trace is not None:
        call.location = user_location()
        state.trace.print(call, tensors)
    else:
        call.write([t.numpy() for t in tensors])


def _format(value, summarize):
    value = np.asarray(value)
    if value.ndim == 0:
        return str(value.item())
    threshold = sys.maxsize if summarize is None or summarize < 0 else 2 * summarize
    edges = max(summarize or 0, 1)
    return np.array2string(value, separator=" ", threshold=threshold, edgeitems=edges)
