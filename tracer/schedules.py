"""`tt.keras.optimizers.schedules`: learning rates that follow the optimizer's step count, as
Keras's LearningRateSchedule classes define them.

An optimizer given a schedule as its `learning_rate` calls it with the number of updates
made before the current one (0 for the first, Keras's `iterations` at that moment), eagerly
or inside a compiled step, where the count is the optimizer's `iterations` Variable: each
call of the compiled step reads its current value. The rate is computed in float32, as
Keras computes it, and then cast to each variable's dtype.
"""

import math

from tracer import dtypes
from tracer.ops import array_ops, math_ops
from tracer.ops.convert import as_tensor
from tracer.tensor import convert_to_tensor


class LearningRateSchedule:
    """The base class: a schedule maps the step (an integer tensor) to a float32 rate."""

    def __call__(self, step):
        raise NotImplementedError(f"{type(self).__name__} must define __call__(step)")

    def get_config(self):
        raise NotImplementedError(f"{type(self).__name__} must define get_config()")

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _step(step):
    return array_ops.cast(as_tensor(step), dtypes.float32)


def _float(value):
    return convert_to_tensor(value, dtypes.float32)


class _RatioDecay(LearningRateSchedule):
    """A decay by the ratio step / decay_steps, floored where `staircase`: the constructor
    and config ExponentialDecay and InverseTimeDecay share."""

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None):
        if decay_steps <= 0:
            raise ValueError(f"decay_steps must be > 0, not {decay_steps}")
        self.initial_learning_rate = initial_learning_rate
        self.decay_steps, self.decay_rate = decay_steps, decay_rate
        # Keras's default name is the class's ("ExponentialDecay", "InverseTimeDecay")
        self.staircase, self.name = staircase, type(self).__name__ if name is None else name

    def _ratio(self, step):
        ratio = _step(step) / _float(self.decay_steps)
        return math_ops.floor(ratio) if self.staircase else ratio

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "decay_rate": self.decay_rate,
            "staircase": self.staircase,
            "name": self.name,
        }


class ExponentialDecay(_RatioDecay):
    """initial_learning_rate * decay_rate ** (step / decay_steps), the exponent floored where
    `staircase`."""

    def __call__(self, step):
        rate = math_ops.pow(_float(self.decay_rate), self._ratio(step))
        return _float(self.initial_learning_rate) * rate


class InverseTimeDecay(_RatioDecay):
    """initial_learning_rate / (1 + decay_rate * step / decay_steps), the ratio floored where
    `staircase`."""

    def __call__(self, step):
        denominator = 1.0 + _float(self.decay_rate) * self._ratio(step)
        return _float(self.initial_learning_rate) / denominator


class PiecewiseConstantDecay(LearningRateSchedule):
    """values[0] up to boundaries[0] (included), values[k] up to boundaries[k], values[-1]
    after the last boundary."""

    def __init__(self, boundaries, values, name="PiecewiseConstant"):
        if len(boundaries) != len(values) - 1:
            raise ValueError(
                f"PiecewiseConstantDecay needs one more value than boundaries: got "
                f"{len(boundaries)} boundaries and {len(values)} values"
            )
        self.boundaries, self.values, self.name = list(boundaries), list(values), name

    def __call__(self, step):
        step = _step(step)
        rate = _float(self.values[-1])
        for boundary, value in zip(reversed(self.boundaries), reversed(self.values[:-1])):
            rate = math_ops.where(step <= _float(boundary), _float(value), rate)
        return rate

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """(initial - end) * (1 - step / decay_steps) ** power + end, the step held at
    decay_steps; where `cycle`, decay_steps grows to the first multiple of it at or above
    the step."""

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        end_learning_rate=0.0001,
        power=1.0,
        cycle=False,
        name="PolynomialDecay",
    ):
        if decay_steps <= 0:
            raise ValueError(f"decay_steps must be > 0, not {decay_steps}")
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.end_learning_rate, self.power = end_learning_rate, power
        self.cycle, self.name = cycle, name

    def __call__(self, step):
        step = _step(step)
        steps = _float(self.decay_steps)
        if self.cycle:
            multiple = math_ops.ceil(step / steps)
            steps = steps * math_ops.where(step == 0.0, _float(1.0), multiple)
        else:
            step = math_ops.minimum(step, steps)
        end = _float(self.end_learning_rate)
        fraction = math_ops.pow(1.0 - step / steps, _float(self.power))
        return (_float(self.initial_learning_rate) - end) * fraction + end

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "end_learning_rate": self.end_learning_rate,
            "power": self.power,
            "cycle": self.cycle,
            "name": self.name,
        }


