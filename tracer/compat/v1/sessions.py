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
from tracer.compat.v1.graphs import get_default_graph
from tracer.concrete import ConcreteFunction
from tracer.context import outside_trace
from tracer.errors import InvalidArgumentError
from tracer.executables import BACKENDS
from tracer.ir import dims, topological_closure
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
        self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()

    def close(self):
        self._closed = True
        self._runs.clear()

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """The values of `fetches` (a tensor, or a list, tuple, dict or namedtuple of them)
        as numpy values, in the same structure, for the values `feed_dict` gives its
        placeholders."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        flat = nest.flatten(fetches)
        for fetch in flat:
            if not isinstance(fetch, TensorLike):
                raise TypeError(
                    f"Fetch argument {fetch!r} has invalid type {type(fetch).__name__}, must "
                    "be a tracer Tensor or Variable of the session's graph"
                )
        outputs = [self._fetched(fetch) for fetch in flat]
        fed = self._fed(feed_dict or {})
        function, feeds = self._function(outputs, fed)
        arguments = [fed[id(node)][1] for node in feeds]
        with outside_trace():
            results = function._call(arguments)
        values = [r.numpy() for r in nest.flatten(results)]
        return nest.pack_sequence_as(fetches, values)

    def _fetched(self, fetch):
        if isinstance(fetch, Variable):
            return self.graph._trace.read(fetch)
        return fetch

    def _fed(self, feed_dict):
        """{id(placeholder node): (node, numpy value)}, each value checked against its
        placeholder's dtype and shape."""
        fed = {}
        placeholders = {id(node) for node in self.graph._placeholders}
        for key, value in feed_dict.items():
            node = key._node if isinstance(key, Tensor) else None
            if node is None or id(node) not in placeholders:
                raise TypeError(
                    f"The key {key!r} of feed_dict is not a placeholder of the session's "
                    "graph: tracer feeds placeholders (tt.compat.v1.placeholder) only"
                )
            array = np.asarray(value.numpy() if isinstance(value, TensorLike) else value)
            wanted = node.dtype.as_numpy_dtype
            if array.dtype != wanted:
                if not np.can_cast(array.dtype, wanted, casting="same_kind"):
                    raise ValueError(
                        f"Cannot feed a value of dtype {array.dtype} for placeholder "
                        f"{node.attrs['name']!r} of dtype {node.dtype.name}"
                    )
                array = array.astype(wanted)
            if not _fits(array.shape, node.shape):
                raise ValueError(
                    f"Cannot feed value of shape {array.shape} for placeholder "
                    f"{node.attrs['name']!r}, which has shape {_shown(node.shape)}"
                )
            fed[id(node)] = (node, array)
        return fed

    def _function(self, outputs, fed):
        """The compiled function of this fetch and feed (made at its first run), and the
        placeholders it reads, in the order of its arguments."""
        key = (tuple(id(graph_node_of(t)) for t in outputs), tuple(sorted(fed)))
        function = self._runs.get(key)
        if function is None:
            feeds, function = self._compile(outputs, fed)
            self._runs[key] = function = (function, feeds)
        return function

    def _compile(self, outputs, fed):
        trace = self.graph._trace
        if trace.assigned:
            raise NotImplementedError(
                "a tt.compat.v1 graph that assigns to variables cannot run in a Session yet: "
                "tracer's TensorFlow 1 graphs compute values from placeholders and variables"
            )
        nodes = [graph_node_of(t) for t in outputs]
        needed = [n for n in topological_closure(nodes) if n.op == "input"]
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
        return feeds, ConcreteFunction(
            "session_run",
            trace.restricted(feeds),
            list(outputs),
            BACKENDS["auto"],
            (specs, {}),
            [(n.attrs["name"], spec) for n, spec in zip(feeds, specs)],
        )


def _fits(shape, traced):
    return len(shape) == len(traced) and all(
        isinstance(t, dims.Dim) or s == t for s, t in zip(shape, traced)
    )


def _shown(shape):
    return tuple(None if isinstance(d, dims.Dim) else d for d in shape)
