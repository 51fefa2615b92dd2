"""`tt.random`: seeded normal and uniform tensors, and categorical draws made of them.

`set_seed(s)` makes every later draw repeatable; an op-level `seed` picks a stream of its
own within the global seed, as TensorFlow's two-level seeds do. Eagerly, `normal` and
`uniform` draw with numpy when they are called. While a `tt.function` is traced they are
stateless draws whose seed is a hidden int64 Variable that each draw advances (`_traced_seed`),
so that every call of the compiled function draws anew, as TensorFlow's random ops do in a
tf.function; `tt.nn.dropout` draws so too, and `shuffle`, whose order is that of uniform
draws sorted (a gather: unlike TensorFlow's, it passes a gradient back to its rows).

`stateless_uniform` and `stateless_normal` are TensorFlow's stateless ops: the draw is a
function of a seed tensor (and the shape), computed by an op, so a compiled function that
takes the seed as an argument, or computes it from a step counter, draws anew whenever the
seed changes. Their stream is tracer's own (`tracer/ops/random_ops.py`), not TensorFlow's;
`Generator` (tracer/random_generator.py) draws TensorFlow's.
"""

import collections
import math

import numpy as np

from tracer import candidate_sampling, dtypes
from tracer.context import outside_trace, state
from tracer.dtypes import as_dtype
from tracer.errors import InvalidArgumentError
from tracer.ir import dims
from tracer.ops import random_ops
from tracer.ops.array_ops import cast, expand_dims
from tracer.ops.convert import known_value
from tracer.ops.index_ops import argmax, gather
from tracer.ops.math_ops import cos, log, minimum, sqrt
from tracer.ops.sort_ops import argsort
from tracer.random_generator import (  # noqa: F401 (tt.random's own)
    Generator,
    get_global_generator,
    set_global_generator,
)
from tracer.tensor import Tensor, convert_to_tensor

_generator = np.random.default_rng()
_global_seed = None
_op_generators = {}  # op-level seed -> its eager stream, restarted by set_seed
_traced_stream = None  # the Variable [start, count] of the draws made while tracing


def set_seed(seed):
    global _generator, _global_seed, _traced_stream
    _global_seed = int(seed)
    _generator = np.random.default_rng(_global_seed)
    _op_generators.clear()
    _traced_stream = None  # functions traced from now on draw from a stream of this seed


def _rng(seed):
    """The eager stream of an op-level `seed` (the global one without): each draw advances
    it, so that repeated calls with one seed draw anew, and the same sequence after each
    set_seed, as TensorFlow's seeded ops do."""
    if seed is None:
        return _generator
    if int(seed) not in _op_generators:
        _op_generators[int(seed)] = np.random.default_rng([_global_seed or 0, int(seed)])
    return _op_generators[int(seed)]


def _shape(shape):
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)


def seed_stream(start, name):
    """A new hidden int64 Variable [start, 0], made outside any trace: the seed of stateless
    draws that each draw advances by one in its second element (compiled code holds it as
    state, so each call reads the value the last one left)."""
    from tracer.variable import Variable  # (tracer.variable imports the ops this module does)

    with outside_trace():
        return Variable(np.array([start, 0], np.int64), trainable=False, name=name)


def _traced_seed(seed):
    """The seed tensor of a draw made while a function is traced (the hidden stream's value,
    its first element shifted by an op-level `seed`), the stream advanced after it."""
    global _traced_stream
    if _traced_stream is None:
        _traced_stream = seed_stream(int(_generator.integers(2**62)), "random_seed")
    drawn = _traced_stream.value()
    if seed is not None:
        drawn = drawn + np.array([int(seed), 0], np.int64)
    _traced_stream.assign_add(np.array([0, 1], np.int64))
    return drawn


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    dtype = as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(f"random.normal makes floating tensors, not {dtype.name}")
    if state.trace is not None:
        return stateless_normal(shape, _traced_seed(seed), mean, stddev, dtype)
    values = _rng(seed).normal(float(mean), float(stddev), _shape(shape))
    return Tensor(values.astype(dtype.as_numpy_dtype))


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    dtype = as_dtype(dtype)
    if state.trace is not None:
        if dtype.is_integer and maxval is None:
            raise ValueError("random.uniform needs maxval for integer dtypes")
        return stateless_uniform(shape, _traced_seed(seed), minval, maxval, dtype)
    rng, shape = _rng(seed), _shape(shape)
    if dtype.is_integer:
        if maxval is None:
            raise ValueError("random.uniform needs maxval for integer dtypes")
        return Tensor(rng.integers(int(minval), int(maxval), shape).astype(dtype.as_numpy_dtype))
    maxval = 1.0 if maxval is None else float(maxval)
    return Tensor(rng.uniform(float(minval), maxval, shape).astype(dtype.as_numpy_dtype))


