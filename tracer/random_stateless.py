"""TensorFlow's stateless random ops (`tt.random.stateless_*`, and
`tt.random.experimental.stateless_split` and `stateless_fold_in`): each draw is a function
of a seed tensor of shape [2] (and the shape) alone, computed by ops, so a compiled function
that takes the seed as an argument, or computes it from a step counter, draws anew whenever
the seed changes, and eagerly and in every backend the same seed gives the same values.

The stream is tracer's own (`tracer/ops/random_ops.py`: splitmix64 of the seed and each
element's index), not TensorFlow's Philox, so the values are not TensorFlow's; the
distributions, dtypes, shapes and errors are. The stateful draws of tracer/random.py are
these draws, their seed taken from a hidden stream.

- uniform: minval + u * (maxval - minval) of unit draws u; integers minval + floor(u * span).
- normal: Box–Muller over two blocks of unit draws.
- truncated normal: the normal quantile of a uniform between the quantiles of -2 and 2
  (Wichura's algorithm AS241; the same law as TensorFlow's, which draws normals again until
  they fall within two standard deviations).
- categorical: the Gumbel-max trick, argmax(logits - log(-log(u))).
- poisson: numpy's Poisson sampler seeded by the seed pair (in a tt.function, a call back to
  Python, a tt.py_function).
- split and fold_in: new seeds drawn from the seed (integers of 32 random bits).
"""

import math

import numpy as np

from tracer import dtypes
from tracer.context import state
from tracer.dtypes import as_dtype
from tracer.errors import InvalidArgumentError, mixed
from tracer.ir import dims
from tracer.ops import math_ops, random_ops
from tracer.ops.array_ops import cast, expand_dims
from tracer.ops.convert import known_value
from tracer.ops.index_ops import argmax
from tracer.ops.math_ops import cos, log, maximum, minimum, sqrt, where
from tracer.ops.structure_ops import stack
from tracer.tensor import Tensor, convert_to_tensor

_ShapeError = mixed(InvalidArgumentError, ValueError)


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=dtypes.float32, name=None):
    """Uniform values in [minval, maxval) (maxval 1 by default for floating dtypes), a
    function of `seed` (an int32 or int64 tensor of shape [2]) and `shape` alone.

    Floating values are minval + u * (maxval - minval) for u in [0, 1) with 24 random bits
    (float32), 53 (float64) or 11 (float16). Integer dtypes (int32, int64) need maxval:
    minval + floor(u * (maxval - minval)) with a float64 u, clamped below maxval (so an int64
    range wider than 2**53 is covered coarsely), for maxval - minval below 2**63.

    >>> a = tt.random.stateless_uniform([3], seed=[1, 2])
    >>> b = tt.random.stateless_uniform([3], seed=[1, 2])
    >>> c = tt.random.stateless_uniform([3], seed=[1, 3])
    >>> bool((a.numpy() == b.numpy()).all()), bool((a.numpy() == c.numpy()).any())
    (True, False)
    """
    dtype = as_dtype(dtype)
    shape = _stateless_shape(shape, "stateless_uniform")
    seed = _stateless_seed(seed, "stateless_uniform")
    if dtype.is_integer:
        return _uniform_integers(shape, seed, minval, maxval, dtype)
    if dtype.name not in random_ops.UNIT_BITS:
        raise TypeError(
            f"stateless_uniform: dtype must be float16, float32, float64, int32 or int64, "
            f"not {dtype.name}"
        )
    unit = random_ops.uniform_unit(shape, seed, dtype)
    if maxval is None:
        maxval = 1
    if _is_number(minval, 0) and _is_number(maxval, 1):
        return unit
    maxval = convert_to_tensor(maxval, dtype)
    if _is_number(minval, 0):  # no add after the product: C contracts none into an fma
        return unit * maxval
    minval = convert_to_tensor(minval, dtype)
    return unit * (maxval - minval) + minval  # TensorFlow's formula


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32, name=None):
    """Normal values of `mean` and `stddev`, a function of `seed` (an int32 or int64 tensor
    of shape [2]) and `shape` alone: Box–Muller's sqrt(-2 log(1 - u)) cos(2 pi v) over two
    blocks of stateless_uniform's unit draws (float16 computes in float32).

    >>> tt.random.stateless_normal([2, 3], seed=[7, 0], dtype=tt.float64).shape
    TensorShape([2, 3])
    """
    dtype = as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(f"stateless_normal: dtype must be floating, not {dtype.name}")
    shape = _stateless_shape(shape, "stateless_normal")
    seed = _stateless_seed(seed, "stateless_normal")
    work = dtypes.float32 if dtype == dtypes.float16 else dtype
    unit = random_ops.uniform_unit((2, *shape), seed, work)
    values = sqrt(-2.0 * log(1.0 - unit[0])) * cos(unit[1] * (2.0 * math.pi))
    if not _is_number(stddev, 1):
        values = values * convert_to_tensor(stddev, work)
    if not _is_number(mean, 0):
        values = values + convert_to_tensor(mean, work)
    return cast(values, dtype)


