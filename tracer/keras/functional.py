"""Keras's functional API: `tt.keras.Input` gives a symbolic `KerasTensor`, a layer called on
KerasTensors records the call and gives KerasTensors, and `tt.keras.Model(inputs, outputs)`
is a `Functional` model that runs the recorded calls on real tensors.

    >>> inputs = tt.keras.Input(shape=(4,), name="x")
    >>> hidden = tt.keras.layers.Dense(8, activation="relu")(inputs)
    >>> model = tt.keras.Model(inputs, tt.keras.layers.Dense(2)(hidden))
    >>> model.output_shape, model(tt.ones((3, 4))).shape
    ((None, 2), TensorShape([3, 2]))

The bookkeeping is Keras 3's, which its `.keras` files are written from: a KerasTensor's
`_keras_history` is (layer, node index, tensor index), and each call of a layer on
KerasTensors appends a `Node` to `layer._inbound_nodes`. `functional_structure(model)` gives
the model's graph in the form of Keras 3's functional config.

A layer called on KerasTensors is built from their shapes (None for the batch axis), then
its output shapes and dtypes are found by tracing its call, as `tt.function` traces: the
inputs are symbolic tensors whose unknown dimensions are symbols, so no value is computed,
and every output dimension that depends on a symbol is None (docs/keras_functional.md).
"""

import collections
import functools
import inspect
import warnings

from tracer import nest
from tracer.dtypes import as_dtype
from tracer.ir.dims import Dim
from tracer.keras import extensions, operations, summary
from tracer.keras.keras_tensor import KerasHistory, KerasTensor, Node, inbound_nodes, node_of
from tracer.keras.layers.input_layer import InputLayer
from tracer.keras.models import Model
from tracer.ops.array_ops import cast, expand_dims, squeeze
from tracer.sparse_tensor import SparseTensor
from tracer.tensor import Tensor, convert_to_tensor
from tracer.tracing import Trace, tracing
from tracer.train import deferred

# --- a layer called on KerasTensors ------------------------------------------------------------


def call_symbolic(layer, *args, **kwargs):
    """`layer(*args, **kwargs)` where the arguments hold KerasTensors: builds the layer from
    their shapes, records the call as a new node of the layer and returns its outputs as
    KerasTensors (the structure the layer's call returns).

    Raises ValueError, naming the layer and the shapes, when the layer cannot take them."""
    if _takes_mask(type(layer).call) and "mask" not in kwargs:
        kwargs["mask"] = None  # Keras records it for a layer whose call takes a mask
    try:
        _build(layer, args[0] if args else None)
        outputs = _traced_outputs(layer, args, kwargs)
        shapes = [_known(t.shape) for t in nest.flatten(outputs)]
    except (TypeError, ValueError) as error:
        # a layer that needs a size the inputs leave unknown (a convolution of any image
        # size): its outputs' shapes from two calls on sizes it can take
        probed = (
            _probed_outputs(layer, args, kwargs) if _unknown_beyond_batch(args, kwargs) else None
        )
        if probed is None:
            _refuse(layer, args, kwargs, error)
        outputs, shapes = probed
    except Exception as error:
        _refuse(layer, args, kwargs, error)
    for leaf in nest.flatten(outputs):
        if not isinstance(leaf, Tensor):
            raise TypeError(
                f"layer {layer.name!r} ({type(layer).__name__}) returned {leaf!r} when called "
                "on KerasTensors; a layer in a functional model returns tensors"
            )
    node_index = len(inbound_nodes(layer))
    tensors = [
        KerasTensor(shape, t.dtype, history=KerasHistory(layer, node_index, i))
        for i, (t, shape) in enumerate(zip(nest.flatten(outputs), shapes))
    ]
    _attach_masks(tensors, nest.flatten(outputs))
    layer._inbound_nodes.append(Node(layer, args, kwargs, tensors))
    if isinstance(getattr(layer, "_output_shape", None), (tuple, list)):
        # NOTE: Layer.__call__ notes its first output shape for summaries; here that was the
        # traced one, whose unknown dimensions are symbols (or probe sizes): Keras shows None.
        layer._output_shape = shapes[0] if len(shapes) == 1 else shapes
    return nest.pack_sequence_as(outputs, tensors)


