"""`tt.saved_model.load`: the objects of a SavedModel rebuilt from its file, which is checked
whole before anything is made.

The file is read by tracer/train/files.py's reader (a regular file, each member within it,
each array as its index says); the program is JSON of the layout saving.py describes, every
value of the kind its place needs; each graph is checked by graph_format.decode; each
concrete function's inputs and outputs must be the specs and variables it names. Anything
else is a `SavedModelError` naming the file and what is wrong.

A loaded function is a `LoadedFunction`: called (tensors by position, or by their
parameters' names), it picks the saved concrete function whose specs the arguments fit and runs its graph, compiled as a `tt.function` of those specs (on
its first call), reading and assigning the loaded variables. Under a tape, its gradient is
that of the graph's ops, a custom gradient's held gradient graph included.
"""

import json
import os

import numpy as np

from tracer import nest
from tracer.context import outside_trace
from tracer.function import function as tt_function
from tracer.module import held_objects
from tracer.ops.core import execute_graph
from tracer.saved_model import graph_format
from tracer.saved_model.graph_format import SavedModelError
from tracer.saved_model.saving import FILE, FORMAT, PROGRAM, VERSION
from tracer.signature import TensorSpec
from tracer.tensor import Tensor, TensorLike, convert_to_tensor
from tracer.train import files
from tracer.variable import Variable

MAX_STRUCTURE_DEPTH = 64


def contains_saved_model(export_dir):
    """Whether `export_dir` holds a SavedModel of tracer's."""
    return files.exists(os.path.join(os.fspath(export_dir), FILE))


def load(export_dir, tags=None, options=None):
    """The object saved in `export_dir` by `tt.saved_model.save`: its attributes as they were
    saved (variables with their saved values, functions that run the saved graphs,
    sub-objects), and `signatures` ({name: function}) where signatures were saved."""
    path = os.path.join(os.fspath(export_dir), FILE)
    if not files.exists(path):
        raise SavedModelError(
            f"tt.saved_model.load: no SavedModel in {os.fspath(export_dir)!r} (no file "
            f"{path + files.SUFFIX!r})"
        )
    try:
        arrays = files.read(path)
    except files.CheckpointError as error:
        raise SavedModelError(
            f"tt.saved_model.load: {error}".replace("checkpoint", "file")
        ) from None
    program = _program(arrays.pop(PROGRAM, None), path)
    try:
        return _Loader(program, arrays, path).root()
    except RecursionError:
        raise SavedModelError(f"{path}.npz: its program is nested too deep") from None


def _program(raw, path):
    if raw is None or raw.dtype != np.uint8 or raw.ndim != 1:
        raise SavedModelError(f"{path}.npz holds no SavedModel program")
    try:
        program = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise SavedModelError(f"{path}.npz: its program is not JSON ({error})") from None
    if not isinstance(program, dict) or program.get("format") != FORMAT:
        raise SavedModelError(f"{path}.npz is not a SavedModel of tracer's")
    if program.get("version") != VERSION:
        raise SavedModelError(
            f"{path}.npz is a SavedModel of version {program.get('version')!r}; this tracer "
            f"reads version {VERSION}"
        )
    return program


class LoadedObject:
    """An object of a loaded SavedModel: the saved attributes, and `variables` and
    `trainable_variables` (those reachable from it, each once)."""

    def __init__(self):
        self.signatures = {}

    def __call__(self, *args, **kwargs):
        """The saved object's `__call__`, where it had a tt.function one."""
        function = vars(self).get("__call__")
        if function is None:
            raise TypeError("this loaded object was saved without a tt.function __call__")
        return function(*args, **kwargs)

    @property
    def variables(self):
        return list(_reachable(self, lambda leaf: isinstance(leaf, Variable)))

    @property
    def trainable_variables(self):
        return [v for v in self.variables if v.trainable]


def _reachable(obj, predicate):
    seen, pending = {id(obj)}, [obj]
    while pending:
        current = pending.pop(0)
        values = [vars(current)[key] for key in sorted(vars(current)) if key != "signatures"]
        for leaf in held_objects(values):
            if id(leaf) in seen:
                continue
            seen.add(id(leaf))
            if predicate(leaf):
                yield leaf
            if isinstance(leaf, LoadedObject):
                pending.append(leaf)