def _uniform_integers(shape, seed, minval, maxval, dtype):
    """minval + floor(u * (maxval - minval)) in int64, where an int32 range always fits: the
    product is truncated as it is (a cast, which C and numpy round alike), and clamped
    below the span, which u * span reaches where rounding carries it up."""
    if maxval is None:
        raise ValueError(f"stateless_uniform: maxval must be given for {dtype.name} values")
    if _is_number(minval) and _is_number(maxval):
        if not minval < maxval:
            raise ValueError(
                f"stateless_uniform: minval ({minval}) must be less than maxval ({maxval})"
            )
        if maxval - minval >= 2**63:
            raise ValueError(
                f"stateless_uniform: maxval - minval must be less than 2**63, not "
                f"{maxval} - ({minval})"
            )
    low = cast(convert_to_tensor(minval, dtype), dtypes.int64)
    span = cast(convert_to_tensor(maxval, dtype), dtypes.int64) - low
    unit = random_ops.uniform_unit(shape, seed, dtypes.float64)
    steps = cast(unit * cast(span, dtypes.float64), dtypes.int64)
    return cast(minimum(steps, span - 1) + low, dtype)


def _stateless_seed(seed, function):
    """The seed as a tensor, checked: int32 or int64, of shape [2]."""
    seed = convert_to_tensor(seed)
    if seed.dtype not in random_ops.SEED_DTYPES:
        raise TypeError(f"{function}: seed must be an int32 or int64 tensor, not {seed.dtype.name}")
    if tuple(seed.shape) != (2,):
        raise ValueError(
            f"{function}: seed must have shape [2] (two integers), not {list(seed.shape)}"
        )
    return seed


def _stateless_shape(shape, function):
    """`shape` as a tuple of dimensions: ints (and unknown dimensions while tracing); a
    tensor must hold a value known while the function is traced."""
    shape = known_value(shape, f"{function}: shape", " (use x.shape rather than tt.shape(x))")
    if isinstance(shape, (int, np.integer, dims.Dim)) or np.ndim(shape) == 0:
        shape = (shape,)
    result = []
    for d in shape:
        if isinstance(d, dims.Dim):
            result.append(d)
        elif isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_)):
            if d < 0:
                raise ValueError(f"{function}: shape {list(shape)} has a negative dimension")
            result.append(int(d))
        else:
            raise TypeError(f"{function}: shape must hold integers, not {d!r} (in {shape!r})")
    return tuple(result)


def _is_number(value, equal_to=None):
    """Whether `value` is a Python or numpy number (equal to `equal_to`, where given)."""
    if not isinstance(value, (int, float, np.integer, np.floating)):
        return False
    return equal_to is None or value == equal_to


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=dtypes.float32,
                               name=None, alg="auto_select"):  # fmt: skip
    """Normal values of `mean` and `stddev` within two standard deviations of the mean, a
    function of `seed` and `shape` alone: the normal quantile of a uniform draw between the
    quantiles of -2 and 2 (float16 computes in float32). `alg` is TensorFlow's choice of
    stream, which tracer's has none of.

    >>> x = tt.random.stateless_truncated_normal([1000], seed=[1, 2])
    >>> bool(tt.reduce_all(tt.abs(x) < 2.0))
    True
    """
    dtype = as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(f"stateless_truncated_normal: dtype must be floating, not {dtype.name}")
    shape = _stateless_shape(shape, "stateless_truncated_normal")
    seed = _stateless_seed(seed, "stateless_truncated_normal")
    work = dtypes.float32 if dtype == dtypes.float16 else dtype
    unit = random_ops.uniform_unit(shape, seed, work)
    values = _truncated_quantile(_NORMAL_BELOW_2 + unit * (_NORMAL_ABOVE_2 - _NORMAL_BELOW_2))
    if not _is_number(stddev, 1):
        values = values * convert_to_tensor(stddev, work)
    if not _is_number(mean, 0):
        values = values + convert_to_tensor(mean, work)
    return cast(values, dtype)


