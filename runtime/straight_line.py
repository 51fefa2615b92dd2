"""A graph as a straight-line program: one numpy kernel call per node, no interpreter loop.

    %0 = input            def run(v0, v1):
    %1 = input                v2 = k_cos(v1)
    %2 = cos %1      =>       v3 = v0 * v2
    %3 = mul %0, %2           del v2
                              return [v3]

The values are the interpreter's, bit for bit: the same kernels, called in the same order
(floating add, sub and mul as Python's arithmetic, `operator.mul` for `v0 * v2`, which is
what those kernels do on small arrays; of a large result, LARGE_FLOATING_KERNELS's, the
loop installed with tracer on the threads, as those kernels run it). What goes is the
per-node work of the interpreter loop (looking nodes up, building argument lists), which
is most of the time of an eager gradient on small tensors. Each value is dropped after its
last use, so memory peaks no higher than in the interpreter; in C, a floating +, - or *
writes its result into an operand that dies with it when nothing else holds that array
(the same loop, the same bits, and no new array to fault in).

The program is a tuple of steps run by `Program` (straight_line.c, an optional extension
like the eager op path in C, loaded by runtime/native.py), or by the same loop in Python where
it was not built. Making it costs a fraction of generating and compiling Python text (what
this module did before), less than one run through the op path, so an eager gradient runs
this way from its first run. `source(graph)` is the program as Python text, for reading.
"""

import itertools
import math

from runtime import native
from runtime.kernels import (
    FLOATING_INFIX,
    FLOATING_KERNELS,
    KERNELS,
    LARGE_FLOATING_FROM,
    LARGE_FLOATING_KERNELS,
    errors_ignored,
    errors_restored,
)


def _program_of(module):
    return PythonProgram if module is None else module.Program


class PythonProgram:
    """The straight-line program run by a Python loop: `Program`'s arguments and results."""

    __slots__ = ("n_slots", "input_slots", "constants", "steps", "output_slots")

    def __init__(self, n_slots, input_slots, constants, steps, output_slots):
        self.n_slots, self.input_slots, self.constants = n_slots, input_slots, constants
        self.steps, self.output_slots = steps, output_slots

    def __call__(self, *arrays):
        if len(arrays) != len(self.input_slots):
            raise TypeError(
                f"a straight-line program takes {len(self.input_slots)} positional arguments "
                f"({len(arrays)} given)"
            )
        slots = [None] * self.n_slots
        for slot, value in zip(self.input_slots, arrays):
            if slot >= 0 and slots[slot] is None:
                slots[slot] = value
        for slot, value in self.constants:
            slots[slot] = value
        token = errors_ignored()
        try:
            for function, inputs, values, names, out, dead in self.steps:
                args = [slots[k] for k in inputs]
                if names is None:
                    slots[out] = function(*args)
                else:
                    slots[out] = function(*args, **dict(zip(names, values)))
                for k in dead:
                    slots[k] = None
        finally:
            errors_restored(token)
        return [slots[k] for k in self.output_slots]


_NATIVE = native.load("straight_line")
Program = _program_of(_NATIVE)


def straight_line(graph, located=None):
    """A function taking the values of `graph.inputs` positionally, returning a list of the
    values of `graph.outputs`. `located(node, function)`, where given, is what a node's step
    calls instead of its op's kernel `function` (the interpreter's executables name the
    user's line in the errors of kernels that check their inputs' values)."""
    plan = _plan(graph)
    # (op, name of the first input's dtype, shape) -> the step's function: names and shapes
    # hash as they are, a DType through a Python method
    functions = {}
    steps = []
    for out, node, inputs, dead in plan.steps:
        op, attrs = node.op, node.attrs
        dtype = node.inputs[0].dtype if node.inputs else None
        key = (op, None if dtype is None else dtype.name, node.shape)
        function = functions.get(key)
        if function is None:
            function = functions[key] = _function(op, dtype, _large(node.shape))
        if located is not None:
            function = located(node, function)
        if attrs:
            steps.append((function, inputs, tuple(attrs.values()), tuple(attrs), out, dead))
        else:
            steps.append((function, inputs, (), None, out, dead))
    return Program(plan.n_slots, plan.input_slots, plan.constants, tuple(steps), plan.output_slots)


