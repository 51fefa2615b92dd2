"""`tt.keras.mixed_precision`: Keras 3's dtype policies, for the policies tracer runs.

A policy names the dtype a layer makes its variables in and the dtype it computes in.
tracer's layers compute in their variables' dtype, so a float policy (`"float32"`,
`"float64"`, `"float16"`, `"bfloat16"`) works: `set_global_policy("float64")` makes the
layers made afterwards float64, as Keras's does. Mixed precision (`"mixed_float16"`,
`"mixed_bfloat16"`: float16 computation on float32 variables, with loss scaling) is a
speed-up for GPUs and TPUs that tracer does not have: such a policy can be made and
printed, but setting it, giving it to a layer, or making a `LossScaleOptimizer` raises
NotImplementedError saying so.

>>> tt.keras.mixed_precision.Policy("mixed_float16").compute_dtype
'float16'
"""

from tracer.keras import backend

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
    """`policy`'s dtype (a name) where tracer runs it; NotImplementedError for a mixed one."""
    if policy.name in _MIXED:
        raise NotImplementedError(
            f"tracer does not support mixed precision (the policy '{policy.name}'): its "
            "layers compute in their variables' dtype. Use a float policy such as 'float32' "
            f"(or '{policy.compute_dtype}' for layers that keep their variables in it too)"
        )
    return policy.variable_dtype


class LossScaleOptimizer:
    """Keras's loss-scaling wrapper of an optimizer, for mixed precision: not in tracer."""

    def __init__(self, inner_optimizer, *args, **kwargs):
        raise NotImplementedError(
            "tracer does not support mixed precision, so it has no LossScaleOptimizer "
            "(loss scaling keeps float16 gradients from underflowing); use the optimizer "
            "itself"
        )


__all__ = [
    "DTypePolicy",
    "LossScaleOptimizer",
    "Policy",
    "global_policy",
    "set_global_policy",
]
