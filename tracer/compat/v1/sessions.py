"""TensorFlow 1's `Session`: runs what a graph's tensors compute, for values fed to its
placeholders.

Each distinct `run` (which tensors it fetches, which placeholders it feeds) becomes a
ConcreteFunction of the graph's ops from those placeholders to those tensors, compiled at
its first run and reused by every later run that fetches and feeds the same (the fed
values may change, and so may the sizes a placeholder left as None). Ops the fetches do not
need are not computed. Results come back as numpy values, as TensorFlow 1's do.

Each run checks the fed sizes against what its ops assumed of the None sizes when the graph
was built (`x[4]`: at least 5 elements), as TensorFlow's kernels check their indexes: the
compiled code reads the arrays without bounds checks.
"""

import numpy as np

from tracer import nest
from tracer.compat.v1.graphs import Operation, get_default_graph
from tracer.concrete import ConcreteFunction
from tracer.dtypes import int32
from tracer.errors import InvalidArgumentError
from tracer.executables import BACKENDS
from tracer.ir import Literal, Node, dims, format_location, topological_closure
from tracer.ops.core import graph_node_of
from tracer.signature import TensorSpec
from tracer.tensor import Tensor, TensorLike
from tracer.variable import Variable


class Session:
    """Runs a graph: `Session(graph=None)` (the default graph when None), `run(fetches,
    feed_dict)`, `close()`; a context manager."""

    def __init__(self, target="", graph=None, config=None):
        self.graph = graph if graph is not None else get_default_graph()
        # ids of the fetched nodes (or tensors with values) and the fed placeholders ->
        # (those nodes or tensors, kept so that the ids stay theirs, ConcreteFunction, feeds,
        # what its ops assumed of the sizes)
        self._runs = {}
        self._calls = {}  # ids of the fetched tensors and the feed's keys -> _Run
        self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()

    def close(self):
        self._closed = True
        self._runs.clear()
        self._calls.clear()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """The values of `fetches` (a tensor, or a list, tuple, dict or namedtuple of them)
        as numpy values, in the same structure, for the values `feed_dict` gives its
        placeholders."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        flat = nest.flatten(fetches)
        feed_dict = feed_dict or {}
        key = (*map(id, flat), None, *map(id, feed_dict))
        run = self._calls.get(key)
        if run is None or not run.made_for(flat, feed_dict):
            run = self._calls[key] = self._prepare(flat, feed_dict)
        arrays = run.arguments(feed_dict)
        if run.needs:
            run.check_sizes(arrays)
        results = run.function._run_eagerly(arrays)
        values = [
            None if isinstance(fetch, Operation) else value[()] if value.ndim == 0 else value
            for fetch, value in zip(flat, results)
        ]
        if isinstance(fetches, (TensorLike, Operation)):
            return values[0]
        if type(fetches) in (list, tuple) and len(fetches) == len(flat):  # flat already
            return type(fetches)(values)
        return nest.pack_sequence_as(fetches, values)

    def _prepare(self, flat, feed_dict):
        """The `_Run` of these fetches and feeds: its function is made at the first run that
        fetches the same tensors and feeds the same placeholders."""
        for fetch in flat:
            if not isinstance(fetch, (TensorLike, Operation)):
                raise TypeError(
                    f"Fetch argument {fetch!r} has invalid type {type(fetch).__name__}, must "
                    "be a tracer Tensor, Variable or op (tt.group) of the session's graph"
                )
            self._check_element(fetch)
        # a variable fetched is its value when the run starts; an op's place holds a
        # constant, and what it runs follows the fetches
        outputs = [_fetched_tensor(f) for f in flat]
        outputs += [
            t for f in flat if isinstance(f, Operation) for t in map(_fetched_tensor, f.inputs)
        ]
        placeholders = {id(node) for node in self.graph._placeholders}
        fed = {}
        for key in feed_dict:
            node = key._node if isinstance(key, Tensor) else None
            if node is None or id(node) not in placeholders:
                raise TypeError(
                    f"The key {key!r} of feed_dict is not a placeholder of the session's "
                    "graph: tracer feeds placeholders (tt.compat.v1.placeholder) only"
                )
            fed[id(node)] = (node, key)
        # a graph tensor is its node; a tensor with a value is itself (a node made of it now
        # would die, and its id be another's)
        keys = [t if t._value is not None else t._node for t in outputs]
        signature = (tuple(map(id, keys)), tuple(sorted(fed)))
        if signature not in self._runs:
            self._runs[signature] = (keys, *self._compile(outputs, fed))
        _, function, feeds, needs = self._runs[signature]
        return _Run(function, feeds, needs, flat, feed_dict)

    def _check_element(self, fetch):
        """Raise TensorFlow's ValueError for a fetch that is not of the session's graph: a
        tensor of another graph or of a tt.function's trace, a variable no op of the graph
        reads. NOTE: a tensor with a value (a constant, or ops of constants, which tracer
        computes at once in a graph too) cannot be told from an eager one: it is taken."""
        if isinstance(fetch, Operation):
            for tensor in fetch.inputs:
                self._check_element(tensor)
            return
        trace = self.graph._trace
        if isinstance(fetch, Variable):
            known = trace.variables.get(id(fetch)) is fetch
        else:
            known = fetch._value is not None or fetch._node in trace.own
        if not known:
            raise ValueError(
                f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. ({fetch!r} is "
                "not an element of this graph: it is of another graph or of a tt.function's "
                "trace"
                + (", or no op of this graph reads it)" if isinstance(fetch, Variable) else ")")
            )

    def _compile(self, outputs, fed):
        trace = self.graph._trace
        nodes = [graph_node_of(t) for t in outputs]
        closure = topological_closure(nodes)
        needed = [n for n in closure if n.op == "input"]
        # placeholders whose None sizes the fetches use, not their values (tf.shape(x))
        symbols = set().union(*(dims.symbols_of((n.shape, n.attrs)) for n in closure))
        needed += [
            n
            for n in self.graph._placeholders
            if symbols & dims.symbols_of(n.shape) and all(m is not n for m in needed)
        ]
        placeholders = {id(node) for node in self.graph._placeholders}
        variables = {id(v._node) for v in trace.variables.values()}
        feeds = []
        for node in needed:
            if id(node) in placeholders:
                if id(node) not in fed:
                    raise InvalidArgumentError(
                        None,
                        None,
                        f"You must feed a value for placeholder tensor {node.attrs['name']!r} "
                        f"with dtype {node.dtype.name} and shape {_shown(node.shape)}",
                    )
                feeds.append(node)
            elif id(node) not in variables:
                raise ValueError(
                    "a fetched tensor reads a tensor that is not an element of this graph "
                    "(an input made elsewhere: of another graph, or of a tt.function's trace)"
                )
        specs = tuple(TensorSpec(_shown(n.shape), n.dtype, n.attrs["name"]) for n in feeds)
        run = trace.restricted(feeds)
        # what ops assumed of the None sizes: the "!= 0" of the ops this run runs, and the
        # ">= 0" (an index inside an axis) of every op made before the last it runs: a
        # gradient, or a tt.function inlined, reads the index through nodes made after the
        # one the assumption is kept with
        ran = {id(n) for n in closure}
        last = max((trace.own.get(n, -1) for n in closure), default=-1)
        needs = [
            (node, size, kind)
            for node, assumed in trace.needs.values()
            for size, kind in assumed
            if id(node) in ran or (kind == ">= 0" and trace.own[node] <= last)
        ]
        run.requirements = [size for _, size, kind in needs if kind == ">= 0"]
        run.other_than_zero = [size for _, size, kind in needs if kind == "!= 0"]
        for node in closure:  # the assign ops the fetches need: the run assigns (the last)
            variable = trace.assignments.get(id(node))
            if variable is not None:
                run.assign(variable, Tensor(None, node))
        function = ConcreteFunction(
            "session_run",
            run,
            list(outputs),
            BACKENDS["auto"],
            (specs, {}),
            [(n.attrs["name"], spec) for n, spec in zip(feeds, specs)],
        )
        return function, feeds, needs


def _fetched_tensor(fetch):
    if isinstance(fetch, Variable):
        return Tensor(None, fetch._node)
    if isinstance(fetch, Operation):
        return _OPERATION_PLACE
    return fetch


# what an op's place among the fetches computes: one constant node, so that runs of the same
# fetches find the same function
_OPERATION_PLACE = Tensor(None, Node("const", (), {"value": Literal(np.int32(0))}, (), int32))


def _fits(shape, traced):
    return len(shape) == len(traced) and all(
        isinstance(t, dims.Dim) or s == t for s, t in zip(shape, traced)
    )


def _shown(shape):
    return tuple(None if isinstance(d, dims.Dim) else d for d in shape)


class _Run:
    """One kind of `Session.run`: its function, and the fetches and feed keys it was made
    for (kept, so that the ids keying it stay theirs)."""

    __slots__ = ("function", "feeds", "needs", "positions", "fetches", "fed")

    def __init__(self, function, feeds, needs, fetches, feed_dict):
        self.function = function
        self.feeds = feeds  # the placeholder nodes it reads, in the order of its arguments
        # [(node, polynomial of None sizes, ">= 0" or "!= 0")]: what its ops assumed
        self.needs = needs
        self.fetches = fetches
        self.fed = list(feed_dict)
        # where each of `feeds` is among the feed_dict's values (its keys are in this order)
        order = [key._node for key in feed_dict]
        self.positions = [next(k for k, n in enumerate(order) if n is node) for node in feeds]

    def made_for(self, fetches, feed_dict):
        return all(a is b for a, b in zip(fetches, self.fetches)) and all(
            a is b for a, b in zip(feed_dict, self.fed)
        )

    def arguments(self, feed_dict):
        """The fed values as the function's arrays, each checked against its placeholder."""
        arrays = []
        values = list(feed_dict.values())
        for key, value in feed_dict.items():
            if isinstance(value, TensorLike):
                raise TypeError(
                    "The value of a feed cannot be a tf.Tensor object. Acceptable feed values "
                    "include Python scalars, strings, lists, numpy ndarrays, or TensorHandles. "
                    f"For reference, the tensor object was {value!r} which was passed to the "
                    f"argument `feed_dict` with key {key!r}."
                )
        for node, position in zip(self.feeds, self.positions):
            value = values[position]
            array = value if type(value) is np.ndarray else _as_array(value)
            if array.dtype != node.dtype.as_numpy_dtype:
                array = _cast(array, node)
            if array.shape != node.shape and not _fits(array.shape, node.shape):
                raise ValueError(
                    f"Cannot feed value of shape {array.shape} for placeholder "
                    f"{node.attrs['name']!r}, which has shape {_shown(node.shape)}"
                )
            arrays.append(array)
        return arrays

    def check_sizes(self, arrays):
        """Raise InvalidArgumentError where the fed sizes break what an op of this run
        assumed of the None sizes when it was built (`x[4]` of an x fed 3 elements), before
        the compiled code reads outside the arrays."""
        sizes = dims.sizes_given([n.shape for n in self.feeds], [a.shape for a in arrays])
        for node, size, kind in self.needs:
            if not set(size.symbols) <= sizes.keys():  # of placeholders this run does not feed
                continue
            value = size.evaluate(sizes)
            if value < 0 if kind == ">= 0" else value == 0:
                fed = ", ".join(
                    f"{n.attrs['name']!r} of shape {_shown(n.shape)} is fed shape {a.shape}"
                    for n, a in zip(self.feeds, arrays)
                    if set(size.symbols) & dims.symbols_of(n.shape)
                )
                raise InvalidArgumentError(
                    None,
                    None,
                    f"{node.op} (at {format_location(node.location) or 'an unknown line'}) "
                    f"was built for fed sizes where {size} {kind}, and {fed}: " + _WHY[kind],
                )


# why an op needs a polynomial of None sizes to be >= 0, or != 0 (tracer/tracing.py's Trace)
_WHY = {
    ">= 0": "an index or slice out of the bounds of the fed value",
    "!= 0": "a comparison of a None size was answered as false when the graph was built",
}


def _as_array(value):
    return np.asarray(value)


def _cast(array, node):
    wanted = node.dtype.as_numpy_dtype
    if not np.can_cast(array.dtype, wanted, casting="same_kind"):
        raise ValueError(
            f"Cannot feed a value of dtype {array.dtype} for placeholder "
            f"{node.attrs['name']!r} of dtype {node.dtype.name}"
        )
    return array.astype(wanted)