def shuffle(value, seed=None, name=None):
    """`value` with its slices along the first axis in a random order: eagerly numpy's
    permutation; while a function is traced, the order that sorts uniform draws, which
    each call draws anew.

    >>> sorted(tt.random.shuffle(tt.constant([1, 2, 3])).numpy().tolist())
    [1, 2, 3]
    """
    value = convert_to_tensor(value)
    if value.ndim == 0:
        raise ValueError("random.shuffle: value must have a first axis to shuffle, not be a scalar")
    if state.trace is None:
        order = _rng(seed).permutation(int(value.shape[0]))
    else:
        order = argsort(uniform([value.shape[0]], dtype=dtypes.float64, seed=seed))
    return gather(value, order)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """`num_samples` class ids for each row of `logits` [batch, classes], each drawn with
    probability softmax(row) (a class whose logit is -inf never): [batch, num_samples], int64
    unless `dtype` says int32. Composed as the Gumbel-max trick, the argmax of the logits plus
    -log(-log(u)) of uniform draws u, so that it draws anew in each call of a compiled
    function as `uniform` does; the stream is tracer's, not TensorFlow's.

    >>> tt.random.categorical(tt.math.log([[0.5, 0.5, 0.0]]), 4).shape
    TensorShape([1, 4])
    """
    logits = convert_to_tensor(logits)
    dtype = dtypes.int64 if dtype is None else as_dtype(dtype)
    if logits.ndim != 2:
        raise ValueError(f"random.categorical: logits must be [batch, classes], not {logits.shape}")
    if dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"random.categorical: dtype must be int32 or int64, not {dtype.name}")
    batch, classes = logits.shape
    # NOTE: u from the smallest normal float up, so that log(u) is finite.
    tiny = float(np.finfo(logits.dtype.as_numpy_dtype).tiny)
    u = uniform([batch, int(num_samples), classes], tiny, 1.0, logits.dtype, seed=seed)
    gumbel = -log(-log(u))
    return argmax(expand_dims(logits, 1) + gumbel, axis=-1, output_type=dtype)


# --- candidate samplers: classes for sampled losses -----------------------------------------

LogUniformCandidateSampler = collections.namedtuple(
    "LogUniformCandidateSampler",
    ["sampled_candidates", "true_expected_count", "sampled_expected_count"],
)
UniformCandidateSampler = collections.namedtuple(
    "UniformCandidateSampler", LogUniformCandidateSampler._fields
)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):  # fmt: skip
    """`num_sampled` classes of [0, range_max) drawn with P(k) = log((k + 2) / (k + 1)) /
    log(range_max + 1) (Zipf's law: ids ranked by frequency), distinct with `unique`, and the
    expected counts of `true_classes` (int64 [batch, num_true]) and of the sampled classes
    (tracer/candidate_sampling.py). The draws are numpy's; in a tt.function, a py_function
    that draws at each call.

    >>> s = tt.random.log_uniform_candidate_sampler([[1]], 1, 4, True, 10, seed=1)
    >>> s.sampled_candidates.shape, s.true_expected_count.shape, s.sampled_expected_count.dtype
    (TensorShape([4]), TensorShape([1, 1]), tt.float32)
    """
    return _candidate_sampler(
        LogUniformCandidateSampler, true_classes, num_true, num_sampled, unique, range_max, seed
    )


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                              seed=None, name=None):  # fmt: skip
    """As log_uniform_candidate_sampler, with every class of [0, range_max) equally likely."""
    return _candidate_sampler(
        UniformCandidateSampler, true_classes, num_true, num_sampled, unique, range_max, seed
    )


def _candidate_sampler(result, true_classes, num_true, num_sampled, unique, range_max, seed):
    kind = result.__name__
    if not isinstance(true_classes, Tensor):  # (lists become int64, as the op's input)
        true_classes = convert_to_tensor(true_classes, dtypes.int64)
    if true_classes.dtype != dtypes.int64:
        raise InvalidArgumentError(
            None,
            None,
            f"{kind}: true_classes must be an int64 tensor, not {true_classes.dtype.name}",
        )
    args = (int(num_true), int(num_sampled), bool(unique), int(range_max))

    def draw(classes):
        values = candidate_sampling.sample(kind, _rng(seed), classes.numpy(), *args)
        return [Tensor(value) for value in values]

    if state.trace is None:
        return result(*draw(true_classes))
    from tracer.py_function import py_function  # (it imports what imports this module)

    sampled, true_expected, sampled_expected = py_function(
        draw, [true_classes], [dtypes.int64, dtypes.float32, dtypes.float32]
    )
    return result(sampled, true_expected, sampled_expected)


# --- stateless: the draw is a function of a seed tensor ------------------------------------


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
