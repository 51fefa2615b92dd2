"""`tt.saved_model.save`: the objects reachable from a module, their functions' traced graphs
and their variables' values, in one checked file of the export directory.

    export_dir/saved_model.npz     (tracer/train/files.py's archive: written atomically)
        program              the JSON below, as UTF-8 bytes
        variables/<k>        each variable's value
        constants/<k>        the arrays of the graphs' constants

    {"format": "tracer-saved-model", "version": 1, "objects": [...], "variables": [...],
     "functions": [...], "signatures": {name: function index}}

An object is `{"attributes": {name: reference}}`, object 0 the root; a reference is
`{"object": k}`, `{"variable": k}`, `{"function": k}`, `{"list": [...]}`, `{"tuple": [...]}`
or `{"dict": [[key, reference], ...]}`. A function is its name and its concrete functions,
each `{"graph", "specs", "variables", "assigned", "leaves", "structure"}`: the traced graph
(graph_format.py; its inputs are the tensor arguments, then the variables it reads, its
outputs the tensor results, then the new values of the variables it assigns), the
arguments' specs, the variables by index, and the result's structure.
"""

import inspect
import json
import os

import numpy as np

from tracer import nest
from tracer.concrete import call_parameters
from tracer.function import Function
from tracer.function import function as tt_function
from tracer.ir import GraphAttribute
from tracer.ir.rewrite import rebuild
from tracer.module import Module
from tracer.saved_model import graph_format
from tracer.signature import TensorSpec
from tracer.tensor import Tensor, TensorLike
from tracer.tensor_shape import is_unknown_rank
from tracer.train import files
from tracer.variable import Variable

FORMAT = "tracer-saved-model"
VERSION = 1
FILE = "saved_model"  # (the archive adds .npz)
PROGRAM = "program"
UNKNOWN_RANKS = range(4)  # the ranks an input_signature's unknown rank is saved at


def save(obj, export_dir, signatures=None, options=None):
    """Save the module `obj` (its variables, `tt.function`s and sub-modules) in `export_dir`.

    Each `tt.function` is saved as the signatures it was traced for and its input_signature
    (an unknown rank is saved at ranks 0 to 3). `signatures` (a `tt.function` with an
    input_signature, a concrete function, or a dict of them by name) are also what the loaded
    object's `signatures` maps. Raises TypeError where something cannot be saved, naming it.
    """
    if not isinstance(obj, Module):
        raise TypeError(
            f"tt.saved_model.save: the object to save must be a tt.Module, not {type(obj).__name__}"
        )
    saver = _Saver(getattr(options, "experimental_custom_gradients", True))
    saver.object(obj, "root")
    if signatures is None and saver.keras_call(obj) is not None:  # TensorFlow's default
        signatures = saver.keras_call(obj)
    named = _signature_functions(signatures)
    program = {
        "format": FORMAT,
        "version": VERSION,
        "objects": saver.objects,
        "variables": saver.variables,
        "functions": saver.functions,
        "signatures": {name: saver.function(fn, f"signatures[{name!r}]") for name, fn in named},
    }
    text = json.dumps(program).encode("utf-8")
    arrays = {PROGRAM: np.frombuffer(text, dtype=np.uint8), **saver.arrays}
    export_dir = os.fspath(export_dir)
    os.makedirs(export_dir, exist_ok=True)
    try:
        files.write(os.path.join(export_dir, FILE), arrays)
    except TypeError as error:
        raise TypeError(f"tt.saved_model.save: {error}") from None


def _signature_functions(signatures):
    """[(name, Function or ConcreteFunction)] of `save`'s signatures argument."""
    if signatures is None:
        return []
    if not isinstance(signatures, dict):
        signatures = {"serving_default": signatures}
    for name, fn in signatures.items():
        if not isinstance(name, str) or not _is_function(fn):
            raise TypeError(
                "tt.saved_model.save: signatures maps names to tt.functions or concrete "
                f"functions, not {name!r}: {type(fn).__name__}"
            )
    return list(signatures.items())


