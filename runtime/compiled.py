"""The call path into a compiled module: as little Python per call as possible.

Each module gets its own call function, generated as Python text from its plan: a line or
a few per argument slot, with no loops over the plan at call time, except over stretches of
inputs (or buffers) alike, whose lines would cost more to compile at load than a loop costs
a call (`RUN`). Inputs are taken from numpy without copies when they are already
contiguous and of the right dtype (numpy scalars, what 0-d results are, are read in place
too); outputs are allocated here and filled by the C code. Inputs the module updates (variables) are written in place; the caller passes
them contiguous and unshared, and gets them back as the updated outputs.
"""

import ast
import re
import threading

import numpy as np

from runtime import aligned, host, installed_kernels, interrupts


class CompiledGraph:
    """A loaded module and its call function (`run`). A profiled module's (`probes`, a list of
    codegen.probes.Probe) adds each step's time and count to `probe_totals` ([ns, calls] per
    probe), and its events to the array `record_events` gives it, once `claim_probes` made
    the module's variables point at them: graphs of one C text share one loaded module, so
    the profiler claims it before each run of its graph."""

    backend = "c"

    def __init__(self, module, plan, meta, probes=None):
        self.c_source = plan.source
        self.meta = meta
        self.render_seconds = self.load_seconds = None  # set by its builder, where measured
        self.plan = plan
        self.workspace_bytes = plan.workspace_bytes  # an int, or an expression of the dims
        self.constants = [np.ascontiguousarray(c) for c in plan.constants]
        if plan.watch:  # its long loops call back, so that Ctrl-C stops them
            module.set_watch(interrupts.watch_function(module.ffi))
        # a module that calls the convolution kernels installed with tracer reads their table
        if installed_kernels.uses(plan.source):
            if not installed_kernels.address():
                raise RuntimeError("the module calls tracer's installed kernels, which are missing")
            module.set_table(installed_kernels.VARIABLE, installed_kernels.address())
        self.probes = probes
        if probes is not None:
            self._module = module
            self.probe_totals = np.zeros((len(probes), 2), np.int64)
            self._events = None
        self.run_address = int(module.ffi.cast("uintptr_t", module.run))  # for fast_call.c
        self.error = lambda code, sizes=None: _error(plan, code, sizes)
        self.call_source, scope = _call_function(module, plan, self.constants, self.error)
        self._per_thread = scope["per_thread"]
        exec(compile(self.call_source, "<tracer compiled call>", "exec"), scope)
        # run(arrays) -> output arrays; callers on a hot path hold on to it
        self.run = scope["call"] if plan.strings is None else plan.strings.wrap(scope["call"])

    def __call__(self, arrays):
        return self.run(arrays)

    def workspace(self):
        """A workspace for a call of the module from C (runtime/fast_call.py): the one the
        calling thread's calls kept, which becomes the caller's (its pages are in memory
        already: a new one would fault them in again, 160 MB for a transformer's step), else
        a new one."""
        kept = self._per_thread.__dict__.pop("workspace", None)
        return aligned.workspace(self.workspace_bytes) if kept is None else kept

    def keep_workspace(self, workspace):
        """Give `workspace` (`workspace`'s) back to the calling thread's later calls."""
        self._per_thread.__dict__["workspace"] = workspace

    def record_events(self, events):
        """Make the profiled module append each step's event to `events` (an int64 array:
        count, capacity, then (probe, start, end) per event), or to nothing (None)."""
        self._events = events  # kept alive while the module points at it
        if getattr(self._module, "probes_claimed_by", None) is self:
            self._module.set_pointer(PROBE_EVENTS, events)

    def claim_probes(self):
        """Point the loaded module's probe variables at this graph's arrays, where another
        graph of the same C text (or nothing yet) had them."""
        module = self._module
        if getattr(module, "probes_claimed_by", None) is not self:
            module.set_pointer(PROBE_TOTALS, self.probe_totals)
            module.set_pointer(PROBE_EVENTS, self._events)
            module.probes_claimed_by = self


