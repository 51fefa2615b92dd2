"""`tt.random`: seeded normal, uniform and truncated normal tensors, shuffles and
categorical draws; the stateless ops (tracer/random_stateless.py) and TensorFlow's
Generator (tracer/random_generator.py).

`set_seed(s)` makes every later draw repeatable; an op-level `seed` picks a stream of its
own within the global seed, as TensorFlow's two-level seeds do. A draw is a stateless draw
(tracer/random_stateless.py) whose seed comes from a hidden int64 Variable [start, count]
of its stream, read and advanced by each draw (`_draw_seed`): one stream for the op-level
seed given, restarted by `set_seed`, and one for draws without (its start drawn from the
global seed). Eagerly the draw computes now; while a `tt.function` is traced it is an op
whose seed is the Variable's value when the compiled code runs, so every call draws anew,
as TensorFlow's random ops do in a tf.function. Eager code and compiled code read the same
streams the same way: after `set_seed(1)`, `uniform([3], seed=7)` gives the same values
eagerly as in a tt.function called at that point, in every backend (as TensorFlow does when
an op seed is given). One difference from TensorFlow: two draws with the same op seed in
one function are two draws of the stream, where TensorFlow's graph gives both ops one
stream each, and so the same values.

The streams are tracer's own (`tracer/ops/random_ops.py`), not TensorFlow's; `Generator`
draws TensorFlow's. `shuffle` is a gather in the order that sorts uniform draws (unlike
TensorFlow's, it passes a gradient back to its rows).
"""

import collections

import numpy as np

from tracer import candidate_sampling, dtypes, random_stateless
from tracer import random_experimental as experimental  # noqa: F401 (tt.random's own)
from tracer.context import outside_trace, state
from tracer.dtypes import as_dtype
from tracer.errors import InvalidArgumentError
from tracer.ops.index_ops import gather
from tracer.ops.sort_ops import argsort
from tracer.random_generator import (  # noqa: F401 (tt.random's own)
    Generator,
    get_global_generator,
    set_global_generator,
)
from tracer.random_stateless import (  # noqa: F401 (tt.random's own)
    stateless_categorical,
    stateless_normal,
    stateless_poisson,
    stateless_truncated_normal,
    stateless_uniform,
)
from tracer.tensor import Tensor, convert_to_tensor

_generator = np.random.default_rng()  # the numpy stream of the global seed
_global_seed = None
_op_generators = {}  # op-level seed -> its numpy stream (the candidate samplers')
_streams = {}  # op-level seed (None without) -> the Variable [start, count] its draws read


def set_seed(seed):
    global _generator, _global_seed
    _global_seed = int(seed)
    _generator = np.random.default_rng(_global_seed & _WORD)
    _op_generators.clear()
    _streams.clear()  # functions traced from now on, and eager draws, draw from new streams


_WORD = 2**64 - 1


def _rng(seed):
    """The numpy stream of an op-level `seed` (the global one without): each draw advances
    it, so that repeated calls with one seed draw anew, and the same sequence after each
    set_seed, as TensorFlow's seeded ops do. (Keras's initializers and the candidate
    samplers draw from these.)"""
    if seed is None:
        return _generator
    if int(seed) not in _op_generators:
        words = [(_global_seed or 0) & _WORD, int(seed) & _WORD]
        _op_generators[int(seed)] = np.random.default_rng(words)
    return _op_generators[int(seed)]


def seed_stream(start, name):
    """A new hidden int64 Variable [start, 0], made outside any trace: the seed of stateless
    draws that each draw advances by one in its second element (compiled code holds it as
    state, so each call reads the value the last one left)."""
    from tracer.variable import Variable  # (tracer.variable imports the ops this module does)

    with outside_trace():
        return Variable(np.array([start, 0], np.int64), trainable=False, name=name)