def _is_function(value):
    """A tt.function, a method bound to its instance, or a concrete function."""
    return (
        isinstance(value, Function)
        or isinstance(getattr(value, "func", None), Function)
        or hasattr(value, "_traced")
    )


class _Saver:
    """The tables of a SavedModel's program, filled as the objects are walked."""

    def __init__(self, custom_gradients):
        self.custom_gradients = custom_gradients
        self.objects, self.variables, self.functions = [], [], []
        self.arrays = {}
        self._indices = {}  # id(object) -> its index in its table
        self._held = []  # what the indices' ids belong to, kept alive while saving
        self._keras_calls = {}  # id(layer) -> its call as a tt.function (`keras_call`)

    def object(self, obj, path):
        """The reference of `obj` (None for something no SavedModel tracks)."""
        if isinstance(obj, Variable):
            return {"variable": self._variable(obj)}
        if _is_function(obj):
            return {"function": self.function(obj, path)}
        if isinstance(obj, Module):
            return {"object": self._module(obj, path)}
        if isinstance(obj, (list, tuple)):
            kind = "tuple" if isinstance(obj, tuple) else "list"
            items = [self.object(v, f"{path}[{k}]") for k, v in enumerate(obj)]
            return {kind: items} if any(i is not None for i in items) else None
        if isinstance(obj, dict) and all(isinstance(key, str) for key in obj):
            pairs = [[key, self.object(v, f"{path}[{key!r}]")] for key, v in obj.items()]
            return {"dict": pairs} if any(i is not None for _, i in pairs) else None
        return None  # (a container of nothing tracked is not saved either)

    def _module(self, module, path):
        known = self._indices.get(id(module))
        if known is not None:
            return known
        index = self._indices[id(module)] = len(self.objects)
        self._held.append(module)
        entry = {"attributes": {}}
        self.objects.append(entry)
        members = dict(vars(module))
        for name, member in inspect.getmembers(type(module)):
            if isinstance(member, Function):
                members[name] = getattr(module, name)  # the method bound to this instance
        if "__call__" not in members and self.keras_call(module) is not None:
            members["__call__"] = self.keras_call(module)
        for name in sorted(members):
            reference = self.object(members[name], f"{path}.{name}")
            if reference is not None and (name == "__call__" or not name.startswith("__")):
                entry["attributes"][name] = reference
        return index

    def keras_call(self, layer):
        """A Keras layer or model built for one input: its call in inference mode as a
        tt.function of its input shape, the batch of any size, as TensorFlow saves a Keras
        model's call; None for anything else."""
        if id(layer) not in self._keras_calls:
            self._keras_calls[id(layer)] = _keras_call(layer)
        return self._keras_calls[id(layer)]

    def _tensor_default(self, tensor):
        """{"array": key} of a parameter's default that is a tensor with a value (a call
        that leaves it out is bound with it: it is the traced function's tensor argument)."""
        key = f"defaults/{len([k for k in self.arrays if k.startswith('defaults/')])}"
        self.arrays[key] = tensor.numpy()
        return {"array": key}

    def _variable(self, variable):
        known = self._indices.get(id(variable))
        if known is not None:
            return known
        index = self._indices[id(variable)] = len(self.variables)
        self._held.append(variable)
        key = f"variables/{index}"
        self.arrays[key] = variable.numpy()
        self.variables.append(
            {
                "name": variable.name,
                "trainable": variable.trainable,
                "dtype": variable.dtype.name,
                "key": key,
            }
        )
        return index

    def function(self, fn, path):
        """The index of a tt.function (a method bound to its instance, or a concrete
        function)."""
        own = fn if isinstance(fn, Function) else getattr(fn, "func", fn)
        known = self._indices.get(id(own))
        if known is not None:
            return known
        index = self._indices[id(own)] = len(self.functions)
        self._held.append(fn)
        entry = {"name": getattr(fn, "__name__", None) or fn.name, "concrete": []}
        self.functions.append(entry)
        python_function = getattr(own, "python_function", None)
        bound = 1 if own is not fn and getattr(fn, "args", ()) else 0  # (a method: its instance)
        parameters = _parameters(python_function, bound, self._tensor_default)
        for concrete in _concrete_functions(fn):
            try:
                saved = self._concrete(concrete)
            except TypeError as error:
                raise TypeError(f"tt.saved_model.save: cannot save {path}: {error}") from None
            arguments = _arguments(concrete, python_function, parameters, bound)
            if arguments is None:
                parameters = None  # (a value no file holds: calls match tensors alone)
            saved["arguments"] = arguments
            entry["concrete"].append(saved)
        if parameters is not None:
            entry["parameters"] = parameters
        return index

    def _concrete(self, concrete):
        graph = concrete._traced
        if not self.custom_gradients:
            graph = _forward_only(graph)
        n_arguments = len(graph.inputs) - len(concrete._variables)
        flat = concrete._flat_result
        tensors = iter(range(len(flat)))
        leaves = [
            {"tensor": next(tensors)} if isinstance(leaf, TensorLike) else _plain(leaf)
            for leaf in flat
        ]
        return {
            "graph": graph_format.encode(graph, self.arrays),
            "names": _argument_names(concrete, n_arguments),
            "specs": [_spec(node) for node in graph.inputs[:n_arguments]],
            "variables": [self._variable(v) for v in concrete._variables],
            "assigned": [self._variable(v) for v in concrete._assigned],
            "leaves": leaves,
            "structure": _structure(
                nest.pack_sequence_as(concrete._structure, list(range(len(flat))))
            ),
        }