class LoadedFunction:
    """A saved `tt.function`: called with tensors (or numbers and arrays), it runs the saved
    concrete function their dtypes and shapes fit."""

    def __init__(self, name, concrete, parameters):
        self.__name__ = name
        self._concrete = concrete
        self._parameters = parameters  # [{"name", "kind", "default"}], or None: by tensors

    def __call__(self, *args, **kwargs):
        values = None if self._parameters is None else self._bind(args, kwargs)
        for concrete in self._concrete:
            if values is None:
                arguments = concrete.by_position(args, kwargs)
            else:
                arguments = concrete.matching(values)
            if arguments is not None and concrete.accepts(arguments):
                return concrete(arguments)
        arguments = nest.flatten([list(args), kwargs])
        saved = "; ".join(concrete.describe() for concrete in self._concrete) or "none"
        given = ", ".join(_describe(a) for a in arguments)
        raise TypeError(
            f"{self.__name__} (loaded) was saved for the arguments ({saved}); it was called "
            f"with ({given})"
        )

    def _bind(self, args, kwargs):
        """{parameter name: value} of a call, as Python binds it (saved defaults filled in)."""
        names = [p["name"] for p in self._parameters]
        positional = [p["name"] for p in self._parameters if p["kind"] in _POSITIONAL]
        if len(args) > len(positional):
            raise TypeError(
                f"{self.__name__} (loaded) takes {len(positional)} positional arguments, "
                f"{len(args)} were given"
            )
        values = dict(zip(positional, args))
        for key, value in kwargs.items():
            if key not in names or key in values:
                raise TypeError(f"{self.__name__} (loaded) got an unexpected argument {key!r}")
            values[key] = value
        for parameter in self._parameters:
            if parameter["name"] not in values:
                if parameter["default"] is None:
                    raise TypeError(
                        f"{self.__name__} (loaded) is missing the argument {parameter['name']!r}"
                    )
                values[parameter["name"]] = parameter["default"]["value"]
        return values

    def __repr__(self):
        return f"<LoadedFunction {self.__name__}>"


_POSITIONAL = ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD")
_KINDS = (*_POSITIONAL, "KEYWORD_ONLY")


class LoadedSignature:
    """A saved signature: called with its arguments by name (or position), it returns a
    dict of its results, TensorFlow's `output_0`, `output_1`... where they had no names."""

    def __init__(self, function):
        self._function = function

    def __call__(self, *args, **kwargs):
        result = self._function(*args, **kwargs)
        if isinstance(result, dict):
            return result
        flat = result if isinstance(result, (list, tuple)) else [result]
        return {f"output_{k}": value for k, value in enumerate(flat)}


def _attribute_name(name):
    """Whether a loaded object may take `name` from a file: an identifier that is neither
    Python's (`__class__`; `__call__` is a saved function's) nor the object's own."""
    if not isinstance(name, str) or not name.isidentifier():
        return False
    return name == "__call__" or not (name.startswith("__") or hasattr(LoadedObject, name))