# the normal distribution's probabilities below -2 and below 2
_NORMAL_BELOW_2 = 0.5 * math.erfc(2.0 / math.sqrt(2.0))
_NORMAL_ABOVE_2 = 1.0 - _NORMAL_BELOW_2

# Wichura's AS241 (PPND16), rational approximations of the normal quantile good to 1e-16:
# for |p - 0.5| <= 0.425, q * A(r) / B(r) with r = 0.180625 - q^2; beyond, where
# r = sqrt(-log(min(p, 1 - p))) <= 5 (every p within two standard deviations),
# C(r - 1.6) / D(r - 1.6). Coefficients from the constant term up.
_A = (
    3.387132872796366608, 133.14166789178437745, 1971.5909503065514427,
    13731.693765509461125, 45921.953931549871457, 67265.770927008700853,
    33430.575583588128105, 2509.0809287301226727,
)  # fmt: skip
_B = (
    1.0, 42.313330701600911252, 687.1870074920579083, 5394.1960214247511077,
    21213.794301586595867, 39307.89580009271061, 28729.085735721942674,
    5226.495278852854561,
)  # fmt: skip
_C = (
    1.42343711074968357734, 4.6303378461565452959, 5.7694972214606914055,
    3.64784832476320460504, 1.27045825245236838258, 0.24178072517745061177,
    0.0227238449892691845833, 7.7454501427834140764e-4,
)  # fmt: skip
_D = (
    1.0, 2.05319162663775882187, 1.6763848301838038494, 0.68976733498510000455,
    0.14810397642748007459, 0.0151986665636164571966, 5.475938084995344946e-4,
    1.05075007164441684324e-9,
)  # fmt: skip


def _polynomial(coefficients, x):
    """sum(c_k x^k), by Horner's rule."""
    total = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        total = total * x + c
    return total


def _truncated_quantile(p):
    """The standard normal quantile of probabilities `p` within [P(-2), P(2)] (AS241's two
    inner regions), kept strictly within (-2, 2) where rounding reaches the bounds."""
    q = p - 0.5
    r = 0.180625 - q * q
    inner = q * _polynomial(_A, r) / _polynomial(_B, r)
    t = sqrt(-log(minimum(p, 1.0 - p))) - 1.6
    outer = _polynomial(_C, t) / _polynomial(_D, t)
    values = where(math_ops.abs(q) <= 0.425, inner, where(q < 0.0, -outer, outer))
    bound = float(np.nextafter(np.array(2.0, p.dtype.as_numpy_dtype), 0))
    return minimum(maximum(values, -bound), bound)


def stateless_categorical(logits, num_samples, seed, dtype=dtypes.int64, name=None):
    """`num_samples` class ids for each row of `logits` [batch, classes], each drawn with
    probability softmax(row), a function of `seed`: [batch, num_samples], int64 unless
    `dtype` says int32 (the Gumbel-max trick, as tt.random.categorical).

    >>> tt.random.stateless_categorical(tt.math.log([[0.5, 0.5]]), 3, seed=[1, 2]).shape
    TensorShape([1, 3])
    """
    seed = _stateless_seed(seed, "stateless_categorical")

    def unit(shape, low, dtype):
        return stateless_uniform(shape, seed, low, 1.0, dtype)

    return gumbel_max(logits, num_samples, dtype, unit, "stateless_categorical")


def gumbel_max(logits, num_samples, dtype, unit, function):
    """Class ids drawn from `logits` (see `stateless_categorical`), with `unit(shape, low,
    dtype)` the uniform draws in [low, 1): the argmax of logits - log(-log(u)) over the
    classes."""
    logits = convert_to_tensor(logits)
    dtype = dtypes.int64 if dtype is None else as_dtype(dtype)
    if logits.ndim != 2:
        raise ValueError(f"{function}: logits must be [batch, classes], not {logits.shape}")
    if dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"{function}: dtype must be int32 or int64, not {dtype.name}")
    batch, classes = logits.shape
    # NOTE: u from the smallest normal float up, so that log(u) is finite.
    tiny = float(np.finfo(logits.dtype.as_numpy_dtype).tiny)
    u = unit([batch, int(num_samples), classes], tiny, logits.dtype)
    gumbel = -log(-log(u))
    return argmax(expand_dims(logits, 1) + gumbel, axis=-1, output_type=dtype)


