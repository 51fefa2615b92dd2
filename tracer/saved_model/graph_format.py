"""Traced graphs as JSON and arrays, and back, checked: the programs of a SavedModel.

    {"inputs": [0, 1], "outputs": [3],
     "nodes": [{"op": "input", "in": [], "attrs": {"name": "x"}, "shape": [3], "dtype": "float32"},
               ...,
               {"op": "mul", "in": [0, 2], "attrs": {}, "shape": [3], "dtype": "float32",
                "at": ["model.py", 12]}]}

A node names its inputs by their positions among the graph's nodes, which come in
topological order. Attribute values are JSON's own (None, bool, int, float, str; tuples as
lists) or tagged objects: `{"t": "dtype", "v": "float32"}`, a dimension known only when the
function runs (`"dim"`: its polynomial), `"slice"`, `"scalar"` (a numpy scalar),
`"literal"` (a constant's array, stored beside the JSON under `"key"`, or its strings
inline), `"graph"` (a held graph: a loop's body, a custom gradient's), `"custom"` (the
record of a custom gradient, which a loaded graph keeps by name only: its gradient is the
held graph), `"bytes"` (a string op's pattern, in hex) and `"tokens"` (a lookup's
vocabulary: its tokens, ints or hex bytes, first index, default and mask). A value of any
other kind cannot be saved, and `encode` says which op holds it.

Decoding trusts nothing: every value has the kind its place needs, every input comes
before its node, every op is one tracer has (those that call back into Python are refused),
and each node's shape and dtype are worked out again by its op's own rule from its inputs
and attributes, and must be the ones stored. Anything else is a `SavedModelError`.
"""

import functools
import inspect
import numbers

import numpy as np

from runtime.kernels import KERNELS
from tracer import dtypes
from tracer.ir import GraphAttribute, Node, Subgraph, TupleType, format_location
from tracer.ir.dims import Dim
from tracer.ir.graph import Graph
from tracer.ir.literal import Literal
from tracer.ops.registry import OPS
from tracer.ops.token_ops import TokenTable
from tracer.tensor import Tensor

# ops whose attributes hold Python objects a file cannot carry (a function to call back)
NOT_SAVED = {
    "print": "it prints from Python (tt.print)",
    "py_function": "it calls a Python function (tt.py_function)",
    "py_function_result": "it calls a Python function (tt.py_function)",
    "call": "it calls a compiled function of this process",
    "custom_gradient_vjp": "it calls a Python gradient function eagerly",
}
MAX_DEPTH = 32  # graphs held inside graphs
LEAVES = ("input", "variable")  # a graph's inputs: its arguments, and the variables it reads


class SavedModelError(ValueError):
    """A SavedModel that is missing, damaged, or not one of tracer's."""


class _Unsaveable(TypeError):
    pass


def encode(graph, arrays):
    """The JSON form of `graph`; the arrays of its constants go into `arrays` ({key: array}).
    Raises TypeError naming the op and the line of a value no file can hold."""
    positions = {id(node): k for k, node in enumerate(graph.nodes)}
    return {
        "inputs": [positions[id(node)] for node in graph.inputs],
        "outputs": [positions[id(node)] for node in graph.outputs],
        "nodes": [_encode_node(node, positions, arrays) for node in graph.nodes],
    }


def _encode_node(node, positions, arrays):
    if node.op in NOT_SAVED:
        raise TypeError(f"{node.op}{_at(node.location)}: {NOT_SAVED[node.op]}")
    try:
        attrs = {key: _encode_value(value, arrays) for key, value in node.attrs.items()}
    except _Unsaveable as error:
        raise TypeError(f"{node.op}{_at(node.location)}: {error}") from None
    encoded = {
        "op": node.op,
        "in": [positions[id(i)] for i in node.inputs],
        "attrs": attrs,
        "shape": [_encode_value(d, arrays) for d in node.shape],
        "dtype": _encode_type(node.dtype),
    }
    location = node.location
    if (
        isinstance(location, tuple)
        and len(location) == 2
        and isinstance(location[0], str)
        and isinstance(location[1], int)
    ):
        encoded["at"] = list(location)
    return encoded


def _encode_type(dtype):
    if isinstance(dtype, TupleType):
        return {"t": "tuple", "v": [[[_encode_dim(d) for d in s], t.name] for s, t in dtype.parts]}
    return dtype.name


def _encode_dim(dim):
    return dim if isinstance(dim, int) else {"t": "dim", "v": [[list(m), c] for m, c in dim.terms]}