class _Loader:
    def __init__(self, program, arrays, path):
        self._arrays = arrays
        self._path = path
        self._variables = [
            self._variable(entry, k) for k, entry in enumerate(self._list(program, "variables"))
        ]
        self._functions = [
            self._function(entry, k) for k, entry in enumerate(self._list(program, "functions"))
        ]
        self._objects = [LoadedObject() for _ in self._list(program, "objects")]
        if not self._objects:
            raise SavedModelError(f"{path}.npz: no root object")
        for obj, entry in zip(self._objects, program["objects"]):
            attributes = self._expect(entry, dict, "an object").get("attributes")
            for name, reference in self._expect(attributes, dict, "an object").items():
                if not _attribute_name(name):
                    raise SavedModelError(f"{path}.npz: {name!r} cannot name an attribute")
                setattr(obj, name, self._resolve(reference, 0))
        signatures = self._expect(program.get("signatures", {}), dict, "the signatures")
        for name, index in signatures.items():
            function = self._at(self._functions, index, "a signature's function")
            self._objects[0].signatures[str(name)] = LoadedSignature(function)

    def root(self):
        return self._objects[0]

    def _list(self, program, key):
        return self._expect(program.get(key), list, key)

    def _expect(self, value, kind, what):
        if not isinstance(value, kind):
            raise SavedModelError(f"{self._path}.npz: {what} is not a {kind.__name__}")
        return value

    def _at(self, table, index, what):
        if type(index) is not int or not 0 <= index < len(table):
            raise SavedModelError(f"{self._path}.npz: {what} refers to nothing saved")
        return table[index]

    def _variable(self, entry, k):
        what = f"variable {k}"
        entry = self._expect(entry, dict, what)
        key, name = entry.get("key"), entry.get("name")
        if not isinstance(name, str) or not isinstance(entry.get("trainable"), bool):
            raise SavedModelError(f"{self._path}.npz: {what} has no name or trainable flag")
        value = self._arrays.get(key) if isinstance(key, str) else None
        if value is None or not key.startswith("variables/"):
            raise SavedModelError(f"{self._path}.npz: the value of {what} is missing")
        dtype = graph_format._dtype(entry.get("dtype"), f"{self._path}.npz: {what}")
        if np.dtype(dtype.as_numpy_dtype) != value.dtype:
            raise SavedModelError(f"{self._path}.npz: the value of {what} is not {dtype.name}")
        with outside_trace():
            variable = Variable(value, trainable=entry["trainable"], dtype=dtype)
        variable.name = name
        return variable

    def _function(self, entry, k):
        entry = self._expect(entry, dict, f"function {k}")
        name = entry.get("name")
        if not isinstance(name, str):
            raise SavedModelError(f"{self._path}.npz: function {k} has no name")
        parameters = entry.get("parameters")
        if parameters is not None:
            parameters = [
                self._with_default(_parameter(p, f"{self._path}.npz: {name}")) for p in parameters
            ]
        concrete = [
            self._concrete(c, f"{self._path}.npz: {name}, signature {j}", parameters)
            for j, c in enumerate(self._expect(entry.get("concrete"), list, name))
        ]
        return LoadedFunction(name, concrete, parameters)

    def _with_default(self, parameter):
        """`parameter` with a default saved as an array ({"array": key}) read as a tensor."""
        default = parameter["default"]
        if default is None or "array" not in default:
            return parameter
        value = self._arrays.get(default["array"])
        if value is None or not default["array"].startswith("defaults/"):
            raise SavedModelError(
                f"{self._path}.npz: the default of {parameter['name']} is missing"
            )
        graph_format._dtype(value.dtype.name, f"{self._path}.npz: {parameter['name']}")
        return {**parameter, "default": {"value": Tensor(value)}}

    def _concrete(self, entry, what, parameters):
        entry = self._expect(entry, dict, what)
        graph = graph_format.decode(entry.get("graph"), self._arrays, what)
        specs = [_spec(s, what) for s in self._expect(entry.get("specs"), list, what)]
        variables = [
            self._at(self._variables, k, what)
            for k in self._expect(entry.get("variables"), list, what)
        ]
        assigned = [
            self._at(self._variables, k, what)
            for k in self._expect(entry.get("assigned"), list, what)
        ]
        leaves = [_leaf(leaf, what) for leaf in self._expect(entry.get("leaves"), list, what)]
        structure = _structure(entry.get("structure"), len(leaves), what, 0)
        names = entry.get("names") or [f"input_{k}" for k in range(len(specs))]
        arguments = None
        if parameters is not None:
            arguments = _arguments(entry.get("arguments"), parameters, len(specs), what)
        concrete = LoadedConcrete(
            graph, specs, variables, assigned, leaves, structure, names, arguments
        )
        concrete.check(what)
        return concrete

    def _resolve(self, reference, depth):
        if depth > MAX_STRUCTURE_DEPTH:
            raise SavedModelError(f"{self._path}.npz: attributes nested too deep")
        reference = self._expect(reference, dict, "an attribute")
        if len(reference) != 1:
            raise SavedModelError(f"{self._path}.npz: an attribute is not a reference")
        ((kind, value),) = reference.items()
        if kind == "object":
            return self._at(self._objects, value, "an attribute")
        if kind == "variable":
            return self._at(self._variables, value, "an attribute")
        if kind == "function":
            return self._at(self._functions, value, "an attribute")
        if kind in ("list", "tuple"):
            items = [
                self._resolve(v, depth + 1)
                for v in self._expect(value, list, "a list")
                if v is not None
            ]
            return items if kind == "list" else tuple(items)
        if kind == "dict":
            pairs = self._expect(value, list, "a dict")
            result = {}
            for pair in pairs:
                key, item = graph_format._pair(pair, f"{self._path}.npz: a dict")
                if item is not None:
                    result[self._expect(key, str, "a key")] = self._resolve(item, depth + 1)
            return result
        raise SavedModelError(f"{self._path}.npz: an attribute of unknown kind {kind!r}")


