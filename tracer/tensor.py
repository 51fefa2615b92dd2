"""Tensors: immutable values that are either eager (hold a numpy array) or symbolic.

An eager tensor holds its value; a symbolic one (made while building a graph) holds only
its IR node. Both go through the same op functions. An eager tensor gets a node only when a
tape records it or watches it, so plain numpy-style use costs nothing extra.
"""

import os
import weakref

import numpy as np

from runtime.kernels import element_array
from tracer import dtypes, nest
from tracer.context import graph_nodes, state
from tracer.dtypes import DType, as_dtype
from tracer.errors import OperatorNotAllowedInGraphError, RunsAsPython
from tracer.ir import topological_closure
from tracer.tensor_shape import TensorShape, is_unknown_rank


class SymbolicNumpyError(AttributeError, TypeError):
    """`.numpy()` on a symbolic tensor: TensorFlow's AttributeError (its symbolic tensors
    have no `numpy`), and the TypeError tracer raised before."""


class _EagerOnly:
    """A method that a symbolic tensor does not have (`numpy`): looked up on one, it raises
    SymbolicNumpyError, an AttributeError, as TensorFlow's graph tensors have no `numpy`, so
    that `hasattr(x, "numpy")` tells an eager tensor from a traced one, as programs ask."""

    def __init__(self, method):
        self.method = method
        self.__doc__ = method.__doc__

    def __get__(self, tensor, owner=None):
        if tensor is None:
            return self.method
        if type(tensor) is Tensor and tensor._value is None:
            raise SymbolicNumpyError(tensor._symbolic_message())
        return self.method.__get__(tensor, owner)


class SymbolicValueError(TypeError):
    """Python asked a symbolic tensor for its value while a function was traced (a slice
    bound, an int, a size): the TypeError tracer raises, a class of its own so that a
    converted loop can tell it from others (tracer/autograph/operators.py)."""


class SizeKnownWhenRun(RunsAsPython, SymbolicValueError):
    """A size (a shape to reshape to, a slice's length) computed when a traced function
    runs, which TensorFlow's graph takes and tracer's compiled code cannot: RunsAsPython (the
    function runs as Python at each call), and a SymbolicValueError, so that a converted
    loop over rows known while tracing unrolls instead (tracer/autograph/operators.py)."""


