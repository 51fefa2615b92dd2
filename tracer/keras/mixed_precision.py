"""`tt.keras.mixed_precision`: Keras 3's dtype policies, mixed precision included.

A policy names the dtype a layer makes its variables in and the dtype it computes in. A float
policy (`"float32"`, `"float64"`, `"float16"`) is both: `set_global_policy("float64")`
makes the layers made afterwards float64, as Keras's does. `"mixed_float16"` is Keras's mixed
precision: the layers keep their variables in float32, cast their floating inputs to float16,
compute in float16 (their weights read as float16 in `call`: tracer/keras/autocast.py) and
return float16; `Model.compile` then wraps the optimizer in a `LossScaleOptimizer`
(tracer/keras/loss_scale_optimizer.py), whose scaled loss keeps small float16 gradients
from underflowing. tracer runs it on the CPU with numpy's float16, as TensorFlow's CPU
kernels do: correct, but no faster. `"mixed_bfloat16"` is refused with NotImplementedError
(tracer has no bfloat16 dtype, as numpy has none).

>>> tt.keras.mixed_precision.Policy("mixed_float16").compute_dtype
'float16'
"""

from tracer.keras import backend
from tracer.keras.loss_scale_optimizer import LossScaleOptimizer

_FLOATS = ("float16", "bfloat16", "float32", "float64")
_MIXED = {"mixed_float16": "float16", "mixed_bfloat16": "bfloat16"}


class DTypePolicy:
    """Keras's dtype policy: `name`, `compute_dtype` and `variable_dtype` (dtype names)."""

    def __init__(self, name=None):
        if name is None:
            name = global_policy().name
        if not isinstance(name, str) or (name not in _FLOATS and name not in _MIXED):
            raise ValueError(
                f"Cannot convert '{name}' to a mixed precision DTypePolicy. Valid policies "
                "include 'mixed_float16', 'mixed_bfloat16', and the name of any float dtype "
                "such as 'float32'."
            )
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def compute_dtype(self):
        return _MIXED.get(self._name, self._name)

    @property
    def variable_dtype(self):
        return "float32" if self._name in _MIXED else self._name

    def get_config(self):
        return {"name": self._name}

    def __eq__(self, other):
        return isinstance(other, DTypePolicy) and other.name == self._name

    def __hash__(self):
        return hash(self._name)

    def __repr__(self):
        return f'<DTypePolicy "{self._name}">'


Policy = DTypePolicy

_global = {"policy": None}


def global_policy():
    """The policy of layers made without a dtype: the one `set_global_policy` set, else
    `tt.keras.backend.floatx()`'s at the first call (float32 unless `set_floatx` set
    another), kept from then on as Keras keeps it: a later `set_floatx` does not change it."""
    if _global["policy"] is None:
        _global["policy"] = DTypePolicy(backend.floatx())
    return _global["policy"]


def set_global_policy(policy):
    """Make `policy` (a DTypePolicy or its name) the dtype of layers made from now on."""
    if isinstance(policy, str):
        policy = DTypePolicy(policy)
    if not isinstance(policy, DTypePolicy):
        raise ValueError(
            "Invalid `policy` argument. Expected the string name of a policy (such as "
            "'mixed_float16') or a `DTypePolicy` instance. Received: "
            f"policy={policy} (of type {type(policy)})"
        )
    supported(policy)
    _global["policy"] = policy


def supported(policy):
    """`policy` itself where tracer runs it; NotImplementedError naming it where it does not
    (`"mixed_bfloat16"`: tracer has no bfloat16 dtype)."""
    if policy.name == "mixed_bfloat16":
        raise NotImplementedError(
            "tracer does not support the mixed precision policy 'mixed_bfloat16': it has no "
            "bfloat16 dtype (numpy has none). Use 'mixed_float16' (float16 computation on "
            "float32 variables) or a float policy such as 'float32'"
        )
    return policy


# Keras 3's other names for them
dtype_policy = global_policy
set_dtype_policy = set_global_policy


def is_mixed(policy):
    """Whether `policy` computes in another dtype than its variables' (a mixed policy)."""
    return policy.name in _MIXED


__all__ = [
    "DTypePolicy",
    "LossScaleOptimizer",
    "Policy",
    "dtype_policy",
    "global_policy",
    "set_dtype_policy",
    "set_global_policy",
]
