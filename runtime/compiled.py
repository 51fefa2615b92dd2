"""The call path into a compiled module: as little Python per call as possible.

Inputs are taken from numpy without copies when they are already contiguous and of the
right dtype; outputs are allocated here and filled by the C code.
"""

import threading

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
        n_inputs = len(plan.input_dtypes)
        self._input_dtypes = [np.dtype(t) for t in plan.input_dtypes]
        self._constant_slots = [(n_inputs + k, module.ffi.from_buffer(c)) for k, c in enumerate(self._constants)]
        first_buffer = n_inputs + len(self._constants)
        self._buffer_slots = [(first_buffer + k, b) for k, b in enumerate(plan.buffers)]
        self._all_buffers = [kind for kind, _ in plan.outputs] == ["buffer"] * len(plan.buffers) and [
            where for _, where in plan.outputs
        ] == list(range(len(plan.buffers)))
        self._count = n_inputs + len(plan.constants) + len(plan.buffers) + 1
        self._args_type = f"char *[{self._count}]"
        self._per_thread = threading.local()

    def __call__(self, arrays):
        plan, ffi = self._plan, self._ffi
        args = getattr(self._per_thread, "args", None)
        if args is None:  # one argument array per thread, so calls from threads do not mix
            args = self._per_thread.args = ffi.new(self._args_type)
        keep = []  # the arrays whose memory the C code reads or writes during the call
        for k, (array, dtype) in enumerate(zip(arrays, self._input_dtypes)):
            if type(array) is not np.ndarray or array.dtype != dtype or not array.flags.c_contiguous:
                array = np.ascontiguousarray(array, dtype=dtype)
            keep.append(array)
            args[k] = ffi.from_buffer(array)
        for k, pointer in self._constant_slots:
            args[k] = pointer
        buffers = []
        for k, (shape, dtype) in self._buffer_slots:
            buffer = np.empty(shape, dtype)
            buffers.append(buffer)
            args[k] = ffi.from_buffer(buffer)
        if plan.workspace_bytes:
            workspace = np.empty(plan.workspace_bytes, np.uint8)
            args[self._count - 1] = ffi.from_buffer(workspace)
        code = self._run(args)
        if code:
            raise IndexError(plan.errors.get(code, f"compiled code failed with code {code}"))
        if self._all_buffers:
            return buffers
        results = []
        for kind, where in plan.outputs:
            if kind == "buffer":
                results.append(buffers[where])
            elif kind == "input":
                results.append(np.array(keep[where]))
            else:
                results.append(np.array(where))
        return results