# the variables of a profiled module's probes (codegen/probes.py)
PROBE_TOTALS, PROBE_EVENTS = "tracer_probe_totals", "tracer_probe_events"


# Consecutive inputs (or buffers) alike that one `for` handles instead of a line group each:
# compiling the generated text costs by the line, a large part of a long chain's first call
# in a second process. From 16 on the loop costs a call nothing measurable.
RUN = 16


def _runs(items, alike):
    """(start, stop) of each stretch of at least RUN consecutive items that `alike` maps to
    one value other than None."""
    keys = [alike(item) for item in items]
    runs, start = [], 0
    for k in range(1, len(keys) + 1):
        if k == len(keys) or keys[k] is None or keys[k] != keys[start]:
            if k - start >= RUN and keys[start] is not None:
                runs.append((start, k))
            start = k
    return runs


def _call_function(module, plan, constants, error):
    """The text of `call(arrays) -> list of output arrays` for `plan`, and its global names."""
    ffi = module.ffi
    n_inputs, n_constants = len(plan.input_dtypes), len(plan.constants)
    first_host = n_inputs + n_constants + len(plan.buffers) + 1 + (1 if plan.dims else 0)
    n_args = first_host + len(plan.host_calls)
    callbacks = [host.callback(ffi, *call) for call in plan.host_calls]
    # a pointer to each callback's C function pointer, as the module reads it
    holders = [ffi.new("int(*[1])(void *, void *, int64_t)", [c]) for c in callbacks]
    scope = {
        # one argument array (and workspace, and dims) per thread, so threads do not mix; taken
        # out while a call runs, so that a call of the module from within it (a host call's
        # Python function calling it again) makes its own instead of overwriting them
        "per_thread": threading.local(),
        "new_args": lambda: ffi.new(f"char *[{n_args}]"),
        "from_buffer": ffi.from_buffer,
        "run": module.run,
        "ndarray": np.ndarray,
        "empty": aligned.allocator_for(plan.buffers),
        "new_workspace": aligned.workspace,
        "copy": np.array,
        "contiguous": np.ascontiguousarray,
        "failed": error,
        "constants": constants,  # kept alive as long as the pointers to them
        "constant_pointers": [ffi.from_buffer(c) for c in constants],
        "host_pointers": [ffi.cast("char *", h) for h in holders],
        "host_holders": (callbacks, holders),  # kept alive as long as the pointers to them
    }
    lines = [
        "def call(arrays):",
        "    kept = per_thread.__dict__",
        "    args = kept.pop('args', None)",
        "    if args is None:",
        "        args = new_args()",
    ]
    returned = ["args"]  # what the call gives back to the thread when it ends
    lines += _input_lines(plan, scope)
    if plan.dims:
        lines += _dim_lines(plan, scope)
        returned.append("sizes")
    for k in range(n_constants):
        lines.append(f"    args[{n_inputs + k}] = constant_pointers[{k}]")
    first_buffer = n_inputs + n_constants
    buffer_lines, buffer_names = _buffer_lines(plan, scope, first_buffer)
    lines += buffer_lines
    if plan.workspace_bytes:  # kept per thread: fresh pages cost the kernel's zeroing each call
        lines += [
            f"    needed = {plan.workspace_bytes}",
            "    workspace = kept.pop('workspace', None)",
            "    if workspace is None or workspace.size < needed:",
            "        workspace = new_workspace(needed)",
            f"    args[{first_buffer + len(plan.buffers)}] = from_buffer(workspace)",
        ]
        returned.append("workspace")
    for k in range(len(plan.host_calls)):
        lines.append(f"    args[{first_host + k}] = host_pointers[{k}]")
    results = []
    for k, (kind, where) in enumerate(plan.outputs):
        if kind == "buffer":
            results.append(buffer_names[where])
        elif kind == "input":
            results.append(f"copy(a{where})")
        elif kind == "input before":  # the old value of an input the run writes
            lines.append(f"    old{k} = copy(a{where})")
            results.append(f"old{k}")
        elif kind == "updated":
            results.append(f"a{where}")
        else:
            scope[f"c{k}"] = where
            results.append(f"copy(c{k})")
    lines += ["    try:", "        code = run(args)", "    finally:"]
    lines += [f"        kept[{name!r}] = {name}" for name in returned]
    lines += ["    if code:", f"        raise failed(code{', sizes' if plan.dims else ''})"]
    lines.append(f"    return [{', '.join(results)}]")
    return "\n".join(lines) + "\n", scope


