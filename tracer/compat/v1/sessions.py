"""TensorFlow 1's `Session`: runs what a graph's tensors compute, for values fed to its
placeholders.

Each distinct `run` (which tensors it fetches, which placeholders it feeds) becomes a
ConcreteFunction of the graph's ops from those placeholders to those tensors, compiled at
its first run and reused by every later run that fetches and feeds the same (the fed
values may change, and so may the sizes a placeholder left as None). Ops the fetches do not
need are not computed. Results come back as numpy values, as TensorFlow 1's do.
"""

import numpy as np

from tracer import nest
from tracer.compat.v1.graphs import Operation, get_default_graph
from tracer.concrete import ConcreteFunction
from tracer.dtypes import int32
from tracer.errors import InvalidArgumentError
from tracer.executables import BACKENDS
from tracer.ir import Literal, Node, dims, topological_closure
from tracer.ops.core import graph_node_of
from tracer.signature import TensorSpec
from tracer.tensor import Tensor, TensorLike
from tracer.variable import Variable


class Session:
    """Runs a graph: `Session(graph=None)` (the default graph when None), `run(fetches,
    feed_dict)`, `close()`; a context manager."""

    def __init__(self, target="", graph=None, config=None):
        self.graph = graph if graph is not None else get_default_graph()
        self._runs = {}  # (fetched nodes, fed placeholders) -> (ConcreteFunction, its feeds)
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
        results = run.function._run_eagerly(run.arguments(feed_dict))
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
        signature = (tuple(id(graph_node_of(t)) for t in outputs), tuple(sorted(fed)))
        if signature not in self._runs:
            self._runs[signature] = self._compile(outputs, fed)
        function, feeds = self._runs[signature]
        return _Run(function, feeds, flat, feed_dict)

    def _compile(self, outputs, fed):
        trace = self.graph._trace
        nodes = [graph_node_of(t) for t in outputs]
        closure = topological_closure(nodes)
        needed = [n for n in closure if n.op == "input"]
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
                    "a fetched tensor is not an element of the session's graph (it depends "
                    "on an input made elsewhere: another graph, or a tt.function's trace)"
                )
        specs = tuple(TensorSpec(_shown(n.shape), n.dtype, n.attrs["name"]) for n in feeds)
        run = trace.restricted(feeds)
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
        return function, feeds


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

    __slots__ = ("function", "feeds", "positions", "fetches", "fed")

    def __init__(self, function, feeds, fetches, feed_dict):
        self.function = function
        self.feeds = feeds  # the placeholder nodes it reads, in the order of its arguments
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


def _as_array(value):
    return np.asarray(value.numpy() if isinstance(value, TensorLike) else value)


def _cast(array, node):
    wanted = node.dtype.as_numpy_dtype
    if not np.can_cast(array.dtype, wanted, casting="same_kind"):
        raise ValueError(
            f"Cannot feed a value of dtype {array.dtype} for placeholder "
            f"{node.attrs['name']!r} of dtype {node.dtype.name}"
        )
    return array.astype(wanted)
