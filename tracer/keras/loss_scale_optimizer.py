"""`tt.keras.mixed_precision.LossScaleOptimizer`: Keras 3's dynamic loss scaling.

In float16 a small gradient underflows to zero. Loss scaling multiplies the loss by a large
factor (`scale_loss`) before the gradient is taken, so that the float16 gradients inside the
model are that much larger, and divides the gradients by it again before the update. The
factor moves on its own, as Keras's does:

- a step whose gradients are all finite divides them by the scale and lets the wrapped
  optimizer update; after `dynamic_growth_steps` such steps in a row the scale doubles;
- a step with an infinite or NaN gradient (the scale was too large) changes no weight,
  and halves the scale: the wrapped optimizer does not run, so its `iterations` (which
  this optimizer's `iterations` is, as in Keras) does not count the step.

The choice is a `tt.cond`, so the skipped step skips the update in a `tt.function` too (fit's
compiled step), on the C backend and the interpreter alike. `Model.compile` wraps the
optimizer in one when the model's policy is `"mixed_float16"`, and `fit` scales the loss.

>>> sgd = tt.keras.optimizers.SGD(1.0)
>>> optimizer = tt.keras.mixed_precision.LossScaleOptimizer(sgd, initial_scale=8.0)
>>> w = tt.Variable([1.0])
>>> _ = optimizer.apply_gradients([(tt.constant([8.0]), w)])  # a gradient of the scaled loss
>>> w.numpy(), optimizer.dynamic_scale.numpy()
(array([0.], dtype=float32), np.float32(8.0))
>>> _ = optimizer.apply_gradients([(tt.constant([np.inf]), w)])  # skipped, scale halved
>>> w.numpy(), optimizer.dynamic_scale.numpy(), optimizer.iterations.numpy()
(array([0.], dtype=float32), np.float32(4.0), np.int64(1))
"""

from tracer import dtypes, optimizers
from tracer.context import outside_trace
from tracer.control.branches import cond
from tracer.indexed_slices import IndexedSlices
from tracer.ops import array_ops, math_ops
from tracer.ops.math_composites import reduce_all
from tracer.ops.structure_ops import stack
from tracer.optimizers import Optimizer, VariableList
from tracer.tensor import convert_to_tensor
from tracer.variable import Variable

# Keras's base-optimizer options a LossScaleOptimizer takes only at these values (an older
# Keras wrote them into its config): they belong to the wrapped optimizer
_INNER_OPTIONS = {
    "weight_decay": None,
    "clipnorm": None,
    "global_clipnorm": None,
    "clipvalue": None,
    "use_ema": False,
    "ema_momentum": 0.99,
    "ema_overwrite_frequency": None,
    "loss_scale_factor": None,
    "gradient_accumulation_steps": None,
}


