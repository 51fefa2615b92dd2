"""The numpy core of TensorFlow's candidate samplers (`tt.random.log_uniform_candidate_sampler`
and `uniform_candidate_sampler`, in tracer/random.py): classes drawn from [0, range_max) and
the expected number of times each class is drawn, as TensorFlow's range_sampler.cc counts it.

The draws are numpy's (TensorFlow's stream is its own); the distributions, the rule for
`unique` (draw until `num_sampled` distinct classes, counting the tries) and the expected
counts are TensorFlow's.
"""

import math

import numpy as np

from tracer.errors import InvalidArgumentError


def log_uniform_probability(classes, range_max):
    """P(k) = log((k + 2) / (k + 1)) / log(range_max + 1): Zipf's law over ranks."""
    classes = np.asarray(classes, np.float64)
    return np.log((classes + 2.0) / (classes + 1.0)) / math.log(range_max + 1.0)


def uniform_probability(classes, range_max):
    return np.full(np.shape(classes), 1.0 / range_max)


def draw_log_uniform(rng, range_max):
    # TensorFlow's inverse CDF: floor(exp(u * log(range_max + 1))) - 1, folded into range
    return (int(math.exp(rng.random() * math.log(range_max + 1.0))) - 1) % range_max


def draw_uniform(rng, range_max):
    return int(rng.integers(range_max))


SAMPLERS = {
    "LogUniformCandidateSampler": (draw_log_uniform, log_uniform_probability),
    "UniformCandidateSampler": (draw_uniform, uniform_probability),
}


def sample(kind, rng, true_classes, num_true, num_sampled, unique, range_max):
    """(sampled int64 [num_sampled], true_expected float32 [batch, num_true],
    sampled_expected float32 [num_sampled]) for the sampler named `kind` of SAMPLERS.

    An expected count is p * num_sampled when every try was kept (always, without `unique`),
    else 1 - (1 - p) ** tries, the chance the class was drawn at least once.

    >>> rng = np.random.default_rng(0)
    >>> s, t, e = sample("UniformCandidateSampler", rng, np.array([[1]]), 1, 2, False, 4)
    >>> s.shape, t.tolist(), e.tolist()
    ((2,), [[0.5]], [0.5, 0.5])
    """
    true_classes = np.asarray(true_classes)
    if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
        raise InvalidArgumentError(
            None,
            None,
            f"{kind}: true_classes must have num_true columns, expected: {num_true} was: "
            f"{true_classes.shape[-1] if true_classes.ndim else 0}",
        )
    if unique and num_sampled > range_max:
        raise InvalidArgumentError(None, None, f"{kind}: Sampler's range is too small.")
    draw, probability = SAMPLERS[kind]
    sampled, seen, tries = [], set(), 0
    while len(sampled) < num_sampled:
        value = draw(rng, range_max)
        tries += 1
        if unique and value in seen:
            continue
        seen.add(value)
        sampled.append(value)

    def expected(classes):
        # NOTE: float32 from the probability on, as range_sampler.cc's float arithmetic
        p = probability(classes, range_max).astype(np.float32)
        if tries == num_sampled:
            return p * np.float32(num_sampled)
        return -np.expm1(np.float32(tries) * np.log1p(-p))

    return np.array(sampled, np.int64), expected(true_classes), expected(np.array(sampled))
