"""tracer: TensorFlow's GradientTape API, recorded as an IR that compiles to C.

import tracer as tt
x = tt.constant(3.0)
with tt.GradientTape() as tape:
    tape.watch(x)
    y = x * x
tape.gradient(y, x)   # 6.0
"""

from tracer import config, debugging, layers, math, nn, optimizers, random  # noqa: F401
from tracer import operators as _operators  # noqa: F401  (installs + - * / @ [] on tensors)
from tracer.dtypes import (  # noqa: F401
    DType,
    as_dtype,
    bool,
    complex64,
    complex128,
    float16,
    float32,
    float64,
    int32,
    int64,
)
from tracer.explain import UnconnectedGradientError  # noqa: F401
from tracer.function import (  # noqa: F401
    Function,
    RetraceLimitError,
    TensorSpec,
    function,
)
from tracer.indexed_slices import IndexedSlices  # noqa: F401
from tracer.ops.array_ops import (  # noqa: F401
    broadcast_to,
    cast,
    expand_dims,
    fill,
    identity,
    ones,
    ones_like,
    reshape,
    shape,
    size,
    squeeze,
    stop_gradient,
    tile,
    transpose,
    zeros,
    zeros_like,
)
from tracer.ops.array_ops import range_ as range  # noqa: F401
from tracer.ops.index_ops import argmax, argmin, gather, one_hot  # noqa: F401
from tracer.ops.linalg_ops import matmul  # noqa: F401
from tracer.ops.math_ops import (  # noqa: F401
    abs,
    add,
    add_n,
    clip_by_value,
    complex,
    cos,
    divide,
    equal,
    exp,
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
    rsqrt,
    sigmoid,
    sign,
    sin,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
    where,
)
from tracer.ops.reduction_ops import reduce_max, reduce_mean, reduce_min, reduce_sum  # noqa: F401
from tracer.ops.scan_ops import reduce_prod  # noqa: F401
from tracer.ops.structure_ops import concat, stack, unstack  # noqa: F401
from tracer.tape import GradientTape, UnconnectedGradients  # noqa: F401
from tracer.tensor import Tensor, constant, convert_to_tensor, is_tensor_like  # noqa: F401
from tracer.transforms import grad, value_and_grad  # noqa: F401
from tracer.variable import Variable  # noqa: F401

__version__ = "0.1.0"
