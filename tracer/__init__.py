"""tracer: TensorFlow's GradientTape API, recorded as an IR that compiles to C.

import tracer as tt
x = tt.constant(3.0)
with tt.GradientTape() as tape:
    tape.watch(x)
    y = x * x
tape.gradient(y, x)   # 6.0

The namespace holds the public API (`__all__`, what `dir(tracer)` lists); tracer's own
modules are imported by their full path (`import tracer.ops.core`).
"""

import importlib as _importlib
import os as _os
import sys as _sys

import runtime.numpy_first  # noqa: F401 (numpy's import, its OpenBLAS's idle threads brief)

# isort: split
import codegen.version  # noqa: F401 (tracer's files as imported: the key of stored plans)
from runtime import allocator as _allocator
from tracer import (
    autodiff,
    autograph,
    compat,
    config,
    data,
    debugging,
    errors,
    linalg,
    math,
    nn,
    optimizers,
    profiler,
    ragged,
    random,
    sparse,
    strings,
    train,
    types,
)
from tracer import dtypes_api as dtypes  # tracer/dtypes.py with cast beside
from tracer import eager_convolutions as _eager_convolutions
from tracer import operators as _operators  # installs + - * / @ [] on tensors
from tracer import ragged_ops as _ragged_ops
from tracer.autodiff import jvp
from tracer.clipping import clip_by_global_norm, clip_by_norm, clip_by_value
from tracer.compat.v1.graphs import Graph
from tracer.control.branches import cond
from tracer.control.case import case, switch_case
from tracer.control.custom import custom_gradient
from tracer.control.folds import foldl, foldr
from tracer.control.loops import while_loop
from tracer.control.map_fn import map_fn
from tracer.control.recompute import recompute_grad
from tracer.control.scan import scan
from tracer.control.vectorized_map import vectorized_map
from tracer.dtypes import (
    DType,
    as_dtype,
    bool,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
)
from tracer.explain import UnconnectedGradientError
from tracer.export import ExportError, export_c
from tracer.extension_type import type_spec_from_value
from tracer.framework import (
    device,
    ensure_shape,
    executing_eagerly,
    get_static_value,
    group,
    init_scope,
    inside_function,
    is_tensor,
    rank,
)
from tracer.function import Function, RetraceLimitError, function
from tracer.indexed_slices import IndexedSlices
from tracer.logs import get_logger
from tracer.module import Module, name_scope
from tracer.ops import (  # noqa: F401 (imported for what importing them does)
    base64_ops,
    csv_decode,  # the primitives of tt.io, tt.image, tt.audio and Keras's text layers
    example_parsing,
    packing,  # nested lists holding tensors pack into one
    png_codec,
    token_ops,
    wav_ops,
)
from tracer.ops.array_ops import (
    cast,
    expand_dims,
    eye,
    fill,
    identity,
    ones,
    ones_like,
    reshape,
    shape,
    size,
    squeeze,
    stop_gradient,
    strided_slice,
    zeros,
    zeros_like,
)
from tracer.ops.array_ops import range_ as range
from tracer.ops.broadcast_ops import broadcast_to, reduce_sum, tile
from tracer.ops.dynamic_slices import slice
from tracer.ops.einsum_ops import einsum
from tracer.ops.grid_ops import meshgrid, sequence_mask
from tracer.ops.index_ops import argmax, argmin, gather, one_hot
from tracer.ops.layout_ops import (
    batch_to_space,
    pad,
    reverse,
    reverse_sequence,
    roll,
    space_to_batch_nd,
)
from tracer.ops.layout_ops import space_to_batch_nd as space_to_batch  # TF 2's alias
from tracer.ops.linalg_ops import matmul
from tracer.ops.mask_composites import boolean_mask, unique, unique_with_counts, where
from tracer.ops.math_composites import (
    acosh,
    asinh,
    atanh,
    cosh,
    linspace,
    reduce_all,
    reduce_any,
    saturate_cast,
    scalar_mul,
    sinh,
    tensordot,
    transpose,
    truediv,
    truncatediv,
    truncatemod,
)
from tracer.ops.math_ops import (
    abs,
    acos,
    add,
    add_n,
    asin,
    atan,
    atan2,
    complex,
    cos,
    divide,
    equal,
    exp,
    floor,
    floordiv,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    mod,
    multiply,
    negative,
    not_equal,
    pow,
    round,
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
)
from tracer.ops.nn_ops import reduce_logsumexp
from tracer.ops.reduction_ops import norm, reduce_max, reduce_mean, reduce_min
from tracer.ops.scan_ops import cumsum, reduce_prod
from tracer.ops.scatter_extremes import tensor_scatter_nd_max, tensor_scatter_nd_min
from tracer.ops.scatter_nd_ops import (
    gather_nd,
    scatter_nd,
    tensor_scatter_nd_add,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
)
from tracer.ops.segment_ops import bincount
from tracer.ops.sequence_composites import histogram_fixed_width, repeat, searchsorted
from tracer.ops.sort_ops import argsort, sort
from tracer.ops.structure_ops import concat, split, stack, unstack
from tracer.printing import print
from tracer.py_function import numpy_function, py_function
from tracer.ragged_tensor import RaggedTensor, RaggedTensorSpec
from tracer.shape_lists import shape_n
from tracer.signature import TensorSpec
from tracer.sparse_tensor import SparseTensor, SparseTensorSpec
from tracer.strings import as_string
from tracer.symbolic_gradients import gradients
from tracer.tape import GradientTape, UnconnectedGradients
from tracer.tensor import Tensor, constant, convert_to_tensor
from tracer.tensor_array import TensorArray
from tracer.tensor_shape import TensorShape
from tracer.transforms import grad, value_and_grad
from tracer.variable import Variable
from tracer.variable_policies import VariableAggregation, VariableSynchronization