class LossScaleOptimizer(Optimizer):
    """Keras's `LossScaleOptimizer(inner_optimizer, initial_scale=2**15,
    dynamic_growth_steps=2000)`: `scale_loss(loss)` before the gradient, then
    `apply_gradients` (or `apply`) with the gradients of the scaled loss.

    `learning_rate`, `iterations` and `finalize_variable_values` are the wrapped
    optimizer's; `dynamic_scale` (float32) and `step_counter` (the finite steps since the
    scale last changed) are variables, so compiled steps see them move."""

    def __init__(
        self, inner_optimizer, initial_scale=2.0**15, dynamic_growth_steps=2000, name=None, **kwargs
    ):
        if not kwargs.pop("dynamic", True):
            raise ValueError(
                "LossScaleOptimizer no longer supports `dynamic=False`. Instead, simply set "
                "`loss_scale_factor` directly on the `inner_optimizer`."
            )
        for option, off in _INNER_OPTIONS.items():
            if option in kwargs and kwargs.pop(option) != off:
                raise ValueError(
                    f"LossScaleOptimizer does not support `{option}`. Instead, set "
                    f"`{option}` on the `inner_optimizer`."
                )
        if kwargs:
            raise ValueError(
                f"LossScaleOptimizer does not support arguments: `{'`, `'.join(kwargs)}`."
            )
        if not isinstance(inner_optimizer, Optimizer):
            raise TypeError(
                "LossScaleOptimizer wraps an optimizer (tt.keras.optimizers.SGD(), ...), not "
                f"{inner_optimizer!r}"
            )
        super().__init__(learning_rate=0.0, name=name)
        self.inner_optimizer = inner_optimizer
        self.initial_scale = initial_scale
        self.dynamic_growth_steps = dynamic_growth_steps
        # NOTE: made now, not at the first update as Keras makes them, so that a step traced
        # before that update (fit's first) reads the scale that later updates change
        with outside_trace():
            self.step_counter = Variable(
                0, trainable=False, name=f"{self.name}/step_counter", dtype=dtypes.int64
            )
            self.dynamic_scale = Variable(
                float(initial_scale),
                trainable=False,
                name=f"{self.name}/dynamic_scale",
                dtype=dtypes.float32,
            )
        self.step_counter.path = f"{self.name}/step_counter"
        self.dynamic_scale.path = f"{self.name}/dynamic_scale"

    # --- the wrapped optimizer's, as Keras passes them through -------------------------------

    @property
    def iterations(self):
        """The wrapped optimizer's step count: a skipped step does not count."""
        inner = vars(self).get("inner_optimizer")
        # (the base class's __init__ names its own count before the wrapped one is set)
        return self._own_iterations if inner is None else inner.iterations

    @iterations.setter
    def iterations(self, variable):
        # the base class's own count, which Keras's wrapper also has and never moves
        self._own_iterations = variable

    @property
    def learning_rate(self):
        return self.inner_optimizer.learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        self.inner_optimizer.learning_rate = value

    @property
    def variables(self):
        """Keras's order: the wrapper's own (its step count and rate, which do not move, then
        `step_counter` and `dynamic_scale`), then the wrapped optimizer's."""
        own = [self._own_iterations, self._learning_rate, self.step_counter, self.dynamic_scale]
        return VariableList([*own, *self.inner_optimizer.variables])

    def get_slot(self, variable, name):
        return self.inner_optimizer.get_slot(variable, name)

    def finalize_variable_values(self, var_list):
        self.inner_optimizer.finalize_variable_values(var_list)

    def build(self, var_list):
        self.inner_optimizer.build(var_list)
        self._built_variables = list(var_list)

    # --- loss scaling --------------------------------------------------------------------------

    def scale_loss(self, loss):
        """`loss` times the current scale (in the loss's dtype), for the gradient."""
        loss = convert_to_tensor(loss)
        return loss * array_ops.cast(self.dynamic_scale, loss.dtype)

    def apply_gradients(self, grads_and_vars):
        """Unscale the gradients and update (finite gradients), or skip the update and
        halve the scale (an infinite or NaN one); returns `iterations`."""
        grads_and_vars = list(grads_and_vars)
        for grad, variable in grads_and_vars:
            if grad is not None and isinstance(variable, Variable):
                # slots made before the branches are traced (a branch may not make them)
                self.inner_optimizer._slots_of(variable)
        grads = [g for g, _ in grads_and_vars if g is not None]
        cond(
            _all_finite(grads),
            lambda: self._step(grads_and_vars),
            self._skip,
        )
        return self.iterations

    def _step(self, grads_and_vars):
        scale = self.dynamic_scale
        unscaled = [(None if g is None else _divided(g, scale), v) for g, v in grads_and_vars]
        self.inner_optimizer.apply_gradients(unscaled)
        grow = math_ops.equal(self.step_counter, self.dynamic_growth_steps - 1)
        self.dynamic_scale.assign(math_ops.where(grow, scale * 2.0, scale))
        self.step_counter.assign(math_ops.where(grow, 0, self.step_counter + 1))

    def _skip(self):
        self.step_counter.assign(0)
        self.dynamic_scale.assign(self.dynamic_scale * 0.5)

    # --- config --------------------------------------------------------------------------------

    def get_config(self):
        """Keras's: the name, the wrapped optimizer's entry, `initial_scale` and
        `dynamic_growth_steps`."""
        inner = self.inner_optimizer
        return {
            "name": self.name,
            "inner_optimizer": {
                "module": "keras.optimizers",
                "class_name": type(inner).__name__,
                "config": inner.get_config(),
                "registered_name": None,
            },
            "initial_scale": self.initial_scale,
            "dynamic_growth_steps": self.dynamic_growth_steps,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The optimizer of a `get_config` (Keras's or tracer's): the wrapped optimizer from
        its entry (one of tracer's optimizers, or one already made)."""
        config = dict(config)
        inner = config.pop("inner_optimizer")
        if isinstance(inner, dict):
            inner_class = getattr(optimizers, str(inner.get("class_name")), None)
            if not (isinstance(inner_class, type) and issubclass(inner_class, Optimizer)):
                raise ValueError(f"tracer has no optimizer {inner.get('class_name')!r}")
            inner = inner_class.from_config(inner.get("config") or {}, custom_objects)
        return cls(inner, **config)


def _all_finite(grads):
    """A boolean scalar: whether every element of every gradient is finite."""
    checks = [reduce_all(math_ops.is_finite(_values(g))) for g in grads]
    if not checks:
        return convert_to_tensor(True)
    return checks[0] if len(checks) == 1 else reduce_all(stack(checks))


def _values(grad):
    return grad.values if isinstance(grad, IndexedSlices) else convert_to_tensor(grad)


def _divided(grad, scale):
    """`grad` / `scale`, the scale in the gradient's dtype (an IndexedSlices stays one)."""
    if isinstance(grad, IndexedSlices):
        values = convert_to_tensor(grad.values)
        divided = values / array_ops.cast(scale, values.dtype)
        return IndexedSlices(divided, grad.indices, grad.dense_shape)
    grad = convert_to_tensor(grad)
    return grad / array_ops.cast(scale, grad.dtype)
