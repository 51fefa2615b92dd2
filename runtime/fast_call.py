"""A compiled function's call path in C (fast_call.c): where it applies, and its Entry.

The generated Python function of runtime/compiled.py defines a call; for a signature a
program calls again and again with arrays of the traced shapes and dtypes, an Entry does the
same steps in C, without the Python function's per-call work, which is most of a small
function's time, and more for a training step of many variables. It applies to modules
whose sizes are all known, that call no Python function and hold no tt.string handles,
write only variables and return their results in buffers of their own. The extension is
optional, as the eager op path in C is: where it was not built, every call takes the
Python function (runtime/native.py loads it).
"""

import numpy as np

from runtime import aligned, native

_extension = native.load("fast_call")


def available():
    return _extension is not None


PACKS = {"one": 0, "list": 1, "tuple": 2}


def entry(compiled, arguments, pattern, variables, names, guards, wrap, n_outputs, pack):
    """The Entry of `compiled` (a CompiledGraph) for calls whose positional arguments fit
    `pattern`: `arguments` (a class) where a tensor goes, whose attribute `names[0]` holds the
    array, else the value the argument must equal. The tensors' arrays are followed by those
    of `variables`; those the module writes must have their attribute `names[1]` false (no
    snapshot shares the array). The first `n_outputs` outputs are the result, as `pack` says
    ("one", "list" or "tuple" of `wrap(array)`); the rest must be the variables written in
    place. None where it does not apply; calls return None when any of `guards`' (object,
    attribute) pairs is truthy."""
    plan = compiled.plan
    results, finals = plan.outputs[:n_outputs], plan.outputs[n_outputs:]
    n_tensors = sum(1 for item in pattern if item is arguments)
    if (
        _extension is None
        or plan.dims
        or plan.host_calls
        or plan.strings is not None
        or any(kind != "buffer" for kind, _ in results)
        or any(kind != "updated" for kind, _ in finals)
        or {where for _, where in finals} != set(plan.updated_inputs)
        or n_tensors + len(variables) != len(plan.input_dtypes)
        or any(position < n_tensors for position in plan.updated_inputs)
        or not isinstance(plan.workspace_bytes, int)
    ):
        return None
    inputs = tuple(
        (_buffer_format(dtype), tuple(shape))
        for dtype, shape in zip(plan.input_dtypes, plan.input_shapes)
    )
    value_name, shared_name = names
    return _extension.Entry(
        run=compiled.run_address,
        arguments=arguments,
        pattern=tuple(pattern),
        variables=tuple(variables),
        value_name=value_name,
        inputs=inputs,
        updated=tuple(sorted(plan.updated_inputs)),
        shared_name=shared_name,
        constants=tuple(compiled.constants),
        buffers=tuple((tuple(shape), np.dtype(dtype)) for shape, dtype in plan.buffers),
        outputs=tuple(where for _, where in results),
        pack=PACKS[pack],
        workspace_bytes=plan.workspace_bytes,
        guards=tuple(guards),
        empty=aligned.allocator_for(plan.buffers),
        wrap=wrap,
        failed=compiled.error,
        workspace=compiled.workspace,
    )


def runs_each(compiled):
    """Whether `run_each` can run `compiled` (a CompiledGraph) on a batch: the extension is
    there, the module's sizes are all known, it calls no Python function, holds no string
    handles, writes no input in place, and its results are its buffers, its inputs or its
    constants."""
    plan = compiled.plan
    return not (
        _extension is None
        or plan.dims
        or plan.host_calls
        or plan.strings is not None
        or plan.updated_inputs
        or not isinstance(plan.workspace_bytes, int)
        or any(kind not in ("buffer", "input", "constant") for kind, _ in plan.outputs)
    )


def run_each(compiled, arrays, batched, count):
    """The outputs of `compiled` (a CompiledGraph) for each of `count` elements, stacked along
    a new leading axis: the first `batched` of `arrays` are the elements' inputs, stacked so
    (each of the plan's dtype), the others (variables) the same for every element. The module
    runs once per element, as `count` calls would run it, from one call into C: the same
    bits. None where that needs more than pointers moved on from element to element (sizes
    known at run time, Python callbacks, string handles, inputs written in place), or the
    extension is missing; an element whose run fails raises its error."""
    plan = compiled.plan
    if not runs_each(compiled) or len(arrays) != len(plan.input_dtypes):
        return None
    inputs = []
    for k, (array, dtype, shape) in enumerate(zip(arrays, plan.input_dtypes, plan.input_shapes)):
        expected = (count, *shape) if k < batched else tuple(shape)
        array = np.asarray(array, dtype, order="C")  # (0-d stays 0-d, as a variable's)
        if array.shape != expected:
            return None
        inputs.append(array)
    buffers = [aligned.empty((count, *shape), dtype) for shape, dtype in plan.buffers]
    workspace = compiled.workspace() if plan.workspace_bytes else None
    slots = np.zeros(len(inputs) + len(compiled.constants) + len(buffers) + 1, np.uintp)
    held = [*inputs, *compiled.constants, *buffers]
    if workspace is not None:
        held.append(workspace)
    for k, array in enumerate(held):
        slots[k] = array.ctypes.data
    # each element's inputs and outputs follow the one before (count is at least 1)
    first_buffer = len(inputs) + len(compiled.constants)
    strided = tuple((k, a.nbytes // count) for k, a in enumerate(inputs[:batched])) + tuple(
        (first_buffer + k, b.nbytes // count) for k, b in enumerate(buffers)
    )
    try:
        failed = _extension.run_each(compiled.run_address, slots.ctypes.data, count, strided)
    finally:
        if workspace is not None:
            compiled.keep_workspace(workspace)
    if failed is not None:
        raise compiled.error(failed[1])
    return [
        _stacked_output(kind, where, buffers, inputs, batched, count)
        for kind, where in plan.outputs
    ]


def _stacked_output(kind, where, buffers, inputs, batched, count):
    """Output (`kind`, `where`) of the plan for each of `count` elements, stacked."""
    if kind == "buffer":
        return buffers[where]
    single = where if kind == "constant" else inputs[where]
    if kind == "input" and where < batched:
        return single.copy()
    return np.array(np.broadcast_to(single, (count, *np.shape(single))))


def _buffer_format(dtype):
    """The format numpy's buffer protocol gives arrays of `dtype` (what the Entry compares)."""
    return memoryview(np.empty(0, dtype)).format