newaxis = None  # `x[..., tt.newaxis]`, as numpy's and TensorFlow's

# tt.add, tt.reduce_mean, tt.concat, ... of RaggedTensors, and their operators
_ragged_ops.install([_sys.modules[__name__], math, nn, strings])

# eager convolutions of many multiply-adds by modules of their own geometry, once built
_eager_convolutions.use()

_allocator.tune()  # before the user's first eager op: large arrays reuse the heap's pages

__version__ = "0.1.0"

__all__ = [
    # modules
    "audio", "autodiff", "autograph", "bitwise", "compat", "config", "data", "debugging", "dtypes", "errors", "experimental", "image", "io", "keras", "layers", "linalg", "math", "nn", "optimizers", "profiler", "ragged", "random", "saved_model", "signal", "sparse", "strings", "summary", "train", "types",
    # tensors, variables, dtypes
    "DType", "IndexedSlices", "Module", "RaggedTensor", "RaggedTensorSpec", "SparseTensor", "SparseTensorSpec", "Tensor", "TensorArray", "TensorShape", "TensorSpec", "Variable", "VariableAggregation", "VariableSynchronization", "as_dtype", "bool", "complex64",
    "complex128", "constant", "convert_to_tensor", "float16", "float32", "float64", "int8", "int16", "int32",
    "int64", "newaxis", "string", "uint8", "uint16", "uint32", "uint64",
    # control flow
    "case", "cond", "foldl", "foldr", "map_fn", "scan", "switch_case", "while_loop",
    # differentiation and compiling
    "ExportError", "Function", "GradientTape", "RetraceLimitError", "UnconnectedGradientError",
    "UnconnectedGradients", "custom_gradient", "export_c", "function", "grad", "gradients", "jvp", "recompute_grad",
    "value_and_grad", "vectorized_map",
    # ops
    "abs", "acos", "add", "add_n", "argmax", "asin", "atan", "atan2", "argmin", "broadcast_to", "cast", "clip_by_norm", "eye", "linspace", "norm", "clip_by_value",
    "complex", "concat", "cos", "divide", "equal", "exp", "expand_dims", "fill", "floor", "floordiv",
    "truncatediv", "truncatemod", "saturate_cast",
    "gather", "greater", "greater_equal", "identity", "less", "less_equal", "log", "log1p",
    "meshgrid", "sequence_mask", "repeat", "searchsorted", "histogram_fixed_width",
    "logical_and", "logical_not", "logical_or", "matmul", "maximum", "minimum", "mod",
    "multiply", "name_scope", "negative", "not_equal", "one_hot", "ones", "ones_like", "pow", "range",
    "numpy_function", "print", "py_function", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "reshape", "round", "rsqrt",
    "shape", "shape_n", "sigmoid", "sign", "sin", "size", "slice", "split", "sqrt", "square", "squeeze", "stack",
    "stop_gradient", "strided_slice", "subtract", "tan", "tanh", "tile", "transpose", "unique", "unique_with_counts", "unstack", "where", "boolean_mask",
    "zeros", "zeros_like",
    "einsum",
    "argsort", "as_string", "clip_by_global_norm", "pad", "reverse", "reverse_sequence", "roll", "sort",
    "space_to_batch", "space_to_batch_nd", "batch_to_space",
    "bincount", "gather_nd", "scatter_nd", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
    "tensor_scatter_nd_update", "tensor_scatter_nd_min", "tensor_scatter_nd_max",
    # tf.math's functions that TensorFlow also has at its top level
    "acosh", "asinh", "atanh", "cosh", "cumsum", "reduce_all", "reduce_any", "reduce_logsumexp",
    "scalar_mul", "sinh", "tensordot", "truediv",
    # framework
    "Graph", "device", "ensure_shape", "executing_eagerly", "get_static_value", "init_scope", "inside_function",
    "is_tensor", "rank", "get_logger", "group", "type_spec_from_value",
]  # fmt: skip