class LoadedConcrete:
    """One saved concrete function: its graph and what its inputs and outputs are."""

    def __init__(self, graph, specs, variables, assigned, leaves, structure, names, arguments):
        self.graph = graph
        self.specs = specs
        self.arguments = arguments  # {parameter name: {"tensor": k} or {"value": v}}, or None
        self.variables = variables
        self.assigned = assigned
        self.leaves = leaves
        self.structure = structure
        self.names = names
        self.n_tensors = sum(1 for leaf in leaves if "tensor" in leaf)
        self._compiled = None

    def check(self, what):
        """A SavedModelError where the graph's inputs and outputs are not what the entry says."""
        inputs, outputs = self.graph.inputs, self.graph.outputs
        expected = [(tuple(s.shape), s.dtype) for s in self.specs]
        expected += [(tuple(v.shape), v.dtype) for v in self.variables]
        given = [
            (tuple(None if not isinstance(d, int) else d for d in n.shape), n.dtype) for n in inputs
        ]
        if given != expected:
            raise SavedModelError(f"{what}: its graph's inputs are not its arguments and variables")
        if len(outputs) != self.n_tensors + len(self.assigned):
            raise SavedModelError(f"{what}: its graph's outputs are not its results")
        for variable, output in zip(self.assigned, outputs[self.n_tensors :]):
            if output.dtype is not variable.dtype or tuple(output.shape) != tuple(variable.shape):
                raise SavedModelError(f"{what}: it assigns a variable a value of another type")
        if sorted(leaf["tensor"] for leaf in self.leaves if "tensor" in leaf) != list(
            range(self.n_tensors)
        ):
            raise SavedModelError(f"{what}: its results are not its graph's outputs")
        if len(self.names) != len(self.specs) or not all(isinstance(n, str) for n in self.names):
            raise SavedModelError(f"{what}: its arguments' names are not one per argument")

    def by_position(self, args, kwargs):
        """The tensor arguments in order, those in `kwargs` by their names; None where the
        names are not this function's."""
        arguments = nest.flatten(list(args))
        if not kwargs:
            return arguments
        rest = self.names[len(arguments) :]
        if sorted(kwargs) != sorted(rest):
            return None
        return arguments + [kwargs[name] for name in rest]

    def matching(self, values):
        """The tensor arguments of a call bound to its parameters (`values`), in order; None
        where a Python value differs from the one this function was traced with."""
        tensors = [None] * len(self.specs)
        for name, saved in self.arguments.items():
            value = values[name]
            if "tensor" in saved:
                tensors[saved["tensor"]] = value
            elif isinstance(value, TensorLike) or (type(value), value) != (
                type(saved["value"]),
                saved["value"],
            ):
                return None
        return tensors

    def accepts(self, arguments):
        if len(arguments) != len(self.specs):
            return False
        for value, spec in zip(arguments, self.specs):
            dtype = value.dtype if isinstance(value, TensorLike) else spec.dtype
            if not spec.admits(np.shape(value), dtype):
                return False
        return True

    def __call__(self, arguments):
        if self._compiled is None:
            self._compiled = tt_function(self._run, input_signature=self.specs, autograph=False)
        tensors = [
            a if isinstance(a, TensorLike) else convert_to_tensor(a, s.dtype)
            for a, s in zip(arguments, self.specs)
        ]
        return self._compiled(*tensors)

    def _run(self, *tensors):
        values = execute_graph(self.graph, [*tensors, *(v.value() for v in self.variables)])
        for variable, value in zip(self.assigned, values[self.n_tensors :]):
            variable.assign(value)
        leaves = [
            values[leaf["tensor"]] if "tensor" in leaf else leaf["value"] for leaf in self.leaves
        ]
        return _packed(self.structure, leaves)

    def describe(self):
        if self.arguments is None:
            return ", ".join(f"{name}: {spec!r}" for name, spec in zip(self.names, self.specs))
        return ", ".join(
            f"{name}: {self.specs[saved['tensor']]!r}"
            if "tensor" in saved
            else f"{name}={saved['value']!r}"
            for name, saved in self.arguments.items()
        )


