"""`tt.keras.constraints`: projections applied to a weight after each optimizer update.

A layer given `kernel_constraint=tt.keras.constraints.MaxNorm(3)` (any `<weight>_constraint`
of Keras's) makes that weight a Variable whose `constraint` the optimizer applies after
updating it, as Keras's optimizers do (`tt.Variable(..., constraint=fn)` too).
"""

from tracer.keras.lookup import Configurable, instance_or_callable
from tracer.ops import math_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensor

_EPSILON = 1e-7  # Keras's backend.epsilon()


class Constraint(Configurable):
    """Keras's base class: subclasses give `__call__(weight)`, the projected weight."""

    def __call__(self, w):
        return w


class MinMaxNorm(Constraint):
    """Scales each slice along `axis` (the incoming weights of a unit: axis 0 of a Dense
    kernel) so that its norm moves `rate` of the way into [min_value, max_value]."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value, self.max_value, self.rate, self.axis = min_value, max_value, rate, axis

    def __call__(self, w):
        w = as_tensor(w)
        norms = _norms(w, self.axis)
        clipped = math_ops.clip_by_value(norms, self.min_value, self.max_value)
        desired = clipped * self.rate + norms * (1.0 - self.rate)
        return w * (desired / (norms + _EPSILON))

    def get_config(self):
        return {
            "min_value": self.min_value,
            "max_value": self.max_value,
            "rate": self.rate,
            "axis": self.axis,
        }


class MaxNorm(Constraint):
    """Scales each slice along `axis` whose norm exceeds `max_value` down to it."""

    def __init__(self, max_value=2, axis=0):
        self.max_value, self.axis = max_value, axis

    def __call__(self, w):
        w = as_tensor(w)
        norms = _norms(w, self.axis)
        desired = math_ops.clip_by_value(norms, 0.0, self.max_value)
        return w * (desired / (norms + _EPSILON))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class UnitNorm(Constraint):
    """Each slice along `axis` divided by its norm."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        w = as_tensor(w)
        return w / (_norms(w, self.axis) + _EPSILON)

    def get_config(self):
        return {"axis": self.axis}


class NonNeg(Constraint):
    """The negative values set to 0."""

    def __call__(self, w):
        return math_ops.maximum(w, 0.0)


def _norms(w, axis):
    w = as_tensor(w)
    return math_ops.sqrt(reduce_sum(math_ops.square(w), axis=axis, keepdims=True))


# Keras's lower-case names are the classes themselves
max_norm, min_max_norm, unit_norm, non_neg = MaxNorm, MinMaxNorm, UnitNorm, NonNeg

_CLASSES = (MaxNorm, MinMaxNorm, UnitNorm, NonNeg)
_BY_NAME = {
    **{cls.__name__: cls for cls in _CLASSES},
    "max_norm": MaxNorm,
    "min_max_norm": MinMaxNorm,
    "unit_norm": UnitNorm,
    "non_neg": NonNeg,
}


def get(identifier):
    """A constraint for a Keras name, a config dict, a class (instantiated), a callable (as
    is) or None."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(identifier.get("class_name"))
        if cls is None:
            raise ValueError(f"unknown constraint {identifier!r}")
        return cls.from_config(identifier.get("config") or {})
    found = _BY_NAME.get(identifier) if isinstance(identifier, str) else identifier
    return instance_or_callable(found, identifier, list(_BY_NAME), "constraint")


def serialize(constraint):
    """Keras's config entry of a constraint of this module (None for None)."""
    if constraint is None:
        return None
    if type(constraint) not in _CLASSES:
        raise ValueError(f"constraint {constraint!r} has no Keras config")
    return {
        "module": "keras.constraints",
        "class_name": type(constraint).__name__,
        "config": constraint.get_config(),
        "registered_name": None,
    }