def _encode_value(value, arrays):
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int:
        return value
    if type(value) is float:
        return value if np.isfinite(value) else {"t": "float", "v": repr(value)}
    if isinstance(value, tuple):
        return [_encode_value(v, arrays) for v in value]
    if isinstance(value, Dim):
        return _encode_dim(value)
    if isinstance(value, dtypes.DType):
        return {"t": "dtype", "v": value.name}
    if isinstance(value, slice):
        return {
            "t": "slice",
            "v": [_encode_value(v, arrays) for v in (value.start, value.stop, value.step)],
        }
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return {"t": "scalar", "dtype": value.dtype.str, "v": value.item()}
    if isinstance(value, Literal):
        array = value.array
        if array.dtype.kind in "biufc":
            key = f"constants/{len(arrays)}"
            arrays[key] = np.array(array)
            return {"t": "literal", "key": key}
        if array.dtype.kind in "OUS" and all(isinstance(s, (str, bytes)) for s in array.flat):
            strings = [(s.encode() if isinstance(s, str) else s).hex() for s in array.flat]
            return {"t": "literal", "shape": list(array.shape), "bytes": strings}
    if isinstance(value, GraphAttribute):
        kind = "subgraph" if isinstance(value, Subgraph) else "attribute"
        return {
            "t": "graph",
            "kind": kind,
            "name": value.name,
            "graph": encode(value.graph, arrays),
        }
    if type(value).__name__ == "CustomGradient":
        return {"t": "custom", "name": value.name}
    if isinstance(value, bytes):  # a string op's pattern or separator
        return {"t": "bytes", "v": value.hex()}
    if isinstance(value, TokenTable):  # a lookup's vocabulary
        return {
            "t": "tokens",
            "tokens": [_encode_token(t) for t in value.tokens],
            "first": value.first,
            "default": value.default,
            "mask": None if value.mask is None else _encode_token(value.mask),
        }
    raise _Unsaveable(f"an attribute of type {type(value).__name__} cannot be saved")


def _encode_token(token):
    """A vocabulary's token: an int as it is, bytes as {"b": hex}."""
    return token if type(token) is int else {"b": token.hex()}


def _at(location):
    where = format_location(location)
    return f" (at {where})" if where else ""


# --- decoding --------------------------------------------------------------------------


def decode(data, arrays, what, depth=0):
    """The Graph of `data` (from `encode`), its constants read from `arrays`, checked; `what`
    names it in errors."""
    if depth > MAX_DEPTH:
        raise SavedModelError(f"{what}: graphs held more than {MAX_DEPTH} deep")
    data = _expect(data, dict, what)
    nodes_data = _expect(data.get("nodes"), list, f"{what}: nodes")
    nodes = []
    for k, entry in enumerate(nodes_data):
        nodes.append(_decode_node(entry, nodes, arrays, f"{what}: node {k}", depth))
    inputs = [
        _node_at(nodes, i, f"{what}: inputs") for i in _expect(data.get("inputs"), list, what)
    ]
    outputs = [
        _node_at(nodes, i, f"{what}: outputs") for i in _expect(data.get("outputs"), list, what)
    ]
    if [n for n in nodes if n.op in LEAVES] != inputs:
        raise SavedModelError(f"{what}: its inputs are not its input nodes")
    return Graph(inputs, nodes, outputs)


