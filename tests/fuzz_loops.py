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

`Program.bounded` says, from the grammar alone, whether every loop the traced function
holds has a maximum_iterations, which its compiled gradient needs
(docs/control-flow-and-autodiff.md): autograph gives one to `for` over rows and over
tt.range of a Python int, none to a `while` on a tensor or to `for` over tt.range of a
tensor. A `while` on an eager counter runs as Python's loop when tracing, until a `break`
flag set under a tensor condition makes its condition a tensor: from there it is a
tt.while_loop without a bound (`_python_loop_turns_tensor`).
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
UNBOUNDED = {"while_counter", "while_n", "range_n"}  # traced, a tt.while_loop with no bound
WHILE = {"while_counter", "while_n", "while_python"}  # a counter, incremented first
# the bounded kinds twice as often: more programs whose compiled gradients are compared
LOOP_CHOICES = sorted(LOOPS) + sorted(set(LOOPS) - UNBOUNDED)

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
Jump = collections.namedtuple("Jump", ["kind", "op", "bound"])
_HOLDS = {">=": lambda i, bound: i >= bound, "<": lambda i, bound: i < bound}

Program = collections.namedtuple(
    "Program", ["source", "value", "value_and_gradient", "bounded", "margins", "x", "n"]
)


@st.composite
def programs(draw):
    """A Program: its source, its two functions, whether its compiled gradient works, the
    margins its eager runs record, and its inputs (x as a numpy array, n as an int)."""
    writer = _Writer(draw)
    writer.block(0, TOP, counter=None, depth=0, traced=True)
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
        not writer.unbounded,
        margins,
        x,
        draw(st.integers(0, 3)),
    )


def _indented(lines, depth):
    return ["    " * depth + line for line in lines]


class _Writer:
    """Draws statements into `lines` (indented from 0), numbering loops; `unbounded` is set
    when the traced function will hold a tt.while_loop with no maximum_iterations."""

    def __init__(self, draw):
        self.draw = draw
        self.lines = []
        self.loops = 0
        self.unbounded = False

    def emit(self, indent, text):
        self.lines.append("    " * indent + text)

    def block(self, indent, scope, counter, depth, traced):
        """A block's statements (a loop's body when `depth` > 0); the jumps it holds.

        `counter` names the enclosing loop's counter, which its conditions may compare;
        `traced` says whether tracing reaches the block (a Python loop of no iterations
        never runs its body)."""
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
        jumps = []
        for kind in kinds:
            # NOTE: no loop after a jump: the statements after a `break` or `continue` run
            # under an `if` on the flags, and a loop's counter or target, first bound there,
            # fails (test_a_name_first_bound_after_a_tensor_break_converts)
            if kind == "loop" and (depth >= 2 or jumps):
                kind = "update"
            if kind == "loop":
                self.loop(indent, scope, depth, traced)
            elif kind == "update":
                self.emit(indent, self.update(scope))
            elif kind == "if":
                self.emit(indent, f"if {self.condition(scope, counter)[0]}:")
                self.emit(indent + 1, self.update(scope))
                if draw(st.booleans()):
                    self.emit(indent, "else:")
                    self.emit(indent + 1, self.update(scope))
            else:
                text, op, bound = self.condition(scope, counter)
                jump = Jump(draw(st.sampled_from(["break", "continue"])), op, bound)
                self.emit(indent, f"if {text}:")
                self.emit(indent + 1, jump.kind)
                jumps.append(jump)
        return jumps

    def loop(self, indent, scope, depth, traced):
        draw = self.draw
        self.loops += 1
        k, kind, limit = self.loops, draw(st.sampled_from(LOOP_CHOICES)), draw(st.integers(0, 3))
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
        body_traced = traced and not (kind == "while_python" and limit == 0)
        jumps = self.block(indent + 1, inner, counter, depth + 1, body_traced)
        if traced and (
            kind in UNBOUNDED or kind == "while_python" and _python_loop_turns_tensor(limit, jumps)
        ):
            self.unbounded = True

    def update(self, scope):
        draw = self.draw
        template = draw(st.sampled_from([*SCALAR_UPDATES, *VECTOR_UPDATES]))
        return template.format(
            s=draw(st.sampled_from(scope.scalars)), w=draw(st.sampled_from(scope.vectors))
        )

    def condition(self, scope, counter):
        """(the text of a condition, its counter comparison `op` and `bound`, or None twice
        for a condition on data)."""
        draw = self.draw
        if counter is not None and draw(st.booleans()):
            op, bound = draw(st.sampled_from(sorted(_HOLDS))), draw(st.integers(0, 3))
            return f"{counter} {op} {bound}", op, bound
        limit = draw(st.integers(-150, 150)) / 100
        return f"above({draw(st.sampled_from(scope.data))}, {limit})", None, None


def _python_loop_turns_tensor(limit, jumps):
    """Whether a `while` on an eager counter, below `limit` and incremented first, becomes a
    tt.while_loop when traced: when a `break` flag is set under a tensor condition (a
    condition on data, or any condition after a jump under one, since the statements after
    a jump run under an `if` on the flags), the loop's condition reads it. Conditions on the
    counter are Python's, and a `break` or `continue` under one leaves the rest of the
    iteration untraced."""
    for i in range(1, limit + 1):
        under_tensor = False
        for jump in jumps:
            if under_tensor or jump.op is None:
                if jump.kind == "break":
                    return True
                under_tensor = True
            elif _HOLDS[jump.op](i, jump.bound):
                if jump.kind == "break":
                    return False
                break  # continue: the rest of this iteration is Python's, not traced
    return False


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
