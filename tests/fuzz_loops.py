"""Random Python functions with loops, for autograph (used by tests/test_fuzz.py).

A program is drawn from a small grammar as source text, which autograph can read (it is
put in linecache, where autograph looks, as inspect does), and exec'd. It computes a scalar
from a float64 input x of shape (rows, 3) and an int32 scalar n, through two carried
values, a (shape ()) and v (shape (3,)):

    def value(x, n):
        a = tt.reduce_sum(x) * 0.25
        v = tt.sin(x[0]) + 0.5 * tt.reduce_mean(x, axis=0)
        for i1 in tt.range(n):                           # one of LOOPS
            v = tt.sin(v) * 0.9 + 0.1 * x[0]             # elementwise updates
            for r2 in x:                                 # nested, depth <= 2
                a = tt.tanh(a + 0.5 * tt.reduce_sum(r2))
            if above(tt.reduce_sum(v), 0.25):            # break or continue under a tensor if
                break
        return a + tt.reduce_sum(v * tt.constant([0.7, -1.1, 0.4], tt.float64))

`value_and_gradient(x, n)` runs the same statements under a tape and returns the gradient
with respect to x too. Every loop stops: over a count of 0-3, over rows, or while a counter
is below a drawn limit or n. Updates are contractions or bounded steps, so values stay of
order one. `above(value, limit)` is `value > limit`; eagerly it records how far the value
is from the limit, so that a test keeps finite differences off the edge of a branch.

Autograph gives a maximum_iterations to `for` over rows and over tt.range of a Python int,
none to a `while` on a tensor or to `for` over tt.range of a tensor; a `while` on an eager
counter runs as Python's loop when tracing, until a `break` flag set under a tensor
condition makes its condition a tensor. Compiled gradients are compared for all of them
(a loop without a bound replays its states, docs/control-flow-and-autodiff.md).
"""

import collections
import hashlib
import linecache

import numpy as np
from hypothesis import strategies as st

import tracer as tt
from tracer.context import state

# kind -> the loop's header, given its number k, its drawn limit and n
LOOPS = {
    "while_counter": ["i{k} = n * 0", "while i{k} < {limit}:"],  # a tensor counter: tt.while_loop
    "while_n": ["i{k} = n * 0", "while i{k} < n:"],
    "while_python": ["i{k} = tt.constant(0)", "while i{k} < {limit}:"],  # eager: Python's loop
    "range_int": ["for i{k} in tt.range({limit}):"],
    "range_n": ["for i{k} in tt.range(n):"],
    "rows_input": ["for r{k} in x:"],
    "rows_carried": ["for r{k} in tt.stack([v, tt.sin(v)]):"],
}
WHILE = {"while_counter", "while_n", "while_python"}  # a counter, incremented first

SCALAR_UPDATES = [
    "a = tt.sin(a) * 0.9 + 0.1 * {s}",
    "a = tt.tanh(a + 0.5 * {s})",
    "a = a * tt.exp(0.2 * tt.sin({s}))",
    "a = tt.add(a, tt.multiply(0.3, tt.sin({s})))",
]
VECTOR_UPDATES = [
    "v = tt.sin(v) * 0.9 + 0.1 * {w}",
    "v = tt.tanh(v * 0.5 + {w}) * 0.8",
    "v = v * tt.exp(0.1 * tt.sin({w}))",
    "v = tt.multiply(v, tt.cos({w})) + 0.1 * tt.tanh({s})",
]
PROLOGUE = ["a = tt.reduce_sum(x) * 0.25", "v = tt.sin(x[0]) + 0.5 * tt.reduce_mean(x, axis=0)"]
RESULT = "a + tt.reduce_sum(v * tt.constant([0.7, -1.1, 0.4], tt.float64))"

# what a block's expressions may read: scalars and vectors for updates, and the data (not
# counters) that conditions compare
Scope = collections.namedtuple("Scope", ["scalars", "vectors", "data"])
TOP = Scope(["a", "tt.reduce_sum(v)", "tt.reduce_sum(x)"], ["v", "x[0]"], ["a", "tt.reduce_sum(v)"])

# a `break` or `continue` in a loop's own body, under a condition on data or on the loop's
# counter (`op`, `bound`; None for data)

Program = collections.namedtuple(
    "Program", ["source", "value", "value_and_gradient", "margins", "x", "n"]
)