def _input_lines(plan, scope):
    """Lines that check each input, make it C-ordered of its dtype where it is not (inputs
    updated in place excepted: their callers pass them so) and pass it to the module."""
    lines = []
    inputs = list(zip(plan.input_dtypes, plan.input_shapes))
    named = {where for kind, where in plan.outputs if kind in ("input", "input before", "updated")}
    # inputs read once, where they are checked: no dims to read from them, not updated, not
    # an output
    looped = (
        []
        if plan.dims
        else _runs(
            range(len(inputs)),
            lambda k: None if k in named or k in plan.updated_inputs else inputs[k],
        )
    )
    if looped:
        lines.append("    held = []  # copies made contiguous, alive until the run returns")
    starts = dict(looped)
    k = 0
    while k < len(inputs):
        dtype, shape = inputs[k]
        scope[f"dtype{k}"] = np.dtype(dtype)
        scope[f"scalar{k}"] = np.dtype(dtype).type
        name = "a" if k in starts else f"a{k}"
        check = f"type({name}) is not ndarray or {name}.dtype is not dtype{k} or not {name}.flags.c_contiguous"
        if shape == ():
            check = f"type({name}) is not scalar{k} and ({check})"
        if k in starts:
            lines += [
                f"    for k in range({k}, {starts[k]}):",
                "        a = arrays[k]",
                f"        if {check}:",
                f"            a = contiguous(a, dtype{k})",
                "            held.append(a)",
                "        args[k] = from_buffer(a)",
            ]
            k = starts[k]
            continue
        lines.append(f"    a{k} = arrays[{k}]")
        if k not in plan.updated_inputs:  # written in place: the caller passes them as they must be
            lines += [f"    if {check}:", f"        a{k} = contiguous(a{k}, dtype{k})"]
        lines.append(f"    args[{k}] = from_buffer(a{k})")
        k += 1
    return lines


def _buffer_lines(plan, scope, first_buffer):
    """Lines that make the output buffers and pass them to the module, and how they name
    each buffer."""
    lines, buffer_names = [], {}
    stretches = dict([] if plan.dims else _runs(plan.buffers, lambda buffer: buffer))
    k = 0
    while k < len(plan.buffers):
        shape, dtype = plan.buffers[k]
        scope[f"bd{k}"] = np.dtype(dtype)
        if k in stretches:  # a list of them, made and passed in one loop
            stop = stretches[k]
            lines += [
                f"    bs{k} = [empty({_tuple_text(shape)}, bd{k}) for _ in range({stop - k})]",
                f"    for k, b in enumerate(bs{k}, {first_buffer + k}):",
                "        args[k] = from_buffer(b)",
            ]
            buffer_names.update({j: f"bs{k}[{j - k}]" for j in range(k, stop)})
            k = stop
            continue
        lines += [
            f"    b{k} = empty({_tuple_text(shape)}, bd{k})",
            f"    args[{first_buffer + k}] = from_buffer(b{k})",
        ]
        buffer_names[k] = f"b{k}"
        k += 1
    return lines, buffer_names


