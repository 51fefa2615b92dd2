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


def _buffer_format(dtype):
    """The format numpy's buffer protocol gives arrays of `dtype` (what the Entry compares)."""
    return memoryview(np.empty(0, dtype)).format