def _refuse(layer, args, kwargs, error):
    """The ValueError of a layer that cannot take its inputs' shapes, naming both."""
    shapes = ", ".join(str(t.shape) for t in nest.flatten((args, kwargs)) if _is_keras(t))
    raise ValueError(
        f"layer {layer.name!r} ({type(layer).__name__}) cannot be called on inputs of "
        f"shape {shapes}: {type(error).__name__}: {error}"
    ) from error


# the sizes a layer is traced with for the unknown sizes (beyond the batch's) it cannot take
# as symbols: powers of two, which strides and poolings divide, and a U-Net's skips join
_PROBE_SIZES = (256, 512)


def _unknown_beyond_batch(args, kwargs):
    """Whether a KerasTensor among the arguments has a size unknown beyond the batch's, or
    is sparse (a SparseTensor's dense shape is known when traced: each size is probed)."""
    return any(
        t.sparse or None in t.shape[1:] for t in nest.flatten((args, kwargs)) if _is_keras(t)
    )


def _probed_outputs(layer, args, kwargs):
    """(outputs, their Keras shapes) of `layer` traced twice with the unknown sizes beyond
    the batch's taken as each of _PROBE_SIZES: a size that differs between the two is
    unknown (None), the others are known; None where either call fails."""
    results = []
    for size in _PROBE_SIZES:
        try:
            results.append(_traced_outputs(layer, args, kwargs, probe=size))
        except (TypeError, ValueError):
            return None
    first, second = (nest.flatten(outputs) for outputs in results)
    shapes = [
        tuple(a if a == b and isinstance(a, int) else None for a, b in zip(x.shape, y.shape))
        for x, y in zip(first, second)
    ]
    return results[0], shapes


def _build(layer, inputs):
    """Build `layer` for `inputs`' shapes with None kept, before the trace: its `build` sees
    what Keras gives it (`(None, 4)`; a list of shapes for a list of tensors), not symbols."""
    if layer.built:
        return
    shapes = _map_tensors(lambda t: t.shape, inputs)
    outer = layer._enter_scope()
    try:
        layer.build(shapes)
        layer.built = True
        if layer in deferred.pending:
            deferred.restore_built(layer)
    finally:
        layer._leave_scope(outer)


def _traced_outputs(layer, args, kwargs, probe=None):
    """What `layer(*args, **kwargs)` returns when traced with each KerasTensor a symbolic
    tensor (its None dimensions symbols, or beyond the batch's the size `probe`): tensors
    with shapes and dtypes, no values."""
    trace = Trace()

    def symbolic(tensor):
        if tensor.sparse:
            return _symbolic_sparse(trace, tensor, probe)
        shape = _symbolic_shape(tensor.shape)
        if probe is not None:
            shape = shape[:1] + tuple(probe if d is None else d for d in tensor.shape[1:])
        traced = trace.input(tensor.name, shape, as_dtype(tensor.dtype))
        mask = getattr(tensor, "_keras_mask", None)
        if mask is not None:  # the layer sees the mask its inputs will have, as it runs
            traced._keras_mask = symbolic(mask)
        return traced

    traced_args, traced_kwargs = _map_tensors(symbolic, (args, kwargs))
    with tracing(trace):
        outputs = layer(*traced_args, **traced_kwargs)
    layer._clear_losses()  # the trace's, which no call computes
    return outputs


def _symbolic_sparse(trace, tensor, probe):
    """A sparse KerasTensor traced as a SparseTensor of `probe` symbolic entries, its dense
    shape's unknown sizes (the batch's too) each `probe`; a TypeError without a probe, so
    that call_symbolic probes it."""
    if probe is None:
        raise TypeError("a sparse input's dense shape is known when traced: probe its sizes")
    shape = tuple(probe if d is None else d for d in tensor.shape)
    count = probe
    indices = trace.input(f"{tensor.name}/indices", (count, len(shape)), as_dtype("int64"))
    values = trace.input(f"{tensor.name}/values", (count,), as_dtype(tensor.dtype))
    return SparseTensor(indices, values, shape)


def _attach_masks(tensors, traced_outputs):
    """Give each output KerasTensor the mask the traced call attached to its tensor, as a
    KerasTensor of its own (Keras's passes its input's mask object on unchanged)."""
    for tensor, traced in zip(tensors, traced_outputs):
        mask = getattr(traced, "_keras_mask", None)
        if isinstance(mask, Tensor):
            tensor._keras_mask = KerasTensor(_known(mask.shape), mask.dtype)


def _symbolic_shape(shape):
    """A KerasTensor's shape for tracing: None on axis k is the symbol d<k>."""
    return tuple(Dim.symbol(f"d{k}") if d is None else d for k, d in enumerate(shape))


