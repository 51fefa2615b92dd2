"""`tt.math`: elementwise math, as in `tf.math`; `tt.math.special` as `tf.math.special`."""

import types

from tracer.clipping import clip_by_value  # noqa: F401
from tracer.ops.array_ops import cast  # noqa: F401
from tracer.ops.broadcast_ops import reduce_sum  # noqa: F401
from tracer.ops.confusion_matrix import confusion_matrix  # noqa: F401
from tracer.ops.index_ops import argmax, argmin  # noqa: F401
from tracer.ops.math_composites import (  # noqa: F401
    acosh,
    angle,
    asinh,
    atanh,
    cosh,
    count_nonzero,
    cumulative_logsumexp,
    divide_no_nan,
    is_inf,
    is_nan,
    l2_normalize,
    log_sigmoid,
    logical_xor,
    polyval,
    reciprocal,
    reduce_all,
    reduce_any,
    reduce_euclidean_norm,
    rint,
    scalar_mul,
    sinh,
    squared_difference,
    truediv,
    truncatediv,
    truncatemod,
    xdivy,
    xlog1py,
    xlogy,
)
from tracer.ops.math_ops import (  # noqa: F401
    abs,
    acos,
    add,
    add_n,
    asin,
    atan,
    atan2,
    ceil,
    complex,
    conj,
    cos,
    divide,
    equal,
    erf,
    erfc,
    exp,
    expm1,
    floor,
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
    multiply_no_nan,
    negative,
    not_equal,
    pow,
    real,
    round,
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
from tracer.ops.nn_ops import log_softmax, reduce_logsumexp  # noqa: F401
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
    unsorted_segment_sqrt_n,
    unsorted_segment_sum,
)
from tracer.ops.sort_ops import top_k  # noqa: F401
from tracer.ops.special_ops import (  # noqa: F401
    bessel_i0,
    bessel_i0e,
    bessel_i1,
    bessel_i1e,
    digamma,
    erfinv,
    igamma,
    igammac,
    lbeta,
    lgamma,
    ndtri,
    polygamma,
    zeta,
)

# tf.math.special: the special functions TensorFlow also lists there
special = types.ModuleType("tracer.math.special", "`tt.math.special`, as `tf.math.special`.")
special.bessel_i0 = bessel_i0
special.bessel_i0e = bessel_i0e
special.bessel_i1 = bessel_i1
special.bessel_i1e = bessel_i1e