_POISSON_DTYPES = ("float16", "float32", "float64", "int32", "int64")


def stateless_poisson(shape, seed, lam, dtype=dtypes.int32, name=None):
    """Poisson counts of rate `lam` (broadcast: `shape` ends with its shape), a function of
    `seed`: of `dtype` (int32, int64 or a floating dtype). A rate of 0 or below draws 0.

    >>> tt.random.stateless_poisson([2, 3], seed=[1, 2], lam=[1.0, 5.0, 50.0]).shape
    TensorShape([2, 3])
    """
    dtype = as_dtype(dtype)
    if dtype.name not in _POISSON_DTYPES:
        raise TypeError(f"stateless_poisson: dtype must be one of {_POISSON_DTYPES}, not {dtype}")
    shape = _stateless_shape(shape, "stateless_poisson")
    seed = _stateless_seed(seed, "stateless_poisson")
    lam = convert_to_tensor(lam)
    if not (lam.dtype.is_floating or lam.dtype.is_integer):
        raise TypeError(f"stateless_poisson: lam must be a number, not {lam.dtype.name}")
    rates = tuple(lam.shape)
    if len(rates) > len(shape) or (rates and tuple(shape[len(shape) - len(rates) :]) != rates):
        raise _ShapeError(
            f"stateless_poisson: shape {list(shape)} must end with lam's shape {list(rates)}"
        )
    sizes = tuple(int(d) for d in shape)

    def draw(seed, lam):
        return Tensor(_poisson_counts(seed.numpy(), lam.numpy(), sizes, dtype))

    if state.trace is None:
        return draw(seed, lam)
    from tracer.py_function import py_function  # (it imports what imports this module)

    # NOTE: a call back to Python, as the candidate samplers' (numpy's sampler is no op of
    # tracer's): every backend draws the same counts
    return py_function(draw, [seed, lam], dtype)


def _poisson_counts(seed, lam, shape, dtype):
    """numpy's Poisson counts of rates `lam` broadcast to `shape`, from a Generator seeded
    by the seed pair, as `dtype`."""
    words = np.asarray(seed).astype(np.int64).reshape(2).view(np.uint64).tolist()
    generator = np.random.Generator(np.random.PCG64(np.random.SeedSequence(words)))
    rates = np.broadcast_to(np.asarray(lam, np.float64), shape)
    rates = np.where(rates > 0, rates, 0.0)  # (a rate of 0, below or NaN draws 0)
    return generator.poisson(rates).astype(dtype.as_numpy_dtype).reshape(shape)


def stateless_split(seed, num=2, alg="auto_select"):
    """`num` new seeds drawn from `seed`: [num, 2], of the seed's dtype (int32 for a Python
    pair), for independent stateless draws.

    >>> tt.random.experimental.stateless_split([1, 2], num=3).shape
    TensorShape([3, 2])
    """
    seed = _stateless_seed(seed, "stateless_split")
    return _seed_words([int(num), 2], seed, seed.dtype)


def stateless_fold_in(seed, data, alg="auto_select"):
    """A new seed from `seed` and the integer `data` (a step, a replica's id): [a word drawn
    from `seed`, data], of data's dtype (int32 for a Python int that fits), as TensorFlow's.

    >>> int(tt.random.experimental.stateless_fold_in([1, 2], 7)[1])
    7
    """
    seed = _stateless_seed(seed, "stateless_fold_in")
    data = convert_to_tensor(data)
    if not data.dtype.is_integer or data.ndim != 0:
        raise TypeError(
            f"stateless_fold_in: data must be an integer scalar, not {data.dtype.name}"
            f"{list(data.shape)}"
        )
    return stack([_seed_words([], seed, data.dtype), data])


def _seed_words(shape, seed, dtype):
    """Integers of 32 random bits of `shape`, drawn from `seed`, as `dtype`."""
    words = _uniform_integers(tuple(shape), seed, -(2**31), 2**31, dtypes.int64)
    return cast(words, dtype)
