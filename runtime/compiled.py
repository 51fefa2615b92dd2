"""The call path into a compiled module: as little Python per call as possible.

Inputs are taken from numpy without copies when they are already contiguous and of the
right dtype; outputs are allocated here and filled by the C code.
"""

import numpy as np


class CompiledGraph:
    backend = "c"

    def __init__(self, module, plan, meta):
        self._ffi = module.ffi
        self._run = module.lib.tracer_run
        self._plan = plan
        self.c_source = plan.source
        self.meta = meta
        self._constants = [np.ascontiguousarray(c) for c in plan.constants]
        self._count = len(plan.input_dtypes) + len(plan.constants) + len(plan.buffers) + 1

    def __call__(self, arrays):
        plan, ffi = self._plan, self._ffi
        inputs = [np.ascontiguousarray(a, dtype=t) for a, t in zip(arrays, plan.input_dtypes)]
        buffers = [np.empty(shape, dtype) for shape, dtype in plan.buffers]
        workspace = np.empty(max(plan.workspace_bytes, 1), np.uint8)
        args = ffi.new("char *[]", self._count)
        for k, array in enumerate([*inputs, *self._constants, *buffers, workspace]):
            args[k] = ffi.from_buffer(array)
        code = self._run(args)
        if code:
            raise IndexError(plan.errors.get(code, f"compiled code failed with code {code}"))
        results = []
        for kind, where in plan.outputs:
            if kind == "buffer":
                results.append(buffers[where])
            elif kind == "input":
                results.append(np.array(inputs[where]))
            else:
                results.append(np.array(where))
        return results