class TensorLike:
    """Operators and numpy interop shared by `Tensor` and `Variable`; subclasses give `_read()`."""

    __slots__ = ()
    __array_priority__ = 100  # numpy defers `ndarray * tensor` to our reflected operators

    @property
    def ndim(self):
        return len(self.shape)

    def get_shape(self):
        """The shape as a `tt.TensorShape` (TensorFlow's; unknown sizes are None)."""
        return TensorShape(d if isinstance(d, int) else None for d in self.shape)

    def set_shape(self, shape):
        """TensorFlow's check that the tensor has `shape` (None for an unknown rank or size):
        a ValueError where a size differs. tracer knows every size a traced function can
        know, so there is nothing to refine: a size known only when the function runs stays
        so."""
        if is_unknown_rank(shape):
            return
        given = [None if d is None else int(d) for d in shape]
        known = self.get_shape()
        if len(given) != len(known) or any(
            g is not None and k is not None and g != k for g, k in zip(given, known)
        ):
            supplied = TensorShape(given)
            raise ValueError(
                f"Tensor's shape {known} is not compatible with supplied shape {supplied}."
            )

    @property
    def device(self):
        """Where the value is, in TensorFlow's words: tracer computes on the CPU only
        (`tt.device` blocks run there too)."""
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    def ref(self):
        """A hashable reference to this tensor or variable, by identity (dict keys, set
        members); `.deref()` gives it back. As TensorFlow's `Tensor.ref()`."""
        return Reference(self)

    @_EagerOnly
    def numpy(self):
        tensor = self._read()
        if tensor._value is None:
            # NOTE: TensorFlow's symbolic tensors have no `numpy` (AttributeError); tracer
            # raised TypeError before, so the error is both.
            raise SymbolicNumpyError(tensor._symbolic_message())
        value = tensor._value
        return value[()] if value.ndim == 0 else value

    def __array__(self, dtype=None, copy=None):
        tensor = self._read()
        if state.tapes and tensor._node is not None:
            _note_numpy_exit(tensor._node)
        value = np.asarray(tensor._concrete_value())
        return value if dtype is None else value.astype(dtype, copy=False)

    def __format__(self, format_spec):
        """`f"{loss:.4f}"` and `f"{size}"`: the value formatted as numpy formats it, as
        TensorFlow's eager tensors are (a format spec on a tensor that is not a scalar is
        numpy's TypeError); a symbolic tensor with an empty spec is `str`."""
        tensor = self._read()
        if tensor._value is None:
            if not format_spec:
                return str(self)
            raise TypeError(
                f"cannot format a symbolic tensor with {format_spec!r} inside a traced function: "
                "its value is known only when the function runs; use tt.print, or return it"
            )
        return format(tensor._value, format_spec)

    def __float__(self):
        return float(self._scalar())

    def __int__(self):
        return int(self._scalar())

    def __complex__(self):
        """`complex(t)` of a tensor of one element, as TensorFlow's (a complex one too)."""
        return complex(self._scalar())

    def __index__(self):
        if not self.dtype.is_integer:
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype.name}")
        return int(self._scalar())

    def __bool__(self):
        tensor = self._read()
        if tensor._value is None and state.trace is not None:
            raise OperatorNotAllowedInGraphError(
                f"using a symbolic tensor as a Python bool is not allowed while tt.function "
                f"traces ({tensor!r}): its value is known only when the function runs. "
                "Autograph converts `if`, `while` and `and`/`or` on tensors in the function's "
                "own code; elsewhere (code it does not convert) use tt.cond or tt.while_loop"
            )
        return bool(tensor._concrete_value())

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a scalar tensor (shape ()) is undefined")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a scalar tensor (shape ()) is undefined")
        return (self[i] for i in range(self.shape[0]))

    def _scalar(self):
        value = self._read()._concrete_value()
        if value.size != 1:
            raise TypeError(
                f"only tensors with one element convert to a Python scalar, not shape {self.shape}"
            )
        return value.reshape(()).item() if isinstance(value, np.ndarray) else value

    def __hash__(self):
        """By identity for a tensor of a TensorFlow 1 graph, or inside one (tt.compat.v1:
        `feed_dict`'s keys are placeholders); elsewhere `==` is elementwise, as in
        TensorFlow 2, so tensors cannot be dict keys."""
        node = getattr(self, "_node", None)
        if not state.graphs and (node is None or node not in graph_nodes):
            raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")
        return id(self)


class Reference:
    """What `TensorLike.ref()` returns: equal and hashed by the identity of what it refers to."""

    __slots__ = ("_referred",)

    def __init__(self, referred):
        self._referred = referred

    def deref(self):
        return self._referred

    def __eq__(self, other):
        return isinstance(other, Reference) and other._referred is self._referred

    def __hash__(self):
        return id(self._referred)

    def __repr__(self):
        return f"<Reference wrapping {self._referred!r}>"