def _parameter(data, what):
    """A saved parameter, checked: {"name", "kind", "default": None or {"value": v}}."""
    if not isinstance(data, dict) or set(data) != {"name", "kind", "default"}:
        raise SavedModelError(f"{what}: a parameter is not a name, kind and default")
    name, kind, default = data["name"], data["kind"], data["default"]
    if not isinstance(name, str) or not name.isidentifier() or kind not in _KINDS:
        raise SavedModelError(f"{what}: {name!r} ({kind!r}) is not a parameter")
    if default is not None and not _is_array_key(default) and "value" not in _leaf(default, what):
        raise SavedModelError(f"{what}: the default of {name} is not a plain value")
    return data


def _arguments(data, parameters, n_tensors, what):
    """A concrete function's {parameter name: {"tensor": k} or {"value": v}}, checked: one
    entry per parameter, each tensor once."""
    if not isinstance(data, dict) or sorted(data) != sorted(p["name"] for p in parameters):
        raise SavedModelError(f"{what}: its arguments are not its function's parameters")
    positions = []
    for saved in data.values():
        _leaf(saved, what)
        if "tensor" in saved:
            positions.append(saved["tensor"])
    if sorted(positions) != list(range(n_tensors)):
        raise SavedModelError(f"{what}: its arguments are not its tensors, each once")
    return data


def _spec(data, what):
    shape, name = graph_format._pair(data, what)
    if not isinstance(shape, list) or not all(
        d is None or (type(d) is int and d >= 0) for d in shape
    ):
        raise SavedModelError(f"{what}: an argument's shape is not a shape")
    return TensorSpec(shape, graph_format._dtype(name, what))


def _is_array_key(data):
    """Whether `data` is {"array": key}: a tensor default, held among the arrays."""
    return isinstance(data, dict) and set(data) == {"array"} and isinstance(data["array"], str)


def _leaf(data, what):
    if isinstance(data, dict) and len(data) == 1:
        ((kind, value),) = data.items()
        if kind == "tensor" and type(value) is int:
            return data
        if kind == "value" and (value is None or isinstance(value, (bool, int, float, str))):
            return data
    raise SavedModelError(f"{what}: a result is neither a tensor nor a plain value")


def _structure(data, n_leaves, what, depth):
    if depth > MAX_STRUCTURE_DEPTH:
        raise SavedModelError(f"{what}: its result is nested too deep")
    if type(data) is int:
        if not 0 <= data < n_leaves:
            raise SavedModelError(f"{what}: its result names a value it does not have")
        return data
    if isinstance(data, dict) and len(data) == 1:
        ((kind, items),) = data.items()
        if kind in ("list", "tuple") and isinstance(items, list):
            made = [_structure(item, n_leaves, what, depth + 1) for item in items]
            return made if kind == "list" else tuple(made)
        if kind == "dict" and isinstance(items, list):
            pairs = [graph_format._pair(pair, what) for pair in items]
            if not all(isinstance(key, str) for key, _ in pairs):
                raise SavedModelError(f"{what}: its result is a dict with keys not strings")
            return {key: _structure(item, n_leaves, what, depth + 1) for key, item in pairs}
    raise SavedModelError(f"{what}: its result's structure is not one tracer saves")


def _packed(structure, leaves):
    if type(structure) is int:
        return leaves[structure]
    if isinstance(structure, dict):
        return {key: _packed(item, leaves) for key, item in structure.items()}
    packed = [_packed(item, leaves) for item in structure]
    return packed if isinstance(structure, list) else tuple(packed)


def _describe(value):
    if isinstance(value, TensorLike):
        return f"{value.dtype.name}{list(value.shape)}"
    return f"{type(value).__name__}{list(np.shape(value))}"