def _known(shape):
    """A traced shape as Keras gives it: None where the size depends on an unknown one."""
    return tuple(d if isinstance(d, int) else None for d in shape)


def _is_keras(value):
    return isinstance(value, KerasTensor)


def _map_tensors(function, structure):
    """`structure` with `function` applied to each KerasTensor in it."""
    leaves = nest.flatten(structure)
    return nest.pack_sequence_as(structure, [function(x) if _is_keras(x) else x for x in leaves])


@functools.cache
def _takes_mask(call):
    return "mask" in inspect.signature(call).parameters


# --- the functional model ----------------------------------------------------------------------


class Functional(Model):
    """A model made of layer calls on KerasTensors: `tt.keras.Model(inputs, outputs)`, with
    `inputs` and `outputs` each a KerasTensor, a list or a dict of them. Called on tensors
    of the inputs' structure, it runs each recorded call in order (eagerly, under a tape, or
    traced by `tt.function`) and returns the outputs' structure; `training` reaches every
    layer whose call takes it.

    >>> a, b = tt.keras.Input((2,), name="a"), tt.keras.Input((3,), name="b")
    >>> joined = tt.keras.layers.Dense(1)(tt.keras.layers.Concatenate()([a, b]))
    >>> model = tt.keras.Model({"a": a, "b": b}, joined)
    >>> model({"a": tt.ones((4, 2)), "b": tt.ones((4, 3))}).shape
    TensorShape([4, 1])
    """

    _has_scope = False  # no scope of its own: its layers were built, and named, before it

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        super().__init__(name=name, **kwargs)
        self.dtype = None  # each layer casts its own inputs
        self._inputs_struct = _structure_of(inputs, "inputs")
        self._outputs_struct = _structure_of(outputs, "outputs")
        self._inputs = nest.flatten(self._inputs_struct)
        self._outputs = nest.flatten(self._outputs_struct)
        _check_inputs(self._inputs)
        nodes, layers = _map_graph(self._inputs, self._outputs)
        self._layers = layers
        self._nodes = [node for node in nodes if not node.is_input]  # the order they run in
        self._node_ids = {id(node) for node in nodes}
        self.output_names = [t._keras_history.operation.name for t in self._outputs]
        self.built = True
        if not trainable:
            self.trainable = False

    # --- what Keras's functional models expose --------------------------------------------

    @property
    def layers(self):
        """The model's layers, InputLayers first, each once, in Keras's order: by the most
        layer calls between the layer and an output (more first), then in the order a walk
        back from the outputs meets them. Operations (`x[:, -1]`) are not layers (Keras's)."""
        return [layer for layer in self._layers if not isinstance(layer, operations.Operation)]

    @property
    def inputs(self):
        return list(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def input(self):
        return self._inputs_struct

    @property
    def output(self):
        return self._outputs_struct

    @property
    def input_shape(self):
        """The shapes of `inputs` (None for the batch axis), in a list; one for one input."""
        return _unpack(_shapes(self._inputs))

    @property
    def output_shape(self):
        """The shapes of `outputs`, in a list; one for one output."""
        return _unpack(_shapes(self._outputs))

    def get_config(self):
        """Keras's config of the model: its layers, how they are called and its inputs and
        outputs, as a `.keras` file's config.json holds them."""
        return extensions.saving.model_configs.model_config(self, with_compile=False)["config"]

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The model (new layers, new weights) `config` describes."""
        entry = {"class_name": "Functional", "config": config}
        return extensions.saving.model_configs.model_from_config(entry, custom_objects, False)

    # --- running the graph ----------------------------------------------------------------

    def build(self, input_shape):
        """Nothing to build: the layers were built when they were called on KerasTensors."""
        self.built = True

    def call(self, inputs, training=None, mask=None):
        values = {id(k): v for k, v in zip(self._inputs, self._standardized(inputs))}
        for node in self._nodes:
            args, kwargs = _map_tensors(lambda k: values[id(k)], node.arguments)
            if training is not None:
                kwargs["training"] = training  # (Layer.__call__ drops it where call has none)
            results = nest.flatten(node.operation(*args, **kwargs))
            if len(results) != len(node.outputs):
                raise ValueError(
                    f"layer {node.operation.name!r} returned {len(results)} tensors in model "
                    f"{self.name!r}, where its call on KerasTensors returned {len(node.outputs)}"
                )
            values.update((id(k), v) for k, v in zip(node.outputs, results))
        outputs = [values[id(k)] for k in self._outputs]
        return _unpack(nest.pack_sequence_as(self._outputs_struct, outputs))

    def _standardized(self, inputs):
        """The model's inputs, flat, as tensors of the Inputs' dtypes: given in the inputs'
        structure (a dict by key; a list for a dict in `inputs` order; one tensor for one)."""
        flat = self._flat_inputs(inputs)
        tensors = []
        for position, (value, expected) in enumerate(zip(flat, self._inputs)):
            if expected.sparse:
                tensors.append(self._sparse_input(position, value, expected))
                continue
            tensor = convert_to_tensor(value)
            if tensor.dtype != expected.dtype:
                tensor = cast(tensor, expected.dtype)
            tensors.append(self._checked(position, _adjust_rank(tensor, expected.shape), expected))
        return tensors

    def _flat_inputs(self, inputs):
        """The inputs in `self._inputs` order. As Keras: a dict is read by the keys of the
        model's dict of inputs, or else by the Inputs' names (other keys are ignored, with
        a warning); a list fills a dict of inputs in sorted key order, when its keys are."""
        names = [t.name for t in self._inputs]
        struct = self._inputs_struct
        if isinstance(inputs, dict):
            keys = list(struct) if isinstance(struct, dict) else names
            missing = [key for key in keys if key not in inputs]
            if missing:
                raise ValueError(
                    f"model {self.name!r} takes inputs {keys} by key, but it was called "
                    f"without {missing}"
                )
            extra = [key for key in inputs if key not in keys]
            if extra:
                warnings.warn(f"model {self.name!r} ignores the inputs {extra}", stacklevel=4)
            if isinstance(struct, dict):
                return nest.flatten({key: inputs[key] for key in struct}, expand_composites=False)
            return [inputs[name] for name in names]
        if isinstance(struct, dict) and list(struct) != sorted(struct):
            raise ValueError(
                f"model {self.name!r} takes a dict of inputs {list(struct)}; given a list, "
                "it could not tell which is which (its keys are not in sorted order)"
            )
        flat = (
            nest.flatten(inputs, expand_composites=False)
            if isinstance(inputs, (list, tuple))
            else [inputs]
        )
        if len(flat) != len(self._inputs):
            raise ValueError(
                f"model {self.name!r} expects {len(self._inputs)} input(s) {names}, but it was "
                f"called with {len(flat)}"
            )
        return flat

    def _sparse_input(self, position, value, expected):
        """A SparseTensor for a sparse Input, its values of the Input's dtype."""
        if not isinstance(value, SparseTensor):
            raise TypeError(
                f"input {position} ({expected.name!r}) of model {self.name!r} is sparse "
                f"(Input(sparse=True)): give a tt.SparseTensor, not {type(value).__name__}"
            )
        self._checked(position, value, expected)
        if value.dtype != expected.dtype:
            value = value.with_values(cast(value.values, expected.dtype))
        return value

    def _checked(self, position, tensor, expected):
        shape = tensor.shape
        mismatch = len(shape) != len(expected.shape) or any(
            k is not None and isinstance(d, int) and d != k for d, k in zip(shape, expected.shape)
        )
        if mismatch:
            raise ValueError(
                f"input {position} ({expected.name!r}) of model {self.name!r} has shape "
                f"{tuple(shape)}, but the model expects shape {expected.shape} (None: any size)"
            )
        return tensor

    # --- Model.summary() ------------------------------------------------------------------

    def _summary_rows(self):
        """Keras's summary rows: (layer name, class name, output shape, parameters, the
        inputs it is connected to as `layer[node][tensor]`, or None for every row where the
        model runs its layers in a line, and Keras shows no "Connected to" column, the
        trainable mark)."""
        connected = not self._runs_in_a_line()
        rows = []
        for layer in self._layers:
            sources = [
                f"{t._keras_history.operation.name}[{t._keras_history.node_index}]"
                f"[{t._keras_history.tensor_index}]"
                for node in layer._inbound_nodes
                if id(node) in self._node_ids
                for t in node.input_tensors
            ]
            shape = _shape_text(layer._inbound_nodes[-1].outputs)
            params = f"{layer.count_params():,}"
            operation = isinstance(layer, operations.Operation)  # named as Keras's op class
            kind = layer.class_name if operation else type(layer).__name__
            rows.append(
                (
                    layer.name,
                    kind,
                    shape,
                    params,
                    sources if connected else None,
                    summary.trainable_mark(layer),
                )
            )
        return rows

    def _runs_in_a_line(self):
        """Whether the layers make a chain from the one input: each called once, on the
        tensor the call before gave (Keras's summary then has no "Connected to")."""
        if len(self._inputs) != 1:
            return False
        chain = [node_of(self._inputs[0]), *self._nodes]
        return len({id(node.operation) for node in chain}) == len(chain) and all(
            len(node.input_tensors) == 1 and node_of(node.input_tensors[0]) is before
            for before, node in zip(chain, chain[1:])
        )


def _structure_of(value, what):
    """`inputs` or `outputs` checked: KerasTensors in a list, tuple or dict (or one)."""
    leaves = nest.flatten(value)
    bad = [leaf for leaf in leaves if not _is_keras(leaf)]
    if bad or not leaves:
        raise ValueError(
            f"tt.keras.Model: {what} must be KerasTensors (tt.keras.Input and layers called on "
            f"it), alone or in a list or dict; got {bad[0] if bad else value!r}"
        )
    return value


def _check_inputs(inputs):
    for tensor in inputs:
        if not isinstance(tensor._keras_history.operation, InputLayer):
            raise ValueError(
                f"tt.keras.Model: the input {tensor.name!r} is made by layer "
                f"{tensor._keras_history.operation.name!r}; a model's inputs must be "
                "tt.keras.Input tensors (tracer does not cut graphs at inner tensors)"
            )
    names = [t.name for t in inputs]
    if len(set(map(id, inputs))) != len(inputs):
        raise ValueError(f"tt.keras.Model: an input is given twice in {names}")


def _map_graph(inputs, outputs):
    """(nodes, layers) between `inputs` and `outputs`: the nodes in an order where each comes
    after the nodes that make its inputs (a depth-first walk back from each output), and the
    layers in Keras's order (see `Functional.layers`). Raises ValueError for an output that
    needs an Input not in `inputs`, or for two layers of one name."""
    declared = {id(t) for t in inputs}
    order, first_met, done = [], {}, set()
    for output in outputs:
        root = node_of(output)
        if id(root) in done:
            continue
        _check_reachable(output, output, declared)
        first_met.setdefault(root.operation, len(first_met))
        stack = [(root, iter(root.input_tensors))]
        while stack:
            node, pending = stack[-1]
            tensor = next(pending, None)
            if tensor is None:
                stack.pop()
                done.add(id(node))
                order.append(node)
                continue
            parent = node_of(tensor)
            if id(parent) in done:
                continue
            _check_reachable(tensor, output, declared)
            first_met.setdefault(parent.operation, len(first_met))
            stack.append((parent, iter(parent.input_tensors)))
    depths = _layer_depths(order)
    for tensor in inputs:  # inputs no output needs come first among the last layers
        layer = tensor._keras_history.operation
        if layer not in depths:
            depths[layer], first_met[layer] = 0, -1
    layers = sorted(depths, key=lambda layer: (-depths[layer], first_met[layer]))
    names = collections.Counter(layer.name for layer in layers)
    repeated = [name for name, count in names.items() if count > 1]
    if repeated:
        raise ValueError(
            f"tt.keras.Model: the layer name {repeated[0]!r} is used {names[repeated[0]]} times; "
            "the layers of a model need unique names"
        )
    return order, layers


def _check_reachable(tensor, output, declared):
    if node_of(tensor).is_input and id(tensor) not in declared:
        raise ValueError(
            f"tt.keras.Model: output {output.name!r} is not connected to the model's inputs: "
            f"it needs the Input {tensor.name!r}, which is not among them"
        )


def _layer_depths(order):
    """{layer: depth}: a node's depth is the most calls between it and an output, a layer's
    the greatest of its nodes' (Keras's rule, which sets each layer's place in `layers`)."""
    in_graph = {id(node) for node in order}
    node_depth, layer_depth = {}, {}
    for node in reversed(order):
        depth = max(node_depth.get(id(node), 0), layer_depth.get(node.operation, 0))
        node_depth[id(node)] = layer_depth[node.operation] = depth
        for parent in node.parent_nodes:
            if id(parent) in in_graph:
                node_depth[id(parent)] = max(node_depth.get(id(parent), 0), depth + 1)
    return layer_depth


def _adjust_rank(tensor, shape):
    """Keras's leniency: a trailing axis of size 1 dropped or added to match the Input."""
    rank = len(tensor.shape)
    if rank == len(shape) + 1 and tensor.shape[-1] == 1:
        return squeeze(tensor, axis=-1)
    if rank == len(shape) - 1 and shape[-1] == 1:
        return expand_dims(tensor, -1)
    return tensor


def _shapes(tensors):
    return [t.shape for t in tensors]


def _unpack(structure):
    """A list of one as its item, as Keras's functional models return it."""
    if isinstance(structure, list) and len(structure) == 1:
        return structure[0]
    return structure


def _shape_text(tensors):
    """Keras's summary text of output shapes: `(None, 4)`, or a list of several."""
    texts = ["(" + ", ".join(str(d) for d in t.shape) + ")" for t in tensors]
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


# --- the graph as Keras's config describes it --------------------------------------------------


def functional_structure(model):
    """The graph of a functional model in the form of Keras 3's `get_config()`, for a
    `.keras` file: a dict with

    - "name", "trainable";
    - "layers": per layer in `model.layers` order, {"layer", "name", "inbound_nodes",
      "inbound"}: "inbound_nodes" is Keras's list, one {"args": [...], "kwargs": {...}} per
      call of the layer in this model, each KerasTensor in them written as
      {"class_name": "__keras_tensor__", "config": {"shape", "dtype", "keras_history":
      [layer name, node index, tensor index]}}; "inbound" is the same calls as lists of
      (layer name, node index, tensor index) of their input tensors (an InputLayer has none);
    - "input_layers", "output_layers": [layer name, node index, tensor index] for each input
      and output, in the structure the model was given (one triple for one tensor).

    Node indices count only the calls in this model (a layer also called elsewhere keeps
    the indices Keras would write), and, as Keras writes them, the input and output triples
    of a nested Functional model count from 1. A model is rebuilt from this by calling
    `tt.keras.Input(...)` and the layers again in this order (`inbound_nodes` are their
    arguments), then `tt.keras.Model(inputs, outputs)`; a reader must take 1 from the node
    index of a Functional layer in "input_layers" and "output_layers", as Keras does.
    """
    kept = {}  # id(node) -> its index among its layer's nodes in this model
    for layer in model._layers:
        index = 1 if isinstance(layer, Functional) else 0
        for node in layer._inbound_nodes:
            if id(node) in model._node_ids:
                kept[id(node)] = index
                index += 1

    def history(tensor):
        layer, node_index, tensor_index = tensor._keras_history
        skipped = sum(1 for node in layer._inbound_nodes[:node_index] if id(node) not in kept)
        return [layer.name, node_index - skipped, tensor_index]

    def keras_tensor(tensor):
        return {
            "class_name": "__keras_tensor__",
            "config": {
                "shape": list(tensor.shape),
                "dtype": tensor.dtype,
                "keras_history": history(tensor),
            },
        }

    def endpoint(tensor):
        layer, _, tensor_index = tensor._keras_history
        return [layer.name, kept[id(node_of(tensor))], tensor_index]

    layers = []
    for layer in model._layers:
        calls = [n for n in layer._inbound_nodes if id(n) in kept and not n.is_input]
        layers.append(
            {
                "layer": layer,
                "name": layer.name,
                "inbound_nodes": [
                    {
                        "args": _to_lists(_map_tensors(keras_tensor, list(n.arguments.args))),
                        "kwargs": _map_tensors(keras_tensor, dict(n.arguments.kwargs)),
                    }
                    for n in calls
                ],
                "inbound": [[tuple(history(t)) for t in n.input_tensors] for n in calls],
            }
        )
    return {
        "name": model.name,
        "trainable": model.trainable,
        "layers": layers,
        "input_layers": _map_tensors(endpoint, model._inputs_struct),
        "output_layers": _map_tensors(endpoint, model._outputs_struct),
    }


def _to_lists(structure):
    """Tuples as lists, as JSON writes them."""
    if isinstance(structure, (list, tuple)):
        return [_to_lists(item) for item in structure]
    if isinstance(structure, dict):
        return {key: _to_lists(value) for key, value in structure.items()}
    return structure


# Layer.__call__ hands calls on KerasTensors here, and Model(inputs, outputs) makes a
# Functional, without importing this module (tracer/keras/extensions.py).
extensions.symbolic_call = call_symbolic
extensions.functional_model = Functional