@st.composite
def programs(draw):
    """A Program: its source, its two functions, the margins its eager runs record, and its
    inputs (x as a numpy array, n as an int)."""
    writer = _Writer(draw)
    writer.block(0, TOP, counter=None, depth=0)
    body = writer.lines
    source = "\n".join(
        [
            "def value(x, n):",
            *_indented(PROLOGUE + body, 1),
            f"    return {RESULT}",
            "",
            "",
            "def value_and_gradient(x, n):",
            "    with tt.GradientTape() as tape:",
            "        tape.watch(x)",
            *_indented(PROLOGUE + body, 2),
            f"        y = {RESULT}",
            "    return y, tape.gradient(y, x)",
            "",
        ]
    )
    margins = []
    functions = _load(source, margins)
    rows = draw(st.integers(1, 3))
    x = np.random.default_rng(draw(st.integers(0, 2**16))).uniform(-1.0, 1.0, (rows, 3))
    return Program(
        source,
        functions["value"],
        functions["value_and_gradient"],
        margins,
        x,
        draw(st.integers(0, 3)),
    )


def _indented(lines, depth):
    return ["    " * depth + line for line in lines]


class _Writer:
    """Draws statements into `lines` (indented from 0), numbering loops."""

    def __init__(self, draw):
        self.draw = draw
        self.lines = []
        self.loops = 0

    def emit(self, indent, text):
        self.lines.append("    " * indent + text)

    def block(self, indent, scope, counter, depth):
        """A block's statements (a loop's body when `depth` > 0). `counter` names the
        enclosing loop's counter, which its conditions may compare."""
        draw = self.draw
        if depth == 0:
            kinds = draw(
                st.lists(st.sampled_from(["loop", "update", "if"]), min_size=1, max_size=3)
            )
            if "loop" not in kinds:
                kinds.insert(draw(st.integers(0, len(kinds))), "loop")
        else:
            choices = ["update", "update", "if", "jump", "jump", "loop"]
            kinds = draw(st.lists(st.sampled_from(choices), min_size=1, max_size=3))
            if "update" not in kinds:
                kinds.insert(draw(st.integers(0, len(kinds))), "update")
        jumped = False
        for kind in kinds:
            # NOTE: no loop after a jump: the statements after a `break` or `continue` run
            # under an `if` on the flags, and a loop's counter or target, first bound there,
            # fails (test_a_name_first_bound_after_a_tensor_break_converts)
            if kind == "loop" and (depth >= 2 or jumped):
                kind = "update"
            if kind == "loop":
                self.loop(indent, scope, depth)
            elif kind == "update":
                self.emit(indent, self.update(scope))
            elif kind == "if":
                self.emit(indent, f"if {self.condition(scope, counter)}:")
                self.emit(indent + 1, self.update(scope))
                if draw(st.booleans()):
                    self.emit(indent, "else:")
                    self.emit(indent + 1, self.update(scope))
            else:
                self.emit(indent, f"if {self.condition(scope, counter)}:")
                self.emit(indent + 1, draw(st.sampled_from(["break", "continue"])))
                jumped = True

    def loop(self, indent, scope, depth):
        draw = self.draw
        self.loops += 1
        k, kind, limit = self.loops, draw(st.sampled_from(sorted(LOOPS))), draw(st.integers(0, 3))
        for line in LOOPS[kind]:
            self.emit(indent, line.format(k=k, limit=limit))
        if kind.startswith("rows"):
            row = f"r{k}"
            inner = Scope(
                [*scope.scalars, f"tt.reduce_sum({row})"],
                [*scope.vectors, row],
                [*scope.data, f"tt.reduce_sum({row})"],
            )
            counter = None
        else:
            counter = f"i{k}"
            inner = Scope([*scope.scalars, f"tt.cast({counter}, tt.float64)"], *scope[1:])
        if kind in WHILE:
            self.emit(indent + 1, f"{counter} = {counter} + 1")
        self.block(indent + 1, inner, counter, depth + 1)

    def update(self, scope):
        draw = self.draw
        template = draw(st.sampled_from([*SCALAR_UPDATES, *VECTOR_UPDATES]))
        return template.format(
            s=draw(st.sampled_from(scope.scalars)), w=draw(st.sampled_from(scope.vectors))
        )

    def condition(self, scope, counter):
        """The text of a condition: a comparison of the counter, or one on data."""
        draw = self.draw
        if counter is not None and draw(st.booleans()):
            op, bound = draw(st.sampled_from([">=", "<"])), draw(st.integers(0, 3))
            return f"{counter} {op} {bound}"
        limit = draw(st.integers(-150, 150)) / 100
        return f"above({draw(st.sampled_from(scope.data))}, {limit})"


class _Source:
    """The loader linecache asks for a program's source, should its entry be dropped."""

    def __init__(self, text):
        self.text = text

    def get_source(self, name):
        return self.text


def _load(source, margins):
    """The functions `source` defines, with its text where autograph reads source."""

    def above(value, limit):
        if state.trace is None:  # eagerly: how far from the edge of the branch
            margins.append(abs(float(value) - limit))
        return value > limit

    name = f"fuzz_loop_{hashlib.sha1(source.encode()).hexdigest()[:12]}"
    filename = f"{name}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"tt": tt, "above": above, "__name__": name, "__loader__": _Source(source)}
    exec(compile(source, filename, "exec"), namespace)
    return namespace