class Tensor(TensorLike):
    """An immutable tensor. `str` and `repr` are TensorFlow's, eager and symbolic (where a
    traced function prints `Tensor("mul:0", shape=(None,), dtype=float32)`).

    >>> tt.constant([1.0, 2.0]) * 2
    <tracer.Tensor: shape=(2,), dtype=float32, numpy=array([2., 4.], dtype=float32)>
    """

    __slots__ = ("_value", "_node", "_origin", "_cut", "_keras_mask", "__weakref__")

    def __init__(self, value, node=None):
        self._value = value
        self._node = node
        self._origin = (
            None  # (variable name, location) when computed from a Variable outside a tape
        )
        self._cut = (
            None  # (op, dtype, tracked input nodes, location) where a gradient path to it stopped
        )
        self._keras_mask = None  # a Keras layer's output's steps to skip (keras/layers/layer.py)

    def _read(self):
        return self

    def _concrete_value(self):
        if self._value is None:
            raise SymbolicValueError(self._symbolic_message())
        return self._value

    def _symbolic_message(self):
        if state.trace is not None or state.building:
            return (
                f"{self!r} is symbolic: its value is known only when the traced function "
                "runs, and Python asks for it now (as an int, a float, a bool, a slice bound "
                "or a numpy array). Compute with tensor ops instead: tt.slice or "
                "tt.image.crop_to_bounding_box with sizes known when tracing take begins and "
                "offsets computed while it runs, tt.cond and tt.where choose."
            )
        return (
            f"{self!r} is out of scope and cannot be used here: it is symbolic (it belongs "
            "to a graph being built, a tt.function's trace) and has no value. Use the "
            "function's return values to get values out of it."
        )

    @property
    def shape(self):
        """A TensorShape, as TensorFlow's (a tuple, so `x.shape == (2, 3)`); while a
        function is traced, the graph's shape, whose unknown sizes are symbols."""
        value = self._value
        return TensorShape.of_array(self._node.shape if value is None else value.shape)

    @property
    def ndim(self):
        """The rank, without making the TensorShape `.shape` gives (Keras's losses ask for it
        ten times a call)."""
        value = self._value
        return len(self._node.shape) if value is None else value.ndim

    def _dims(self):
        """The shape as a plain tuple: what rules compare shapes with, where `.shape` would
        make a TensorShape for each comparison."""
        value = self._value
        return self._node.shape if value is None else value.shape

    @property
    def name(self):
        """A symbolic tensor's name in its traced function (`"Mean:0"`), as TensorFlow's;
        an eager tensor has none (AttributeError, as TensorFlow's EagerTensor)."""
        if self._value is not None:
            raise AttributeError("Tensor.name is undefined when eager execution is enabled.")
        return graph_name(self._node)

    @property
    def dtype(self):
        if self._value is None:
            return self._node.dtype
        return dtypes.BY_NUMPY.get(self._value.dtype) or dtypes.as_dtype(self._value.dtype)

    def __str__(self):
        if self._value is None:
            name, shape = graph_name(self._node), self._shown_shape()
            return f'Tensor("{name}", shape={shape}, dtype={self.dtype.name})'
        text = str(self._value)
        if "\n" in text:
            text = "\n" + text
        return f"tracer.Tensor({text}, shape={self.shape}, dtype={self.dtype.name})"

    def __repr__(self):
        if self._value is None:
            return (
                f"<tracer.Tensor '{graph_name(self._node)}' shape={self._shown_shape()} "
                f"dtype={self.dtype.name}>"
            )
        text = numpy_text(self._value)
        return f"<tracer.Tensor: shape={self.shape}, dtype={self.dtype.name}, numpy={text}>"

    def _shown_shape(self):
        """The shape as TensorFlow prints it: None for a size known only at run time."""
        return tuple(d if isinstance(d, int) else None for d in self.shape)


nest.leaf_type(Tensor)  # a tape's sources and targets flatten without a call each


