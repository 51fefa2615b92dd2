"""`rejection_resample(class_func, target_dist, initial_dist, seed)`: `(class, element)`
pairs whose classes come in the proportions of `target_dist`, as TensorFlow's.

Where the data's class distribution `p` (`initial_dist`, or else estimated from the classes
of the elements taken from both passes so far) differs from the target `t`, each pair is drawn from one of two passes over the
data: with probability `m = min_i t_i / p_i` (at most 1) the next element of the pass taken
as it is, else the next element of the other pass that a rejection test accepts, class `i`
with probability `(t_i / p_i - m) / max_j (t_j / p_j - m)`. The two give `m p + (1 - m) q`
with `q_i` proportional to `t_i - m p_i`: the target, while keeping as many elements as
plain rejection can. The pairs end when either pass ends. The draws are numpy's: with a
`seed`, the same ones at every pass and in every process (not TensorFlow's numbers).
"""

import numpy as np

from tracer.data.specs import UNKNOWN
from tracer.data.transforms import _TracedOrEager
from tracer.errors import InvalidArgumentError

_NONE = object()


class RejectionResample:
    def __init__(self, upstream, class_func, target_dist, initial_dist, seed):
        self._upstream = upstream
        self._target = _distribution(target_dist, "target_dist")
        self._initial = (
            None if initial_dist is None else _distribution(initial_dist, "initial_dist")
        )
        if self._initial is not None and len(self._initial) != len(self._target):
            raise InvalidArgumentError(
                None,
                None,
                f"rejection_resample: target_dist has {len(self._target)} classes and "
                f"initial_dist {len(self._initial)}",
            )
        self._seed = seed
        self._class = _TracedOrEager(class_func)
        self._class.prepare(upstream)
        if self._class._spec is not None:
            _check_class_spec(self._class._spec)

    def arrays(self):
        rng = np.random.default_rng(self._seed)  # (a seed: the same draws at every pass)
        original, candidates = self._upstream.arrays(), self._upstream.arrays()
        counts = np.zeros(len(self._target))
        while True:
            mixing, accept = _rates(self._target, self._initial, counts)
            if mixing > 0 and rng.random() < mixing:
                element = next(original, _NONE)
                if element is _NONE:
                    return
                label = self._class_of(element)
                counts[int(label)] += 1  # (both passes' classes make the estimate)
                yield (label, element)
                continue
            while True:
                element = next(candidates, _NONE)
                if element is _NONE:
                    return
                label = self._class_of(element)
                counts[int(label)] += 1
                if self._initial is None:  # (the estimate now counts this element too)
                    _, accept = _rates(self._target, None, counts)
                if rng.random() < accept[int(label)]:
                    yield (label, element)
                    break

    def _class_of(self, element):
        label = self._class.arrays_of(element)
        _check_class_spec(label)
        if not 0 <= int(label) < len(self._target):
            raise InvalidArgumentError(
                None,
                None,
                f"rejection_resample: class_func gave class {int(label)}, where target_dist "
                f"has {len(self._target)} classes",
            )
        return label

    def cardinality(self):
        return UNKNOWN

    def spec(self):
        return (self._class.spec(self._upstream), self._upstream.spec())


def _rates(target, initial, counts):
    """(m, acceptance of each class): the mixing probability and rejection test of the
    module's text, for the distribution `initial` or, where None, the one `counts` give."""
    seen = initial if initial is not None else counts / max(counts.sum(), 1.0)
    present = seen > 0
    if not present.any():
        return 0.0, np.ones_like(target)
    ratios = np.where(present, target / np.where(present, seen, 1.0), 0.0)
    mixing = min(1.0, float(ratios[present].min()))
    excess = np.where(present, ratios - mixing, 0.0)
    top = float(excess.max())
    accept = excess / top if top > 0 else np.where(present, 1.0, 0.0)
    return mixing, accept


def _distribution(values, name):
    dist = np.asarray(values, np.float64).reshape(-1)
    if dist.size == 0 or np.any(dist < 0) or not np.isfinite(dist).all() or dist.sum() <= 0:
        raise InvalidArgumentError(
            None, None, f"rejection_resample: {name} must be non-negative, not all zero: {values}"
        )
    return dist / dist.sum()


def _check_class_spec(label):
    """A TypeError where a class (an array, or its spec) is not an integer scalar."""
    dtype = getattr(label.dtype, "name", None) or np.dtype(label.dtype).name
    if not dtype.startswith(("int", "uint")) or tuple(label.shape or ()) != ():
        raise TypeError(
            "rejection_resample: class_func must return an integer scalar (the class "
            f"index), not a {dtype} tensor of shape {list(label.shape or ())}"
        )