if _os.environ.get("TRACER_PROFILE"):  # the whole program profiled (docs/profiler.md)
    profiler.profile_program(_os.environ["TRACER_PROFILE"])

# Importing tracer's own modules made them attributes of the package; they are not its API.
for _name, _value in list(globals().items()):
    if type(_value) is type(_sys) and _name not in __all__ and not _name.startswith("_"):
        del globals()[_name]
del _name, _value, _operators, _ragged_ops, _eager_convolutions


def __dir__():
    return [*__all__, "__version__"]


# API modules imported at their first use, not with tracer (Keras' layers, models and
# files were a fifth of the import's time, tf.summary, tf.image, tf.signal and the like
# a tenth more, which every program would otherwise pay); the primitives that only they
# used are registered with tracer all the same (`tracer.ops`' modules imported above), for
# graphs read from files
_IMPORTED_WHEN_USED = (
    *("audio", "bitwise", "experimental", "image", "io", "keras", "layers", "saved_model"),
    *("signal", "summary"),
)


# TensorFlow's names of Keras's modules (`tf.initializers` is `tf.keras.initializers`)
_KERAS_ALIASES = ("initializers", "losses", "metrics")
# TensorFlow 2's own initializers, which take Keras's arguments and are called as they are
_INITIALIZERS = {
    "random_normal_initializer": "RandomNormal",
    "random_uniform_initializer": "RandomUniform",
    "zeros_initializer": "Zeros",
    "ones_initializer": "Ones",
    "constant_initializer": "Constant",
}


def __getattr__(name):
    """`tt.keras` at its first use; and `tracer.ops` and the like after `import
    tracer.ops.core`: a module imported by its full path is reached through the package, as
    Python expects, without being part of the API."""
    if name in _IMPORTED_WHEN_USED:
        return _importlib.import_module(f"{__name__}.{name}")
    if name in _KERAS_ALIASES:
        return _importlib.import_module(f"{__name__}.keras.{name}")
    if name in _INITIALIZERS:
        initializers = _importlib.import_module(f"{__name__}.keras.initializers")
        return getattr(initializers, _INITIALIZERS[name])
    module = _sys.modules.get(f"{__name__}.{name}")
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return module