# TensorFlow's node name for the value of each tracer op whose TensorFlow op is named
# otherwise (`Tensor("Sum:0", ...)`); the others print under tracer's name. Composite ops
# (reduce_mean, softmax, square) print as TensorFlow's op (`COMPOSITE_NODES`).
_TF_NODE_NAMES = {
    "abs": "Abs",
    "argmax": "ArgMax",
    "argmin": "ArgMin",
    "broadcast_to": "BroadcastTo",
    "cast": "Cast",
    "const": "Const",
    "conv2d": "Conv2D",
    "conv2d_backprop_filter": "Conv2DBackpropFilter",
    "conv2d_backprop_input": "Conv2DBackpropInput",
    "cos": "Cos",
    "cumprod": "Cumprod",
    "cumsum": "Cumsum",
    "depthwise_conv2d": "DepthwiseConv2dNative",
    "depthwise_conv2d_backprop_filter": "DepthwiseConv2dNativeBackpropFilter",
    "depthwise_conv2d_backprop_input": "DepthwiseConv2dNativeBackpropInput",
    "div": "truediv",
    "equal": "Equal",
    "erf": "Erf",
    "erfc": "Erfc",
    "exp": "Exp",
    "fill": "Fill",
    "gather": "GatherV2",
    "greater": "Greater",
    "greater_equal": "GreaterEqual",
    "identity": "Identity",
    "less": "Less",
    "less_equal": "LessEqual",
    "log": "Log",
    "log1p": "Log1p",
    "logical_and": "LogicalAnd",
    "logical_not": "LogicalNot",
    "logical_or": "LogicalOr",
    "matmul": "MatMul",
    "maximum": "Maximum",
    "minimum": "Minimum",
    "neg": "Neg",
    "not_equal": "NotEqual",
    "pad": "Pad",
    "reduce_max": "Max",
    "reduce_min": "Min",
    "reduce_prod": "Prod",
    "reduce_sum": "Sum",
    "relu": "Relu",
    "reshape": "Reshape",
    "reverse": "ReverseV2",
    "rsqrt": "Rsqrt",
    "select": "SelectV2",
    "sigmoid": "Sigmoid",
    "sign": "Sign",
    "sin": "Sin",
    "slice": "strided_slice",
    "softmax": "Softmax",
    "softplus": "Softplus",
    "softsign": "Softsign",
    "sqrt": "Sqrt",
    "stop_gradient": "StopGradient",
    "tan": "Tan",
    "tanh": "Tanh",
    "tile": "Tile",
    "variable": "ReadVariableOp",
}


# The value of a function that is one op in TensorFlow and several primitives in tracer
# (tt.reduce_mean: a sum and a division) prints as TensorFlow's op (`Mean`), and the
# primitives inside it take no names: node -> (TensorFlow's name, the nodes of the
# function's tensor arguments), recorded while a function is traced (tracer/ops/op_names.py)
COMPOSITE_NODES = weakref.WeakKeyDictionary()


class _NodeNames:
    """The names the nodes of one traced function print under, made unique as TensorFlow's
    graphs make them (`mul`, `mul_1`; `Mul` after `mul` is `Mul_1`: case does not count)."""

    def __init__(self, inputs=()):
        self.names = weakref.WeakKeyDictionary()  # node -> its name
        self.in_use = {}  # lower-cased name -> how many times it was asked for
        for node in inputs:  # as TensorFlow's placeholders, made before any op
            self.names[node] = self._unique(_base_name(node))

    def name(self, node):
        """The node's name, naming first the nodes it is computed from that have none.

        NOTE: TensorFlow names a node when it is made; tracer's nodes carry no name, so they
        are named when first printed, inputs first: the same names where the nodes printed
        and those they read were made in that order (as in `print(x * 2 + 1)`).
        """
        if node not in self.names:
            unnamed = topological_closure(
                [node], expand=lambda n: n not in self.names, inputs=_shown_inputs
            )
            for each in unnamed:
                if each not in self.names:
                    self.names[each] = self._unique(_base_name(each))
        return self.names[node]

    def _unique(self, name):
        """TensorFlow's `Graph.unique_name`: `name`, or `name_<k>` for the first free k."""
        key = name.lower()
        count = self.in_use.get(key, 0)
        self.in_use[key] = count + 1
        if count == 0:
            return name
        while f"{key}_{count}" in self.in_use:
            count += 1
        self.in_use[f"{key}_{count}"] = 1
        return f"{name}_{count}"


