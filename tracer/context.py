"""Thread-local execution state: the stack of recording tapes and the source-location override.

Tapes are thread-local, as in TensorFlow: a tape entered in one thread records nothing
that another thread computes.
"""

import contextlib
import threading
import weakref


class _State(threading.local):
    def __init__(self):
        self.tapes = []  # the tapes recording now, innermost last
        self.location = None  # when set, new nodes take this location instead of the caller's
        self.trace = None  # the tracing.Trace of the tt.function being traced, if any
        self.paused = []  # tapes inside their stop_recording() block
        self.building = 0  # > 0 while tracer builds a graph of its own (building_graph())
        self.watchers = []  # lists that variables append themselves to when read (watching())
        self.accumulators = []  # the active tt.autodiff.ForwardAccumulators, innermost last
        self.name_scope = ""  # the prefix of new variables' names ("outer/inner/"), tt.name_scope
        self.refusing_assigns = None  # (construct, why) where assigns raise (refusing_assigns)
        self.graphs = []  # the tt.compat.v1 Graphs being built into, innermost last (graphs.py)


state = _State()

# the nodes of every tt.compat.v1 Graph (tracer/compat/v1/graphs.py): their tensors hash by
# identity, as TensorFlow 1's graph tensors do (feed_dict's keys)
graph_nodes = weakref.WeakSet()


class NumericsCheck:
    """Whether every op's result is checked for NaN and Inf (tt.debugging.enable_check_numerics).

    Global, not per thread, as in TensorFlow; one attribute read per op when off (a slot,
    which the C op path reads directly).
    """

    __slots__ = ("enabled",)

    def __init__(self):
        self.enabled = False


numerics = NumericsCheck()


class TensorEquality:
    """Whether `==` and `!=` on tensors and variables are elementwise (TensorFlow 2's, the
    default) or identity, with variables hashable (TensorFlow 1's, after
    `tt.compat.v1.disable_tensor_equality()`). Global, as TensorFlow's."""

    __slots__ = ("enabled",)

    def __init__(self):
        self.enabled = True


tensor_equality = TensorEquality()


@contextlib.contextmanager
def location_override(location):
    """Nodes made inside take `location`: the gradient of a line points at that line."""
    saved, state.location = state.location, location
    try:
        yield
    finally:
        state.location = saved


@contextlib.contextmanager
def outside_trace():
    """Ops inside run eagerly, outside any trace and tape (TensorFlow's init_scope): how a
    Variable created while a function is traced gets its initial value."""
    saved = state.trace, state.tapes, state.paused
    state.trace, state.tapes, state.paused = None, [], []
    try:
        yield
    finally:
        state.trace, state.tapes, state.paused = saved


@contextlib.contextmanager
def watching():
    """The variables read inside, in order of reading (TensorFlow's VariableWatcher)."""
    read = []
    state.watchers.append(read)
    try:
        yield read
    finally:
        state.watchers.remove(read)


@contextlib.contextmanager
def building_graph():
    """Ops inside build a graph of tracer's own (a gradient, a vectorized graph) from
    symbolic tensors outside any trace; nothing is recorded on any tape."""
    saved, state.tapes = state.tapes, []
    state.building += 1
    try:
        yield
    finally:
        state.tapes = saved
        state.building -= 1


@contextlib.contextmanager
def refusing_assigns(construct, why):
    """An eager `Variable.assign*` inside raises ValueError naming `construct` and saying
    `why` (a function of tt.recompute_grad: its recomputation would assign again)."""
    saved, state.refusing_assigns = state.refusing_assigns, (construct, why)
    try:
        yield
    finally:
        state.refusing_assigns = saved