def _stream(seed):
    """The hidden Variable of op-level `seed`'s stream (None: the draws without one). Its
    start is a function of the global and the op-level seed; without an op-level seed, the
    next number of the global seed's numpy stream."""
    key = None if seed is None else int(seed)
    stream = _streams.get(key)
    if stream is None:
        if key is None:
            start = int(_generator.integers(2**62))
        else:
            words = [(_global_seed or 0) & _WORD, key & _WORD]
            start = int(np.random.default_rng(words).integers(2**62))
        stream = _streams[key] = seed_stream(start, "random_seed")
    return stream


def _draw_seed(seed):
    """The seed tensor of one draw, the stream of op-level `seed` advanced after it: eagerly
    its value now, in a trace its value when the compiled code runs (read, then assigned)."""
    stream = _stream(seed)
    if state.trace is None:
        # NOTE: eagerly the array is swapped rather than assigned: the draw is no assign
        # of the program's (tt.recompute_grad refuses those), and costs no ops
        drawn = stream._value
        stream._value = drawn + np.array([0, 1], np.int64)
        return Tensor(drawn)
    drawn = stream.value()
    stream.assign_add(np.array([0, 1], np.int64))
    return drawn


def normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal values of `mean` and `stddev`, the next draw of the stream of `seed`.

    >>> tt.random.set_seed(1)
    >>> tt.random.normal([2]).shape
    TensorShape([2])
    """
    dtype = as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(f"random.normal makes floating tensors, not {dtype.name}")
    return stateless_normal(shape, _draw_seed(seed), mean, stddev, dtype)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=dtypes.float32, seed=None, name=None):
    """Normal values of `mean` and `stddev` within two standard deviations of the mean (as
    TensorFlow's, which draws again those beyond), the next draw of the stream of `seed`.

    >>> x = tt.random.truncated_normal([1000], stddev=0.5)
    >>> bool(tt.reduce_all(tt.abs(x) < 1.0))
    True
    """
    dtype = as_dtype(dtype)
    if not dtype.is_floating:
        raise TypeError(f"random.truncated_normal makes floating tensors, not {dtype.name}")
    return stateless_truncated_normal(shape, _draw_seed(seed), mean, stddev, dtype)


def uniform(shape, minval=0, maxval=None, dtype=dtypes.float32, seed=None, name=None):
    """Uniform values in [minval, maxval) (maxval 1 by default for floating dtypes; integer
    dtypes need it), the next draw of the stream of `seed`."""
    dtype = as_dtype(dtype)
    if dtype.is_integer and maxval is None:
        raise ValueError(f"random.uniform needs maxval for integer dtypes ({dtype.name})")
    return stateless_uniform(shape, _draw_seed(seed), minval, maxval, dtype)


def shuffle(value, seed=None, name=None):
    """`value` with its slices along the first axis in a random order: the order that sorts
    uniform draws of the stream of `seed` (eagerly and in a tt.function alike).

    >>> sorted(tt.random.shuffle(tt.constant([1, 2, 3])).numpy().tolist())
    [1, 2, 3]
    """
    value = convert_to_tensor(value)
    if value.ndim == 0:
        raise ValueError("random.shuffle: value must have a first axis to shuffle, not be a scalar")
    order = argsort(uniform([value.shape[0]], dtype=dtypes.float64, seed=seed))
    return gather(value, order)


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """`num_samples` class ids for each row of `logits` [batch, classes], each drawn with
    probability softmax(row) (a class whose logit is -inf never): [batch, num_samples], int64
    unless `dtype` says int32. Composed as the Gumbel-max trick, the argmax of the logits plus
    -log(-log(u)) of uniform draws u of the stream of `seed`; the stream is tracer's, not
    TensorFlow's.

    >>> tt.random.categorical(tt.math.log([[0.5, 0.5, 0.0]]), 4).shape
    TensorShape([1, 4])
    """

    def unit(shape, low, dtype):
        return uniform(shape, low, 1.0, dtype, seed=seed)

    return random_stateless.gumbel_max(logits, num_samples, dtype, unit, "random.categorical")


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