def _shown_inputs(node):
    """What a node is named after: a composite op's arguments, past the primitives inside
    it (COMPOSITE_NODES), else its inputs."""
    composite = COMPOSITE_NODES.get(node)
    return node.inputs if composite is None else composite[1]


def _base_name(node):
    """A node's name before it is made unique: an argument's name, TensorFlow's op name."""
    if node.op == "input":
        return node.attrs.get("name", "input")
    composite = COMPOSITE_NODES.get(node)
    if composite is not None:
        return composite[0]
    return _TF_NODE_NAMES.get(node.op, node.op)


# the names in each traced function (a Trace, or a loop body's or a branch's SubTrace)
_NAMES_BY_TRACE = weakref.WeakKeyDictionary()


def graph_name(node):
    """A symbolic tensor's name as TensorFlow prints it: `x:0` for argument x, `mul_1:0` for
    the second `mul` of its function, `while:2` for the first loop variable of a loop,
    `cond/Identity_1:0` for the second result of a branch."""
    index = 0
    if node.op == "get":
        node, index = node.inputs[0], node.attrs["index"]
    name = _names_of(state.trace).name(node)
    if node.op == "cond":  # TensorFlow's branches return their results through Identity ops
        return f"{name}/Identity{f'_{index}' if index else ''}:0"
    if node.op == "while":  # TensorFlow's loop yields its iteration count and bound first
        return f"{name}:{index + 2}"
    return f"{name}:{index}"


def _names_of(trace):
    """The names of the traced function `trace` (None: a tensor that escaped its trace,
    named as if alone in a function)."""
    if trace is None:
        return _NodeNames()
    names = _NAMES_BY_TRACE.get(trace)
    if names is None:
        names = _NAMES_BY_TRACE[trace] = _NodeNames(trace.inputs)
    return names


_NUMPY_DIR = os.path.dirname(np.__file__) + os.sep


def _note_numpy_exit(node, via="numpy"):
    """A tracked value converted to numpy (`via` numpy, or "tt.constant"): gradients cannot
    follow it (tape.explain says where)."""
    from tracer.ir import user_location

    for tape in state.tapes:
        rec = tape._recording_state
        if node in rec.tracked:
            location = user_location(also_skip=(_NUMPY_DIR,))
            rec.events.numpy_exits.append((node, location, via))


def numpy_text(value):
    """A value as a tensor's or variable's repr shows it, as TensorFlow 2.21's: a scalar as
    its Python value's repr (a float32 8.3 as 8.300000190734863, the float it is), bytes as
    they are, an array as numpy's repr, on a line of its own where it takes several."""
    if value.ndim == 0:
        item = value[()]
        text = repr(item if isinstance(item, bytes) or not hasattr(item, "item") else item.item())
    else:
        text = repr(value)
    return "\n" + text if "\n" in text else text


def is_tensor_like(value):
    return isinstance(value, TensorLike)


def holds_tensors(value):
    """Whether the list or tuple `value` holds a tensor or Variable, at any depth."""
    return any(is_tensor_like(v) for v in _leaves(value))


def _python_dtype(array):
    """TensorFlow's defaults for Python values: float32, int32 (int64 when too large), bool, complex128."""
    kind = array.dtype.kind
    if kind == "f":
        return dtypes.float32
    if kind in "iu":
        fits = array.size == 0 or (array.min() >= -(2**31) and array.max() < 2**31)
        return dtypes.int32 if fits else dtypes.int64
    if kind == "b":
        return dtypes.bool
    if kind == "c":
        return dtypes.complex128
    raise TypeError(f"cannot convert {array.dtype} values to a tracer tensor")


