"""`tt.keras.regularizers`: penalties on a layer's weights, added to the training loss.

A layer given `kernel_regularizer=tt.keras.regularizers.l2(1e-4)` (any `<weight>_regularizer`
of Keras's) adds `regularizer(weight)` to its `losses` each time they are read, and
`Model.fit` minimizes the compiled loss plus the sum of `model.losses`, as Keras does;
`activity_regularizer` penalizes a layer's outputs (divided by the batch size) at each call.

>>> float(tt.keras.regularizers.L2(0.5)(tt.constant([1.0, 2.0])))
2.5
"""

from tracer.keras.lookup import Configurable, instance_or_callable
from tracer.ops import array_ops, math_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensor


class Regularizer(Configurable):
    """Keras's base class: subclasses give `__call__(weight)`, a scalar penalty."""

    def __call__(self, x):
        return 0.0


class L1L2(Regularizer):
    """`l1 * sum(abs(x)) + l2 * sum(square(x))`, each term only where its factor is not 0."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _factor(l1, "l1")
        self.l2 = _factor(l2, "l2")

    def __call__(self, x):
        penalty = None
        if self.l1:
            penalty = _l1(self.l1, x)
        if self.l2:
            term = _l2(self.l2, x)
            penalty = term if penalty is None else penalty + term
        return array_ops.zeros((), as_tensor(x).dtype) if penalty is None else penalty

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(Regularizer):
    """`l1 * sum(abs(x))`."""

    def __init__(self, l1=0.01):
        self.l1 = _factor(l1, "l1")

    def __call__(self, x):
        return _l1(self.l1, x)

    def get_config(self):
        return {"l1": self.l1}


class L2(Regularizer):
    """`l2 * sum(square(x))` (no 1/2: Keras's, not `tf.nn.l2_loss`'s)."""

    def __init__(self, l2=0.01):
        self.l2 = _factor(l2, "l2")

    def __call__(self, x):
        return _l2(self.l2, x)

    def get_config(self):
        return {"l2": self.l2}


def _l1(factor, x):
    x = as_tensor(x)
    return math_ops.multiply(reduce_sum(math_ops.abs(x)), array_ops.cast(factor, x.dtype))


def _l2(factor, x):
    x = as_tensor(x)
    return math_ops.multiply(reduce_sum(math_ops.square(x)), array_ops.cast(factor, x.dtype))


def _factor(value, name):
    value = 0.0 if value is None else value
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"{name} must be a non-negative number, not {value!r}")
    return float(value)


# Keras's lower-case names are the classes themselves
l1, l2, l1_l2 = L1, L2, L1L2

_BY_NAME = {
    "L1": L1,
    "L2": L2,
    "L1L2": L1L2,
    "l1": L1,
    "l2": L2,
    "l1_l2": lambda: L1L2(l1=0.01, l2=0.01),  # Keras's: the name gives both factors 0.01
}


def get(identifier):
    """A regularizer for a Keras name ("l1", "l2", "l1_l2"), a config dict
    ({"class_name": "L2", "config": {"l2": 0.01}}), a class (instantiated), a callable (as
    is) or None."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        cls = _BY_NAME.get(identifier.get("class_name"))
        if not isinstance(cls, type):
            raise ValueError(f"unknown regularizer {identifier!r}")
        return cls.from_config(identifier.get("config") or {})
    if isinstance(identifier, str):
        found = _BY_NAME.get(identifier)
        if found is not None and not isinstance(found, type):
            return found()
    else:
        found = identifier
    return instance_or_callable(
        found, identifier, [n for n in _BY_NAME if n[0].islower()], "regularizer"
    )


def serialize(regularizer):
    """Keras's config entry of a regularizer of this module (None for None)."""
    if regularizer is None:
        return None
    if type(regularizer) not in (L1, L2, L1L2):
        raise ValueError(f"regularizer {regularizer!r} has no Keras config")
    return {
        "module": "keras.regularizers",
        "class_name": type(regularizer).__name__,
        "config": regularizer.get_config(),
        "registered_name": None,
    }
