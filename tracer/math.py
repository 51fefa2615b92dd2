"""`tt.math`: elementwise math, as in `tf.math`."""

from tracer.ops.array_ops import cast  # noqa: F401
from tracer.ops.broadcast_ops import reduce_sum  # noqa: F401
from tracer.ops.index_ops import argmax, argmin  # noqa: F401
from tracer.ops.math_ops import (  # noqa: F401
    abs,
    add,
    add_n,
    clip_by_value,
    complex,
    conj,
    cos,
    divide,
    equal,
    erf,
    exp,
    floordiv,
    floormod,
    greater,
    greater_equal,
    imag,
    is_finite,
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
    mul_no_nan,
    multiply,
    negative,
    not_equal,
    pow,
    real,
    rsqrt,
    sigmoid,
    sign,
    sin,
    softplus,
    softsign,
    sqrt,
    square,
    subtract,
    tan,
    tanh,
)
from tracer.ops.nn_ops import reduce_logsumexp  # noqa: F401
from tracer.ops.reduction_ops import (  # noqa: F401
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_std,
    reduce_variance,
)
from tracer.ops.scan_ops import cumprod, cumsum, reduce_prod  # noqa: F401
from tracer.ops.segment_ops import (  # noqa: F401
    bincount,
    segment_max,
    segment_mean,
    segment_min,
    segment_prod,
    segment_sum,
    unsorted_segment_max,
    unsorted_segment_mean,
    unsorted_segment_min,
    unsorted_segment_prod,
    unsorted_segment_sum,
)
from tracer.ops.sort_ops import top_k  # noqa: F401