def _first_numpy_float(value):
    """The dtype of a list's first element where it is a numpy float or array of floats,
    which TensorFlow's conversion takes for the whole list (`[np.float64(1), 2.0]` is
    float64, `[1.0, np.float64(2)]` float32; numpy integers and complex numbers take the
    Python defaults), else None."""
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind == "f":
        return as_dtype(value.dtype)
    return None


def _from_python(value, dtype):
    """A numpy array for a Python scalar, list or numpy value, with TensorFlow's default dtypes."""
    if isinstance(value, (list, tuple)) and holds_tensors(value):
        value = _materialize(value)
    if isinstance(value, (np.ndarray, np.generic)):
        array = value
        if dtype is dtypes.string or array.dtype.kind in "OUS":
            return _string_array(value, dtype)
        if dtype is None:
            dtype = as_dtype(array.dtype)
    else:
        if dtype is dtypes.string or isinstance(value, (str, bytes)):
            return _string_array(value, dtype)
        try:
            array = np.asarray(value)
        except UnicodeDecodeError:  # str and bytes that are not ASCII, in one list
            return _string_array(value, dtype)
        except ValueError as error:  # numpy's "inhomogeneous shape": TensorFlow's words
            if "inhomogeneous" not in str(error):
                raise
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None
        if array.dtype.kind in "US":
            return _string_array(value, dtype)
        if array.dtype.kind in "OV":  # None, mixed types: numpy would hold objects
            raise TypeError(f"cannot convert {value!r} to a tracer tensor")
        if dtype is None:
            dtype = _first_numpy_float(value) or _python_dtype(array)
    kind = array.dtype.kind
    if (
        kind == "f"
        and dtype.is_integer
        and not isinstance(value, (np.ndarray, np.generic))  # (numpy's: cut, as TF's astype)
        and not np.all(np.isfinite(array) & (array == np.round(array)))
    ):
        raise TypeError(
            f"cannot convert {value!r} to a tensor of dtype {dtype.name} without losing its value"
        )
    if kind == "c" and not dtype.is_complex:
        _refuse_complex(value, dtype)
    target = dtype.as_numpy_dtype
    if kind in "iu" and dtype.is_integer and array.size and not np.can_cast(array.dtype, target):
        limits = np.iinfo(target)
        if array.min() < limits.min or array.max() > limits.max:
            raise OverflowError(f"{value!r} does not fit in a tensor of dtype {dtype.name}")
    return np.array(array, dtype=target)


def _string_array(value, dtype):
    """The object array of a tt.string tensor: every element `bytes`, a `str` encoded as
    UTF-8 (TensorFlow's strings are bytes; `.numpy()` gives them back as bytes)."""
    if dtype is not None and dtype is not dtypes.string:
        raise TypeError(
            f"cannot convert {value!r} to a tensor of dtype {dtype.name}: it holds strings"
        )
    try:
        array = np.array(value, dtype=object)
    except ValueError:  # lists of different lengths
        raise ValueError(
            f"cannot convert {value!r} to a string tensor: its rows differ in length"
        ) from None
    flat = array.reshape(-1)
    for k, item in enumerate(flat):
        if isinstance(item, str):
            flat[k] = item.encode()
        elif isinstance(item, bytes):
            flat[k] = bytes(item)  # a numpy bytes_ as plain bytes
        elif dtype is None:  # TensorFlow's ValueError for a list of strings and numbers
            raise ValueError(
                f"cannot convert {value!r} to a tensor: it mixes strings and other values"
            )
        else:
            raise TypeError(
                f"cannot convert {value!r} to a string tensor: {item!r} is not a string"
            )
    return array


def _refuse_complex(value, dtype):
    """TensorFlow's TypeError for a complex value converted to a real dtype (`x * (1+2j)`
    with a float32 `x`), where numpy would drop the imaginary part with a ComplexWarning."""
    from tracer.ir import format_location, user_location

    where = format_location(user_location())
    raise TypeError(
        f"cannot convert {value!r} to a tensor of dtype {dtype.name}: it is complex, and "
        f"{dtype.name} has no imaginary part; compute in a complex dtype, or tt.cast a "
        "complex tensor to drop its imaginary part" + (f" (at {where})" if where else "")
    )