def _decode_node(entry, nodes, arrays, what, depth):
    entry = _expect(entry, dict, what)
    op = _expect(entry.get("op"), str, what)
    what = f"{what} ({op})"
    inputs = [_node_at(nodes, i, what) for i in _expect(entry.get("in"), list, what)]
    attrs_data = _expect(entry.get("attrs"), dict, what)
    attrs = {
        _expect(key, str, what): _decode_value(value, arrays, what, depth)
        for key, value in attrs_data.items()
    }
    shape = tuple(_decode_dim(d, what) for d in _expect(entry.get("shape"), list, what))
    dtype = _decode_type(entry.get("dtype"), what)
    location = _location(entry.get("at"))
    if op in LEAVES:
        if inputs or set(attrs) != {"name"} or not isinstance(attrs["name"], str):
            raise SavedModelError(f"{what}: an input node has a name and no inputs")
        return Node(op, (), attrs, shape, dtype, location)
    if op == "const":
        value = attrs.get("value")
        if inputs or set(attrs) != {"value"} or not _holds(value, shape, dtype):
            raise SavedModelError(f"{what}: a constant whose value is not of its shape and dtype")
        return Node("const", (), attrs, shape, dtype, location)
    if op in NOT_SAVED or op not in OPS:
        raise SavedModelError(f"{what}: not an op a saved graph may hold")
    taken = _attributes_taken(op, len(inputs))
    unknown = [] if taken is None else sorted(set(attrs) - taken)
    if unknown:
        raise SavedModelError(f"{what}: attributes its op does not take: {', '.join(unknown)}")
    try:
        inferred_shape, inferred_dtype = OPS[op].infer(attrs, *[Tensor(None, i) for i in inputs])
    except Exception as error:  # a rule refusing what the file says: the file is at fault
        raise SavedModelError(
            f"{what}: its op refuses its inputs and attributes ({error})"
        ) from None
    if tuple(inferred_shape) != shape or not _same_type(inferred_dtype, dtype):
        raise SavedModelError(f"{what}: its shape or dtype is not the one its op gives")
    return Node(op, tuple(inputs), attrs, shape, dtype, location)


@functools.cache
def _attributes_taken(op, inputs):
    """The attribute names op `op`'s kernel takes after `inputs` values (the interpreter calls
    it with a node's input values, then its attributes as keywords), or None where it takes
    any keyword."""
    parameters = list(inspect.signature(KERNELS[op]).parameters.values())
    if any(p.kind == p.VAR_KEYWORD for p in parameters):
        return None
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind == p.VAR_POSITIONAL for p in parameters)  # every input a value
    values = positional if variadic else positional[:inputs]
    return frozenset(p.name for p in parameters if p not in values and p.kind != p.VAR_POSITIONAL)


def _holds(value, shape, dtype):
    """Whether `value` is a Literal of `shape` and `dtype`."""
    if not isinstance(value, Literal) or isinstance(dtype, TupleType):
        return False
    array = value.array
    if dtype.is_string:
        return array.dtype == object and array.shape == shape
    return array.shape == shape and array.dtype == np.dtype(dtype.as_numpy_dtype)


def _location(data):
    """A node's (file, line), or None where the file gives no such pair (it is only shown)."""
    if isinstance(data, list) and len(data) == 2:
        name, line = data
        if isinstance(name, str) and type(line) is int:
            return (name, line)
    return None


def _pair(data, what):
    if not isinstance(data, list) or len(data) != 2:
        raise SavedModelError(f"{what}: expected a pair, found {type(data).__name__}")
    return data


def _same_type(a, b):
    if isinstance(a, TupleType) or isinstance(b, TupleType):
        return (
            isinstance(a, TupleType)
            and isinstance(b, TupleType)
            and [(tuple(s), t) for s, t in a.parts] == [(tuple(s), t) for s, t in b.parts]
        )
    return a is b


def _decode_type(data, what):
    if isinstance(data, str):
        return _dtype(data, what)
    data = _expect(data, dict, what)
    if data.get("t") != "tuple":
        raise SavedModelError(f"{what}: not a dtype")
    parts = []
    for part in _expect(data.get("v"), list, what):
        shape, name = _pair(part, what)
        dims = tuple(_decode_dim(d, what) for d in _expect(shape, list, what))
        parts.append((dims, _dtype(name, what)))
    return TupleType(parts)


def _dtype(name, what):
    try:
        return dtypes.as_dtype(_expect(name, str, what))
    except (TypeError, ValueError):
        raise SavedModelError(f"{what}: {name!r} is not a dtype") from None


def _decode_dim(data, what):
    if isinstance(data, int) and not isinstance(data, bool):
        if data < 0:
            raise SavedModelError(f"{what}: a negative size")
        return data
    value = _decode_value(data, {}, what, 0)
    if not isinstance(value, Dim):
        raise SavedModelError(f"{what}: not a size")
    return value


