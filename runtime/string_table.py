"""The strings of a compiled call: what the handles of codegen/string_handles.py name.

A module compiled from a graph that holds tt.string values passes int64 handles where the
graph has strings. Each call keeps a table: the module's string constants first, then the
elements of each string argument; a step that computes on strings (`HOST_FUNCTION`, called
back from the module) reads the strings its input handles name and adds the strings it
makes. The call's string results are read from the table when the module returns; the
table goes with the call.
"""

import threading

import numpy as np

from runtime.host import HOST_FUNCTIONS
from runtime.kernels import KERNELS

HOST_FUNCTION = "tracer.strings_on_host"
_calls = threading.local()  # the tables of the calls running on this thread, innermost last


class StringTable:
    """The strings one call's handles name: handle k is the k-th string added."""

    def __init__(self, constants):
        self._strings = np.empty(max(len(constants), 16), dtype=object)
        self._strings[: len(constants)] = constants
        self._size = len(constants)

    def handles(self, values):
        """Handles (int64, of `values`' shape) of the strings `values` (an array of bytes),
        added to the table."""
        values = np.asarray(values, dtype=object)
        start, end = self._size, self._size + values.size
        if end > len(self._strings):  # grown by doubling: a loop adding strings stays linear
            grown = np.empty(max(end, 2 * len(self._strings)), dtype=object)
            grown[:start] = self._strings[:start]
            self._strings = grown
        self._strings[start:end] = values.ravel()
        self._size = end
        return np.arange(start, end, dtype=np.int64).reshape(values.shape)

    def values(self, handles):
        """The strings (an object array of `handles`' shape) that `handles` name."""
        handles = np.asarray(handles)
        # one comparison finds both kinds of stray handle: a negative one is a large uint64
        if handles.size and handles.view(np.uint64).max() >= self._size:
            raise RuntimeError(
                f"a compiled module passed a string handle outside its call's table of "
                f"{self._size} strings: {handles.min()}..{handles.max()}"
            )
        return self._strings[handles.ravel()].reshape(handles.shape)


class StringLayout:
    """Which inputs and outputs of a module are strings, and the strings of its constants:
    `wrap` makes the module's call take and give strings."""

    def __init__(self, constants, inputs, outputs):
        self.constants = tuple(constants)
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)

    def wrap(self, run):
        """`run` (the module's call, on arrays with handles for strings) on arrays of strings."""
        constants, inputs, outputs = self.constants, self.inputs, self.outputs

        def call(arrays):
            table = StringTable(constants)
            arrays = [table.handles(a) if s else a for a, s in zip(arrays, inputs)]
            running = _running()
            running.append(table)
            try:
                results = run(arrays)
            finally:
                running.pop()
            return [table.values(r) if s else r for r, s in zip(results, outputs)]

        return call


def _running():
    try:
        return _calls.tables
    except AttributeError:
        _calls.tables = []
        return _calls.tables


def _on_host(values, out, op, attrs, strings, string_result):
    """A step computing on strings: op's numpy kernel on the strings its handles name."""
    running = _running()
    if not running:
        raise RuntimeError(f"{op}: a string step ran outside a call of its compiled module")
    table = running[-1]
    arguments = [table.values(v) if s else v for v, s in zip(values, strings)]
    result = np.asarray(KERNELS[op](*arguments, **attrs))
    out[...] = (table.handles(result) if string_result else result).reshape(-1)


HOST_FUNCTIONS[HOST_FUNCTION] = _on_host