def _leaves(value):
    for item in value:
        if isinstance(item, (list, tuple)):
            yield from _leaves(item)
        else:
            yield item


def _materialize(value):
    """The values of the tensors in a nested list, for `tt.constant`, which makes a constant of
    them as TensorFlow does (a tape notes where the gradient path ends)."""
    if isinstance(value, (list, tuple)):
        return [_materialize(v) for v in value]
    if not is_tensor_like(value):
        return value
    tensor = value._read()
    if tensor._value is None:
        raise TypeError(
            f"tt.constant cannot hold {tensor!r}: it is symbolic (a value of the function being "
            "traced), and a constant needs a value now; tt.convert_to_tensor or tt.stack packs "
            "it into a tensor, and keeps its gradient"
        )
    if state.tapes and tensor._node is not None:
        _note_numpy_exit(tensor._node, via="tt.constant")
    return tensor._value


def convert_to_tensor(value, dtype=None, name=None, dtype_hint=None, preferred_dtype=None):
    """A Tensor for `value`: tensors pass through, variables are read, Python and numpy values
    become constants (Python floats float32, ints int32, as in TensorFlow). `dtype_hint`
    (TensorFlow 1's `preferred_dtype`) is the dtype a Python or numpy value takes where it
    converts to it, else its own, as TensorFlow's (1 with hint float32 is float32, 1.5 with
    hint int32 float32); a tensor keeps its dtype.

    >>> tt.convert_to_tensor([1, 2]).dtype
    tt.int32
    """
    hint = dtype_hint if dtype_hint is not None else preferred_dtype
    if dtype is None and hint is not None and not is_tensor_like(value):
        try:
            return convert_to_tensor(value, as_dtype(hint))
        except (TypeError, ValueError, OverflowError):
            pass  # (its own dtype, then)
    if dtype is not None:
        dtype = as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {dtype.name} for a tensor of dtype {value.dtype.name}"
            )
        return value
    if is_tensor_like(value):  # a Variable
        tensor = value._read()
        if dtype is not None and tensor.dtype != dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {dtype.name} for a variable of dtype {tensor.dtype.name}"
            )
        return tensor
    densify = getattr(value, "_densify", None)  # IndexedSlices
    if densify is not None:
        return convert_to_tensor(densify(), dtype)
    if isinstance(value, DType) or value is None:
        raise TypeError(f"cannot convert {value!r} to a tracer tensor")
    if isinstance(value, (list, tuple)) and holds_tensors(value):
        return _packing["pack"](value, dtype)
    return Tensor(_from_python(value, dtype))


# The function that packs a nested list holding tensors into one tensor: packing records ops,
# and ops build on this module, so tracer.ops.packing registers it here when it is imported.
_packing = {}


def register_packing(pack):
    _packing["pack"] = pack


def constant(value, dtype=None, shape=None, name=None):
    """A constant tensor; with `shape`, a scalar is filled out and other values reshaped.

    >>> tt.constant(0.5, shape=(2,)).numpy()
    array([0.5, 0.5], dtype=float32)
    """
    array = (
        convert_to_tensor(value, dtype).numpy()
        if is_tensor_like(value)
        else _from_python(value, None if dtype is None else as_dtype(dtype))
    )
    array = np.asarray(element_array(array))  # a string scalar's `.numpy()` is its bytes
    if shape is not None:
        shape = tuple(int(d) for d in shape)
        if array.size == 1:
            array = np.full(shape, array.reshape(()), dtype=array.dtype)
        elif array.size == int(np.prod(shape)):
            array = array.reshape(shape)
        else:
            raise TypeError(
                f"cannot make a tensor of shape {shape} from a value of shape {array.shape}"
            )
    return Tensor(array)