def _decode_value(data, arrays, what, depth):
    if data is None or isinstance(data, (bool, str)):
        return data
    if isinstance(data, numbers.Integral):
        return int(data)
    if isinstance(data, float):
        return data
    if isinstance(data, list):
        return tuple(_decode_value(v, arrays, what, depth) for v in data)
    data = _expect(data, dict, what)
    tag = data.get("t")
    if tag == "float" and data.get("v") in ("nan", "inf", "-inf"):
        return float(data["v"])
    if tag == "dtype":
        return _dtype(data.get("v"), what)
    if tag == "dim":
        return _dim(data.get("v"), what)
    if tag == "slice":
        parts = _expect(data.get("v"), list, what)
        if len(parts) != 3 or not all(p is None or type(p) is int for p in parts):
            raise SavedModelError(f"{what}: not a slice")
        return slice(*parts)
    if tag == "scalar":
        return _scalar(data, what)
    if tag == "literal":
        return _literal(data, arrays, what)
    if tag == "graph":
        kind = data.get("kind")
        if kind not in ("subgraph", "attribute"):
            raise SavedModelError(f"{what}: not a held graph")
        name = _expect(data.get("name"), str, what)
        graph = decode(data.get("graph"), arrays, f"{what}: {name}", depth + 1)
        return (Subgraph if kind == "subgraph" else GraphAttribute)(graph, name)
    if tag == "custom":
        from tracer.control.custom import CustomGradient

        name = _expect(data.get("name"), str, what)
        return CustomGradient(None, name, None, (), ())
    if tag == "bytes":
        return _hex_bytes(data.get("v"), what)
    if tag == "tokens":
        tokens = [_token(t, what) for t in _expect(data.get("tokens"), list, what)]
        first, default = data.get("first"), data.get("default")
        if type(first) is not int or type(default) is not int:
            raise SavedModelError(f"{what}: a vocabulary without its first index and default")
        mask = data.get("mask")
        return TokenTable(tokens, first, default, None if mask is None else _token(mask, what))
    raise SavedModelError(f"{what}: an attribute of unknown kind {tag!r}")


def _hex_bytes(text, what):
    try:
        return bytes.fromhex(_expect(text, str, what))
    except ValueError:
        raise SavedModelError(f"{what}: bytes that are not hexadecimal") from None


def _token(entry, what):
    if type(entry) is int:
        return entry
    if isinstance(entry, dict) and set(entry) == {"b"}:
        return _hex_bytes(entry["b"], what)
    raise SavedModelError(f"{what}: a vocabulary token that is neither an int nor bytes")


def _dim(terms, what):
    polynomial = []
    for term in _expect(terms, list, what):
        monomial, coefficient = _pair(term, what)
        if not isinstance(coefficient, int) or isinstance(coefficient, bool) or coefficient == 0:
            raise SavedModelError(f"{what}: not a dimension")
        symbols = [_expect(s, str, what) for s in _expect(monomial, list, what)]
        try:
            product = coefficient
            for name in symbols:
                product = Dim.symbol(name) * product
        except ValueError:
            raise SavedModelError(f"{what}: not a dimension") from None
        polynomial.append(product)
    total = sum(polynomial[1:], polynomial[0]) if polynomial else 0
    return total


def _scalar(data, what):
    try:
        dtype = np.dtype(_expect(data.get("dtype"), str, what))
    except TypeError:
        raise SavedModelError(f"{what}: not a scalar's dtype") from None
    value = data.get("v")
    if dtype.kind not in "biuf" or not isinstance(value, (bool, int, float)):
        raise SavedModelError(f"{what}: not a number")
    return dtype.type(value)


def _literal(data, arrays, what):
    if "key" in data:
        key = _expect(data["key"], str, what)
        if key not in arrays or not key.startswith("constants/"):
            raise SavedModelError(f"{what}: its constant {key!r} is missing")
        return Literal(arrays[key])
    shape = tuple(_expect(data.get("shape"), list, what))
    # each string's bytes in hex; files saved before held UTF-8 text under "strings"
    hexed = "bytes" in data
    strings = _expect(data.get("bytes" if hexed else "strings"), list, what)
    if not all(isinstance(s, str) for s in strings) or not all(
        type(d) is int and d >= 0 for d in shape
    ):
        raise SavedModelError(f"{what}: not a constant of strings")
    if int(np.prod(shape, dtype=np.int64)) != len(strings):
        raise SavedModelError(f"{what}: a constant of strings of the wrong size")
    try:
        values = [bytes.fromhex(s) if hexed else s.encode() for s in strings]
    except ValueError:
        raise SavedModelError(f"{what}: a string constant that is not hexadecimal bytes") from None
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return Literal(array.reshape(shape))


def _node_at(nodes, position, what):
    if type(position) is not int or not 0 <= position < len(nodes):
        raise SavedModelError(f"{what}: an input that is not an earlier node")
    return nodes[position]


def _expect(value, kind, what):
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise SavedModelError(f"{what}: expected a {kind.__name__}, found {type(value).__name__}")
    return value