def _function(op, dtype, large):
    """The kernel of a step: of floating values, below LARGE_FLOATING_FROM elements the op's
    FLOATING_KERNELS entry (+, - and * as Python's operator, a ufunc itself), and of a large
    result +, - and *'s function that runs it on the threads and may write it into a dead
    operand (LARGE_FLOATING_KERNELS); else the op's kernel."""
    if dtype is not None and _floating(dtype):  # (None: a node without inputs)
        if large:
            if op in LARGE_FLOATING_KERNELS:
                return LARGE_FLOATING_KERNELS[op]
        elif op in FLOATING_KERNELS:
            return FLOATING_KERNELS[op]
    return KERNELS[op]


def _large(shape):
    """Whether a result of `shape` has LARGE_FLOATING_FROM elements or more."""
    return all(type(d) is int for d in shape) and math.prod(shape) >= LARGE_FLOATING_FROM


def source(graph):
    """The program `straight_line` runs for `graph`, as Python text."""
    plan = _plan(graph)
    params = ", ".join(f"v{s}" if s >= 0 else f"_{k}" for k, s in enumerate(plan.input_slots))
    lines = [f"def run({params}):"]
    lines += [f"    v{slot} = {value!r}" for slot, value in plan.constants]
    for out, node, inputs, dead in plan.steps:
        args = [f"v{k}" for k in inputs]
        if node.op in FLOATING_INFIX and _floating(node.inputs[0].dtype):
            lines.append(f"    v{out} = {args[0]} {FLOATING_INFIX[node.op]} {args[1]}")
        else:
            args += [f"{name}={value!r}" for name, value in node.attrs.items()]
            lines.append(f"    v{out} = k_{node.op}({', '.join(args)})")
        if dead:
            lines.append(f"    del {', '.join(f'v{k}' for k in dead)}")
    lines.append(f"    return [{', '.join(f'v{k}' for k in plan.output_slots)}]")
    return "\n".join(lines) + "\n"


def _floating(dtype):
    return dtype.is_floating or dtype.is_complex


class _Plan:
    """Where `graph`'s values live: a slot per input (-1 for a repeated one) and per node;
    the constants' (slot, array) pairs; per computed node (slot, node, input slots, slots
    dead after it); the outputs' slots."""

    __slots__ = ("n_slots", "input_slots", "constants", "steps", "output_slots")


def _plan(graph):
    """`graph`'s `_Plan`: by the extension's `plan` where it was built, else `_plan_in_python`,
    its definition."""
    if _NATIVE is None:
        return _plan_in_python(graph)
    plan = _Plan()
    plan.n_slots, plan.input_slots, plan.constants, plan.steps, plan.output_slots = _NATIVE.plan(
        graph.inputs, graph.nodes, graph.outputs
    )
    return plan


def _plan_in_python(graph):
    slot = {}
    input_slots = []
    for node in graph.inputs:  # an input listed twice is read from its first position
        input_slots.append(-1 if id(node) in slot else slot.setdefault(id(node), len(slot)))
    computed = [node for node in graph.nodes if id(node) not in slot]
    slot.update(zip(map(id, computed), itertools.count(len(slot))))
    slot_of = slot.__getitem__
    reads = [tuple(map(slot_of, map(id, node.inputs))) for node in computed]
    last_use = [-1] * len(slot)
    for step, inputs in enumerate(reads):
        for k in inputs:
            last_use[k] = step
    for node in (*graph.outputs, *graph.inputs):
        last_use[slot[id(node)]] = -1  # kept to the end
    constants, steps = [], []
    for step, node in enumerate(computed):
        inputs = reads[step]
        if node.op == "const":
            constants.append((slot[id(node)], node.attrs["value"].array))
        elif len(inputs) == 1:
            steps.append(
                (slot[id(node)], node, inputs, inputs if last_use[inputs[0]] == step else ())
            )
        elif len(inputs) == 2:  # (the commonest case, without the general one's containers)
            a, b = inputs
            dead = (a,) if last_use[a] == step else ()
            if last_use[b] == step and b != a:
                dead += (b,)
            steps.append((slot[id(node)], node, inputs, dead))
        else:
            dead = tuple(dict.fromkeys([k for k in inputs if last_use[k] == step]))
            steps.append((slot[id(node)], node, inputs, dead))
    plan = _Plan()
    plan.n_slots, plan.input_slots, plan.constants = len(slot), tuple(input_slots), tuple(constants)
    plan.steps, plan.output_slots = steps, tuple(slot[id(n)] for n in graph.outputs)
    return plan