def _argument_names(concrete, count):
    """The names of the tensor arguments, as a signature takes them by keyword: a parameter's
    own, or `name_k` for the k-th tensor of a structure."""
    names = []
    for name, value in concrete._named:
        tensors = [
            leaf for leaf in nest.flatten(value) if isinstance(leaf, (TensorLike, TensorSpec))
        ]
        names += [name] if len(tensors) == 1 else [f"{name}_{k}" for k in range(len(tensors))]
    return names if len(names) == count else [f"input_{k}" for k in range(count)]


def _keras_call(layer):
    shape = getattr(layer, "_build_input_shape", None)
    if not callable(getattr(layer, "call", None)) or not isinstance(shape, tuple) or not len(shape):
        return None
    if not all(d is None or type(d) is int for d in shape):
        return None  # a model of several inputs: its calls are not saved
    if _required_inputs(type(layer).call) > 1:
        return None  # a layer of several inputs (attention's query and value): neither

    def serve(inputs):
        return layer(inputs, training=False)

    serve.__name__ = "__call__"
    # the dtype its first call was given (an inverted lookup takes ints, not its strings)
    dtype = getattr(layer, "_build_input_dtype", None) or getattr(layer, "dtype", None)
    spec = TensorSpec([None, *shape[1:]], dtype or "float32")
    return tt_function(serve, input_signature=[spec])


def _required_inputs(call):
    """How many positional parameters without a default `call` (a method) takes."""
    try:
        parameters = list(inspect.signature(call).parameters.values())[1:]
    except (TypeError, ValueError):
        return 1
    return sum(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        for p in parameters
    )