def _dim_lines(plan, scope):
    """Lines that read the dims from the inputs' shapes, check every input's shape against
    them, and pass them to the module (after the workspace)."""
    scope["bad_shape"] = lambda k, shape: ValueError(
        f"argument {plan.input_names[k]} has shape {tuple(shape)}; the compiled function takes "
        f"{_expected(plan.input_shapes[k], plan)}{_shared_axes(k, shape, plan)}"
    )
    scope["np"] = np
    lines = [f"    {name} = a{position}.shape[{axis}]" for name, position, axis in plan.dims]
    for k, shape in enumerate(plan.input_shapes):
        lines += [
            f"    if a{k}.shape != {_tuple_text(shape)}:",
            f"        raise bad_shape({k}, a{k}.shape)",
        ]
    slot = len(plan.input_dtypes) + len(plan.constants) + len(plan.buffers) + 1
    values = ", ".join(name for name, _, _ in plan.dims)
    lines += [
        "    sizes = kept.pop('sizes', None)",
        "    if sizes is None:",
        f"        sizes = np.empty({len(plan.dims)}, np.int64)",
        f"    sizes[:] = ({values},)",
        f"    args[{slot}] = from_buffer(sizes)",
    ]
    return lines


def _expected(shape, plan):
    """A shape with its dims written as None, as the input signature gave them."""
    names = {name for name, _, _ in plan.dims}
    return str(tuple(None if d in names else d for d in shape))


def _shared_axes(k, shape, plan):
    """Where argument `k`'s shape fits its own Nones but not a size another argument gave the
    same unknown dimension: that rule, said (the shape alone seems to fit)."""
    first = {name: (position, axis) for name, position, axis in plan.dims}
    notes = []
    for axis, expected in enumerate(plan.input_shapes[k]):
        position, defining = first.get(expected, (k, axis))
        if position != k:
            notes.append(
                f"axis {axis} must have the size of argument {plan.input_names[position]}'s "
                f"axis {defining}, which they share"
            )
    return f" ({'; '.join(notes)})" if notes and len(shape) == len(plan.input_shapes[k]) else ""


def _tuple_text(shape):
    return "(" + "".join(f"{d}, " for d in shape) + ")"


def _error(plan, code, sizes=None):
    """The exception for return code `code` of the module (its plan says which), its message
    naming the call's `sizes` (the values of plan.dims) where it names a dim, or the one a
    Python function it called back raised: a signal handler that stopped a loop (Ctrl-C),
    with a note naming the loop, or a host function."""
    stopped = interrupts.take_error()
    if stopped is not None:
        stopped.add_note(plan.errors[code][1])
        return stopped
    raised = host.take_error()
    if raised is not None:
        return raised
    exception, message = plan.errors.get(code, (RuntimeError, f"compiled code failed ({code})"))
    if sizes is not None:
        message = _with_sizes(message, {name: int(v) for (name, _, _), v in zip(plan.dims, sizes)})
    return exception(message)


# a polynomial of the dims as tracer/ir/dims.py writes it: `d0`, `784*d0`, `(d0_1 + 1)`
_FACTOR = r"(?:d\d+(?:_\d+)?|\d+)"
_TERM = rf"{_FACTOR}(?:\*{_FACTOR})*"
_POLYNOMIAL = re.compile(rf"\({_TERM}(?: [+-] {_TERM})+\)|(?<![\w.]){_TERM}(?![\w.])")
_DIM_NAME = re.compile(r"d\d+(?:_\d+)?")


def _with_sizes(message, values):
    """`message` with each polynomial of the dims of `values` ({name: size}) written as its
    value, in the op's words only (not in the user's file name of the location after them):
    `gather: an index is out of range [0, d0) (at model.py:14)` -> `... [0, 8) (at ...)`."""
    words, at, location = message.rpartition(" (at ")
    if not at:
        words, location = message, ""

    def value(match):
        text = match[0]
        names = _DIM_NAME.findall(text)
        if not names or any(name not in values for name in names):
            return text
        return str(_arithmetic(ast.parse(_DIM_NAME.sub(lambda m: str(values[m[0]]), text))))

    return _POLYNOMIAL.sub(value, words) + at + location


def _arithmetic(node):
    """The int a parsed sum of products of ints is (nothing else is parsed here)."""
    if isinstance(node, ast.Module):
        return _arithmetic(node.body[0].value)
    if isinstance(node, ast.Constant):
        return node.value
    left, right = _arithmetic(node.left), _arithmetic(node.right)
    return {ast.Add: left + right, ast.Sub: left - right, ast.Mult: left * right}[type(node.op)]
