"""`tt.debugging.enable_check_numerics`: find the first op that makes a NaN or an Inf.

    tt.debugging.enable_check_numerics()
    y = tt.math.log(x)   # NumericsError: log made NaN in the forward pass at model.py:3;
                         # its inputs held none, so this op made it.

Every op's result is checked, eagerly, in the backward pass (which names the forward line
it differentiates) and in compiled functions (which, while checking is on, run op by op
on the interpreter so that each op can be named). Off by default, and free when off.
"""

import numpy as np

from tracer.context import numerics
from tracer.errors import InvalidArgumentError, mixed
from tracer.ir.source import format_location


class NumericsError(mixed(InvalidArgumentError, FloatingPointError)):
    """An op's result held NaN or Inf while check_numerics was on: TensorFlow's
    InvalidArgumentError (as `tf.debugging.enable_check_numerics` raises), and a
    FloatingPointError (as tracer raised before)."""

    def __reduce__(self):
        return type(self), self.args


def enable_check_numerics():
    numerics.enabled = True


def disable_check_numerics():
    numerics.enabled = False


def check_numerics(op, inputs, out, location):
    """Raise NumericsError if `out` holds NaN or Inf; say which input already did."""
    if not _inexact(out._value) or np.all(np.isfinite(out._value)):
        return
    kind = _describe(out._value)
    phase = (
        "the backward pass" if location is not None and len(location) > 2 else "the forward pass"
    )
    where = format_location(location) or "an unknown line"
    bad = [
        k for k, t in enumerate(inputs) if _inexact(t._value) and not np.all(np.isfinite(t._value))
    ]
    if bad:
        cause = f"its input {bad[0]} already held {_describe(inputs[bad[0]]._value)}, so it came from earlier"
    else:
        cause = "its inputs held none, so this op made it"
    raise NumericsError(f"{op.name} made {kind} in {phase} at {where}; {cause}")


def _inexact(value):
    """Whether `value` is a floating array (a node with several results holds a tuple: its
    results are checked where `get` takes them out)."""
    return (
        value is not None and not isinstance(value, tuple) and np.asarray(value).dtype.kind in "fc"
    )


def _describe(value):
    value = np.asarray(value)
    has_nan = bool(np.any(np.isnan(value)))
    has_inf = bool(np.any(np.isinf(value)))
    return " and ".join(name for name, present in (("NaN", has_nan), ("Inf", has_inf)) if present)