class CosineDecay(LearningRateSchedule):
    """A linear warmup from initial_learning_rate to warmup_target over warmup_steps (where
    warmup_target is given), then a cosine from the rate reached down to alpha times it over
    decay_steps, held there after."""

    def __init__(
        self,
        initial_learning_rate,
        decay_steps,
        alpha=0.0,
        name="CosineDecay",
        warmup_target=None,
        warmup_steps=0,
    ):
        if decay_steps <= 0:
            raise ValueError(f"decay_steps must be > 0, not {decay_steps}")
        self.initial_learning_rate, self.decay_steps = initial_learning_rate, decay_steps
        self.alpha, self.name = alpha, name
        self.warmup_target, self.warmup_steps = warmup_target, warmup_steps

    def __call__(self, step):
        step = _step(step)
        initial = _float(self.initial_learning_rate)
        if self.warmup_target is None:
            return self._decayed(step, initial)
        warmup_steps = _float(self.warmup_steps)
        target = _float(self.warmup_target)
        warming = initial + (target - initial) * (step / math_ops.maximum(warmup_steps, 1.0))
        decayed = self._decayed(step - warmup_steps, target)
        return math_ops.where(step < warmup_steps, warming, decayed)

    def _decayed(self, step, rate):
        progress = math_ops.minimum(step, _float(self.decay_steps)) / _float(self.decay_steps)
        cosine = 0.5 * (1.0 + math_ops.cos(_float(math.pi) * progress))
        return rate * ((1.0 - _float(self.alpha)) * cosine + _float(self.alpha))

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "decay_steps": self.decay_steps,
            "alpha": self.alpha,
            "name": self.name,
            "warmup_target": self.warmup_target,
            "warmup_steps": self.warmup_steps,
        }


class CosineDecayRestarts(LearningRateSchedule):
    """SGDR's cosine decay with warm restarts (Loshchilov & Hutter): a cosine from
    initial_learning_rate down to alpha times it over first_decay_steps, then again from
    the top over t_mul times as many steps, from m_mul times the last top, and so on.

    >>> rates = CosineDecayRestarts(0.1, 2, t_mul=1.0, m_mul=0.5)
    >>> [round(float(rates(step)), 3) for step in range(5)]
    [0.1, 0.05, 0.05, 0.025, 0.025]
    """

    def __init__(
        self,
        initial_learning_rate,
        first_decay_steps,
        t_mul=2.0,
        m_mul=1.0,
        alpha=0.0,
        name="SGDRDecay",
    ):
        if first_decay_steps <= 0:
            raise ValueError(f"first_decay_steps must be > 0, not {first_decay_steps}")
        self.initial_learning_rate, self.first_decay_steps = (
            initial_learning_rate,
            first_decay_steps,
        )
        self.t_mul, self.m_mul, self.alpha, self.name = t_mul, m_mul, alpha, name

    def __call__(self, step):
        fraction = _step(step) / _float(self.first_decay_steps)  # of the first period
        t_mul = _float(self.t_mul)
        # NOTE: t_mul is a Python number, so the branch is chosen here, at trace time; it is
        # Keras's test in float32
        if float(t_mul) == 1.0:
            restarts = math_ops.floor(fraction)
            fraction = fraction - restarts
        else:  # periods of lengths 1, t, t^2, ...: restart i starts at (1 - t^i) / (1 - t)
            restarts = math_ops.floor(
                math_ops.log(1.0 - fraction * (1.0 - t_mul)) / math_ops.log(t_mul)
            )
            done = (1.0 - math_ops.pow(t_mul, restarts)) / (1.0 - t_mul)
            fraction = (fraction - done) / math_ops.pow(t_mul, restarts)
        top = math_ops.pow(_float(self.m_mul), restarts)
        cosine = 0.5 * top * (1.0 + math_ops.cos(_float(math.pi) * fraction))
        alpha = _float(self.alpha)
        return _float(self.initial_learning_rate) * ((1.0 - alpha) * cosine + alpha)

    def get_config(self):
        return {
            "initial_learning_rate": self.initial_learning_rate,
            "first_decay_steps": self.first_decay_steps,
            "t_mul": self.t_mul,
            "m_mul": self.m_mul,
            "alpha": self.alpha,
            "name": self.name,
        }


def serialize(learning_rate_schedule):
    """Keras's entry for a schedule: its module, class name and config.

    >>> serialize(InverseTimeDecay(0.1, 5, 0.3))["class_name"]
    'InverseTimeDecay'
    """
    return {
        "module": "keras.optimizers.schedules",
        "class_name": type(learning_rate_schedule).__name__,
        "config": learning_rate_schedule.get_config(),
        "registered_name": None,
    }


def deserialize(config, custom_objects=None):
    """The schedule of a `serialize` entry: one of these classes, or of `custom_objects`
    (a user's subclass, by its class name)."""
    name = config.get("class_name") if isinstance(config, dict) else None
    cls = (custom_objects or {}).get(name) or globals().get(name)
    if not (isinstance(cls, type) and issubclass(cls, LearningRateSchedule)):
        raise ValueError(
            f"unknown learning rate schedule {name!r}: give its class in custom_objects"
        )
    return cls.from_config(config.get("config") or {})