def _parameters(python_function, bound, tensor_default):
    """[{"name", "kind", "default"}] of the function's parameters after the `bound` first (a
    method's instance), a default kept where it is a plain value, or a tensor with a value
    (kept by `tensor_default(tensor)`); None where a call of the loaded function cannot be
    bound to them (no Python signature, *args or **kwargs)."""
    if python_function is None:
        return None
    try:
        parameters = list(inspect.signature(python_function).parameters.values())[bound:]
    except (TypeError, ValueError):
        return None
    described = []
    for parameter in parameters:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            return None
        default = parameter.default
        if default is parameter.empty:
            kept = None
        elif isinstance(default, Tensor) and default._value is not None:
            kept = tensor_default(default)
        else:
            kept = {"value": default} if _is_plain(default) else None
        described.append({"name": parameter.name, "kind": parameter.kind.name, "default": kept})
    return described


def _arguments(concrete, python_function, parameters, bound):
    """{parameter name: {"tensor": k} (the k-th tensor argument) or {"value": v}} of the call
    the concrete function was traced for; None where a parameter holds anything else."""
    if parameters is None:
        return None
    tensors = [leaf for leaf in nest.flatten(concrete._arguments) if isinstance(leaf, TensorSpec)]
    given = call_parameters(python_function, concrete._arguments, concrete._named)[bound:]
    arguments = {}
    for name, _, value in given:
        if isinstance(value, TensorSpec):
            position = next((k for k, t in enumerate(tensors) if t is value), None)
            if position is None:
                return None
            arguments[name] = {"tensor": position}
        elif _is_plain(value):
            arguments[name] = {"value": value}
        else:
            return None
    return arguments


def _is_plain(value):
    return value is None or type(value) in (bool, int, float, str)


def _concrete_functions(fn):
    """The concrete functions of a tt.function to save: those traced so far, after tracing
    its input_signature's (at each of UNKNOWN_RANKS where its rank is unknown). `fn` is a
    Function, a method bound to its instance, or a concrete function."""
    if isinstance(fn, Function) or isinstance(getattr(fn, "func", None), Function):
        signature = fn._input_signature
        if signature is not None:
            if any(is_unknown_rank(spec.shape) for spec in signature):
                for rank in UNKNOWN_RANKS:
                    fn.get_concrete_function(*[_at_rank(spec, rank) for spec in signature])
            else:
                fn.get_concrete_function()
        return list(dict.fromkeys(fn._concrete.values()))
    return [fn]


def _at_rank(spec, rank):
    return TensorSpec([None] * rank, spec.dtype, spec.name) if is_unknown_rank(spec.shape) else spec


def _spec(node):
    return [[d if isinstance(d, int) else None for d in node.shape], node.dtype.name]


def _plain(leaf):
    if leaf is None or isinstance(leaf, (bool, int, float, str)):
        return {"value": leaf}
    raise TypeError(f"a function returns {type(leaf).__name__}, which cannot be saved")


def _structure(skeleton):
    """The JSON of a result's structure whose leaves are their positions."""
    if isinstance(skeleton, int):
        return skeleton
    if isinstance(skeleton, dict):
        if not all(isinstance(key, str) for key in skeleton):
            raise TypeError("a function returns a dict whose keys are not all strings")
        return {"dict": [[key, _structure(skeleton[key])] for key in sorted(skeleton)]}
    if isinstance(skeleton, (list, tuple)):
        kind = "tuple" if isinstance(skeleton, tuple) else "list"
        return {kind: [_structure(item) for item in skeleton]}
    raise TypeError(f"a function returns a {type(skeleton).__name__}, which cannot be saved")


def _forward_only(graph):
    """`graph` with each custom gradient's results replaced by what it passes through, in
    held graphs too (SaveOptions(experimental_custom_gradients=False))."""

    def rewrite(node):
        if node.op == "get" and node.inputs[0].op == "custom_gradient":
            return node.inputs[0].inputs[node.attrs["index"]]
        held = {
            key: value.with_graph(_forward_only(value.graph))
            for key, value in node.attrs.items()
            if isinstance(value, GraphAttribute)
        }
        if not held:
            return node
        return type(node)(
            node.op, node.inputs, {**node.attrs, **held}, node.shape, node.dtype, node.location
        )

    return rebuild(graph, rewrite)
