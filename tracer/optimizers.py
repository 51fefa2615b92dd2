"""`tt.optimizers`: SGD (momentum, Nesterov), Adam, AdamW, Adamax, Nadam, Adadelta, Lion, RMSprop,
Adagrad and Ftrl, as Keras defines them, each with Keras's `weight_decay`, `clipnorm`, `clipvalue`
and `global_clipnorm`, and its moving average of the variables (`use_ema`, `ema_momentum`,
`ema_overwrite_frequency`, `finalize_variable_values`).

Updates are written with tracer ops and `Variable.assign*`, so `apply_gradients` works
eagerly and inside `tt.function`, where the whole update runs in the compiled code, in place.
An update is not differentiated: no tape records an assign. Slot variables (momenta,
moments) are created on a variable's first update, outside any trace, as TensorFlow does;
the step count is a variable too (`iterations`), so compiled steps see it move, and so is
the learning rate (`optimizer.learning_rate = 0.01` or `.assign(0.01)`, as Keras's callbacks
do, reaches steps compiled before the change), or a schedule of the step count
(`tt.keras.optimizers.schedules`, tracer/schedules.py), worked out once an `apply_gradients`
from the updates made before it. A None
gradient leaves its variable alone; an IndexedSlices gradient updates only its rows under
SGD without momentum (`Variable.scatter_sub`), and is made dense otherwise, its square too
as Keras makes it: the sum of its slices' squares, row by row (a row gathered twice, as an
embedding's token met twice in a batch, adds g1^2 + g2^2 to Adam's, RMSprop's or Adagrad's
second moment, not (g1 + g2)^2).

Each update is written once, on an arithmetic it is given (`_Ops` or `_Arrays`): tracer's
ops and assigns wherever something records or compiles them (a trace, a tape, an
accumulator, a numerics check), and numpy on the variables' arrays where nothing does, the
usual eager step, which so runs a dozen numpy calls per variable instead of as many ops.
The two compute the same operations in the same order on the same dtypes, so they give the
same bits.
"""

import inspect
import re

import numpy as np

from codegen import array_math
from tracer import dtypes, schedules
from tracer.clipping import clip_by_global_norm, clip_by_norm, clip_by_value
from tracer.context import numerics, outside_trace, state
from tracer.indexed_slices import IndexedSlices
from tracer.ops import array_ops, math_ops
from tracer.tensor import convert_to_tensor
from tracer.variable import Variable

# Keras 3's optimizer options that tracer's do not take, at the values that leave them off,
# as its get_config lists them (after the moving average's options)
_KERAS_OFF = {
    "loss_scale_factor": None,
    "gradient_accumulation_steps": None,
}


def _auto_name(class_name):
    """Keras's default name of an optimizer: its class's name in snake case ("adam",
    "rm_sprop", "adam_w"), made unique in the process ("adam_1") as Keras's layers are."""
    from tracer.keras import naming  # (here: tracer.keras imports this module)

    snake = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", class_name)
    return naming.unique_layer_name(re.sub(r"([a-z])([A-Z])", r"\1_\2", snake).lower())


class VariableList(list):
    """An optimizer's variables: a list that also returns itself when called, so that both
    Keras 3's `optimizer.variables` and the older `optimizer.variables()` read it."""

    def __call__(self):
        return self


class Optimizer:
    # whether the update reads the gradient's square (given apart for IndexedSlices)
    _squares_gradients = False

    def __init__(self, learning_rate, name, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None):  # fmt: skip
        name = _auto_name(type(self).__name__) if name is None else name
        if sum(c is not None for c in (clipnorm, clipvalue, global_clipnorm)) > 1:
            raise ValueError(
                f"{name}: give one of clipnorm, clipvalue and global_clipnorm, not several"
            )
        if use_ema and not 0 <= ema_momentum <= 1:
            raise ValueError(f"{name}: ema_momentum must be in [0, 1], not {ema_momentum}")
        if (
            use_ema
            and ema_overwrite_frequency
            and not (isinstance(ema_overwrite_frequency, int) and ema_overwrite_frequency >= 1)
        ):
            raise ValueError(
                f"{name}: ema_overwrite_frequency must be an integer >= 1 or None, "
                f"not {ema_overwrite_frequency!r}"
            )
        self.name = name
        self.weight_decay = None if weight_decay is None else float(weight_decay)
        self.clipnorm = None if clipnorm is None else float(clipnorm)
        self.clipvalue = None if clipvalue is None else float(clipvalue)
        self.global_clipnorm = None if global_clipnorm is None else float(global_clipnorm)
        self.use_ema = bool(use_ema)
        self.ema_momentum = float(ema_momentum)
        self.ema_overwrite_frequency = ema_overwrite_frequency
        self.iterations = Variable(
            0, trainable=False, name=f"{name}/iterations", dtype=dtypes.int64
        )
        scheduled = isinstance(learning_rate, schedules.LearningRateSchedule)
        self._schedule = learning_rate if scheduled else None
        self._learning_rate = Variable(
            0.0 if scheduled else float(learning_rate),
            trainable=False,
            name=f"{name}/learning_rate",
            dtype=dtypes.float32,
        )
        # Keras 3's paths of these two (TensorFlow's names stay the variables' `name`)
        self.iterations.path = f"{name}/iteration"
        self._learning_rate.path = f"{name}/learning_rate"
        self._scheduled_rates = {}  # this apply_gradients' scheduled rate, by dtype
        self._slots = {}  # id(variable) -> (variable, {slot name: Variable})
        self._built_variables = None  # what `build` was given: `apply`'s default variables

    @property
    def learning_rate(self):
        """The learning rate, a float32 Variable (Keras's, of floatx), so that a compiled step
        reads its current value; float64 models step with its float32 rounding cast up, as
        Keras's do. With a schedule, the rate of the next update (a float32 tensor), as Keras
        gives it."""
        if self._schedule is not None:
            return self._schedule(self.iterations)
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value):
        if self._schedule is not None:
            raise TypeError(
                f"{self.name}'s learning rate is a {type(self._schedule).__name__} schedule, "
                "which cannot be set: make the optimizer with a float learning_rate to set it"
            )
        self._learning_rate.assign(float(value))

    def get_config(self):
        """Keras 3's config, its keys in Keras's order: the name, the learning rate (rounded
        to float32, as Keras keeps it, or the schedule's `serialize` entry), weight decay,
        clipping and the moving average's options, Keras's options tracer does not take at
        their "off" values, then the optimizer's own (`beta_1`, `momentum`, ...).

        >>> tt.keras.optimizers.SGD(0.1, momentum=0.9).get_config()["momentum"]
        0.9
        """
        if self._schedule is not None:
            learning_rate = schedules.serialize(self._schedule)
        else:
            learning_rate = float(np.float32(self._learning_rate.numpy()))
        config = {
            "name": self.name,
            "learning_rate": learning_rate,
            "weight_decay": self.weight_decay,
            "clipnorm": self.clipnorm,
            "global_clipnorm": self.global_clipnorm,
            "clipvalue": self.clipvalue,
            "use_ema": self.use_ema,
            "ema_momentum": self.ema_momentum,
            "ema_overwrite_frequency": self.ema_overwrite_frequency,
            **_KERAS_OFF,
        }
        for name in inspect.signature(type(self).__init__).parameters:
            if name != "self" and name not in config:
                config[name] = getattr(self, name)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The optimizer of a `get_config` (Keras's or tracer's); Keras's options tracer
        does not take must be off."""
        config = dict(config)
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = schedules.deserialize(config["learning_rate"], custom_objects)
        used = [f"{k}={v!r}" for k, v in config.items() if k in _KERAS_OFF and v != _KERAS_OFF[k]]
        if used:
            raise NotImplementedError(f"{cls.__name__}: tracer does not support {', '.join(used)}")
        return cls(**{k: v for k, v in config.items() if k not in _KERAS_OFF})

    def apply_gradients(self, grads_and_vars):
        """Apply one update for each (gradient, variable) pair; returns `iterations` (in a
        tt.compat.v1 graph, the op a Session.run fetches to apply them, as TensorFlow 1).
        With `use_ema`, the moving averages then follow (`_move_averages`), before the
        variables' constraints, as in Keras."""
        grads_and_vars = list(grads_and_vars)
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        for _, variable in pairs:
            if not isinstance(variable, Variable):
                raise TypeError(f"apply_gradients updates Variables, not {type(variable).__name__}")
        if self.use_ema:  # Keras averages every variable it is given, a None gradient's too
            for _, variable in grads_and_vars:
                if isinstance(variable, Variable):
                    self._slots_of(variable)
        self._scheduled_rates = {}
        if _nothing_records():
            _Arrays.assign_add(self.iterations, 1)
        else:
            self.iterations.assign_add(1)
        if self.clipnorm is not None or self.clipvalue is not None or self.global_clipnorm:
            pairs = list(zip(self._clipped([g for g, _ in pairs]), [v for _, v in pairs]))
        if self.weight_decay:
            self._decay([v for _, v in pairs])
        self._update_each(pairs)
        if self.use_ema and pairs:
            self._move_averages()
        for _, variable in pairs:  # Keras's: each constraint projects its updated variable
            if variable.constraint is not None:
                variable.assign(variable.constraint(variable))
        if state.trace is not None:  # in a TensorFlow 1 graph, the op that runs the updates
            assigned = [v for v in self.variables if v is not self._learning_rate]
            updates = state.trace.group([*assigned, *(v for _, v in pairs)])
            if updates is not None:
                return updates
        return self.iterations

    def build(self, var_list):
        """Keras 3's: the variables `apply` updates where it is given none, their slots made
        now."""
        self._built_variables = list(var_list)
        for variable in self._built_variables:
            self._slots_of(variable)

    @property
    def built(self):
        return self._built_variables is not None

    def apply(self, grads, trainable_variables=None):
        """Keras 3's: one update of each variable by the gradient at the same position
        (`apply_gradients` of the pairs); without variables, those given to `build`."""
        if trainable_variables is None:
            if self._built_variables is None:
                raise ValueError(
                    f"{self.name}.apply: give trainable_variables, or call "
                    f"{self.name}.build(variables) first"
                )
            trainable_variables = self._built_variables
        grads, variables = list(grads), list(trainable_variables)
        if len(grads) != len(variables):
            raise ValueError(
                f"{self.name}.apply: {len(grads)} gradients for {len(variables)} variables; "
                "give one gradient for each variable"
            )
        self.apply_gradients(zip(grads, variables))

    def _move_averages(self):
        """Keras's moving average of each variable the optimizer has seen, after the update:
        average <- m average + (1 - m) x, where m is ema_momentum but 0 at the first update
        (which so sets the average to the variable); then, where `ema_overwrite_frequency`
        is set, every that many updates, each variable is set to its average."""
        on = _Arrays if _nothing_records() else _Ops
        entries = list(self._slots.values())
        for variable, slots in entries:
            average = slots["average"]
            # Keras's m is ema_momentum times (iterations != 0) in the variable's dtype, its
            # count before this update: t - 1 here, whose sign is that 0 or 1
            m = on.sign(self._step(variable.dtype, on) - 1) * self.ema_momentum
            on.assign(average, m * on.read(average) + (1 - m) * on.read(variable))
        if self.ema_overwrite_frequency:
            due = on.equal(on.read(self.iterations) % self.ema_overwrite_frequency, 0)
            for variable, slots in entries:
                on.assign(variable, on.where(due, on.read(slots["average"]), on.read(variable)))

    def finalize_variable_values(self, var_list):
        """Keras's end of training: with `use_ema`, each variable of `var_list` set to its
        moving average (Keras's `fit` calls this when it ends); without, nothing.

        >>> x = tt.Variable([1.0])
        >>> sgd = tt.keras.optimizers.SGD(0.5, use_ema=True, ema_momentum=0.5)
        >>> for _ in range(2):
        ...     _ = sgd.apply_gradients([(tt.constant([1.0]), x)])
        >>> sgd.finalize_variable_values([x])
        >>> x.numpy()  # the average of 0.5 (the first update's) and 0.0
        array([0.25], dtype=float32)
        """
        if not self.use_ema:
            return
        for variable in var_list:
            entry = self._slots.get(id(variable))
            if entry is None or entry[0] is not variable:
                raise ValueError(
                    f"{self.name}.finalize_variable_values: {variable.name} has no moving "
                    "average: the optimizer was never given it"
                )
            variable.assign(entry[1]["average"])

    def _clipped(self, grads):
        """The gradients clipped as Keras clips them: each to norm `clipnorm`, each element
        to [-clipvalue, clipvalue], or all together to global norm `global_clipnorm`; an
        IndexedSlices by its values, as Keras on TensorFlow (a row gathered twice is clipped
        before its two slices are added)."""
        grads = [g if isinstance(g, IndexedSlices) else convert_to_tensor(g) for g in grads]
        if self.global_clipnorm is not None:
            return clip_by_global_norm(grads, self.global_clipnorm)[0]
        if self.clipnorm is not None:
            return [clip_by_norm(g, self.clipnorm) for g in grads]
        return [clip_by_value(g, -self.clipvalue, self.clipvalue) for g in grads]

    def _decay(self, variables):
        """Keras's decoupled weight decay, before the update: x <- x - x * weight_decay * lr."""
        for variable in variables:
            decay = self._rate(variable.dtype) * self.weight_decay
            variable.assign_sub(variable * array_ops.cast(decay, variable.dtype))

    def _update_each(self, pairs):
        """The update of each variable by its gradient."""
        for grad, variable in pairs:
            if isinstance(grad, IndexedSlices):
                if self._sparse_update(grad, variable):
                    continue
                square = None
                if self._squares_gradients:
                    values = convert_to_tensor(grad.values, variable.dtype)
                    square = convert_to_tensor(
                        IndexedSlices(values * values, grad.indices, grad.shape)
                    )
                slots = self._slots_of(variable)
                self._dense_update(convert_to_tensor(grad), variable, slots, _Ops, square)
                continue
            grad = convert_to_tensor(grad)
            slots = self._slots_of(variable)
            if _unrecorded(grad, variable):
                self._dense_update(grad._value, variable, slots, _Arrays)
            else:
                self._dense_update(grad, variable, slots, _Ops)

    @property
    def variables(self):
        """The optimizer's variables in Keras 3's order: `iterations`, the learning rate
        (unless a schedule gives it: Keras has no variable then), then each variable's
        slots; a list, as Keras 3's property gives it, that may also be called, as
        TensorFlow's older optimizers' method was (`optimizer.variables()`)."""
        rate = [] if self._schedule is not None else [self._learning_rate]
        slots = [v for _, named in self._slots.values() for v in named.values()]
        return VariableList([self.iterations, *rate, *slots])

    def get_slot(self, variable, name):
        return self._slots_of(variable)[name]

    def _slots_of(self, variable):
        """The slots of `variable`, made on its first update (from constants, so that a
        function traced for the first time may make them)."""
        entry = self._slots.get(id(variable))
        if entry is None or entry[0] is not variable:
            named = {
                slot: Variable(
                    _filled(variable, start),
                    trainable=False,
                    name=f"{self.name}/{variable.name.split(':')[0]}/{slot}",
                )
                for slot, start in self._every_slot_start().items()
            }
            entry = self._slots[id(variable)] = (variable, named)
        return entry[1]

    def _slot_starts(self):
        """{slot name: its first value} of each variable, for the update."""
        return {}

    def _every_slot_start(self):
        """{slot name: its first value} of each variable: with `use_ema`, its moving average
        first ("average", zeros until the first update sets it, as Keras's), then the
        update's slots."""
        if self.use_ema:
            return {"average": 0.0, **self._slot_starts()}
        return self._slot_starts()

    def _sparse_update(self, grad, variable):
        return False

    def _rate(self, dtype):
        """The learning rate in `dtype` (eagerly a numpy scalar: no op to run)."""
        if self._schedule is not None:
            return self._scheduled_rate(dtype)
        if state.trace is None:
            return self._learning_rate.numpy().astype(dtype.as_numpy_dtype)
        if dtype == self._learning_rate.dtype:
            return self._learning_rate
        return array_ops.cast(self._learning_rate, dtype)

    def _scheduled_rate(self, dtype):
        """The schedule's rate of this update in `dtype`, from the updates made before it
        (`iterations` already counts this one), worked out once an apply_gradients."""
        rate = self._scheduled_rates.get(dtype)
        if rate is None:
            rate = array_ops.cast(self._schedule(self.iterations - 1), dtype)
            if state.trace is None:
                rate = rate.numpy()
            self._scheduled_rates[dtype] = rate
        return rate

    def _step(self, dtype, on):
        """The number of this update (1 for the first), in `dtype`."""
        return on.cast(self.iterations, dtype)


class _Ops:
    """The arithmetic of an update as tracer ops and assigns: traced, recorded, checked."""

    sqrt = staticmethod(math_ops.sqrt)
    pow = staticmethod(math_ops.pow)
    maximum = staticmethod(math_ops.maximum)
    minimum = staticmethod(math_ops.minimum)
    sign = staticmethod(math_ops.sign)
    equal = staticmethod(math_ops.equal)
    where = staticmethod(math_ops.where)
    cast = staticmethod(array_ops.cast)

    @staticmethod
    def read(variable):
        return variable

    @staticmethod
    def assign(variable, value):
        variable.assign(value)

    @staticmethod
    def assign_add(variable, delta):
        variable.assign_add(delta)

    @staticmethod
    def assign_sub(variable, delta):
        variable.assign_sub(delta)


class _Arrays:
    """The arithmetic of an update on the variables' numpy arrays, for an eager update that
    nothing records (`_unrecorded`): each assign gives the variable a new array of its own,
    as `Variable.assign` does eagerly."""

    sqrt = staticmethod(np.sqrt)
    pow = staticmethod(np.power)
    maximum = staticmethod(np.maximum)
    minimum = staticmethod(np.minimum)
    sign = staticmethod(np.sign)
    equal = staticmethod(np.equal)
    where = staticmethod(np.where)

    @staticmethod
    def cast(variable, dtype):
        return variable._value.astype(dtype.as_numpy_dtype)

    @staticmethod
    def read(variable):
        return variable._value

    @staticmethod
    def assign(variable, value):
        variable._value = np.array(value, dtype=variable._value.dtype)
        variable._shared = False

    @staticmethod
    def replace(variable, array):
        """Give `variable` the new array `array` (of its dtype and shape), made for it."""
        variable._value = array
        variable._shared = False

    @classmethod
    def assign_add(cls, variable, delta):
        cls.assign(variable, variable._value + delta)

    @classmethod
    def assign_sub(cls, variable, delta):
        cls.assign(variable, variable._value - delta)


def _unrecorded(grad, variable):
    """Whether the update of `variable` by the eager `grad` may run on numpy arrays: nothing
    traces, records or checks it, and the gradient has the variable's dtype and shape (else
    the ops raise their errors)."""
    value = grad._value
    return (
        _nothing_records()
        and value is not None
        and value.dtype == variable._value.dtype
        and value.shape == variable._value.shape
    )


def _nothing_records():
    """Whether no trace, tape, accumulator or numerics check sees an assign made now, nor
    refuses it: an update may then run on the variables' numpy arrays."""
    return (
        state.trace is None
        and not state.building
        and not state.tapes
        and not state.accumulators
        and state.refusing_assigns is None
        and not numerics.enabled
    )


def _filled(variable, value):
    """A maker (run outside any trace) of `value` in the variable's shape and dtype."""
    return lambda: array_ops.fill(variable.shape, convert_to_tensor(value, variable.dtype))


class SGD(Optimizer):
    """v <- momentum * v - lr * g; x <- x + v (Nesterov: x <- x + momentum * v - lr * g);
    without momentum, x <- x - lr * g."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None, name=None):  # fmt: skip
        super().__init__(learning_rate, name, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         use_ema, ema_momentum, ema_overwrite_frequency)  # fmt: skip
        self.momentum = float(momentum)
        self.nesterov = bool(nesterov)

    def _slot_starts(self):
        return {"momentum": 0.0} if self.momentum else {}

    def _dense_update(self, grad, variable, slots, on, square=None):
        rate = self._rate(variable.dtype)
        if not self.momentum:
            on.assign_sub(variable, grad * rate)
            return
        velocity = slots["momentum"]
        on.assign(velocity, on.read(velocity) * self.momentum - grad * rate)
        if self.nesterov:
            on.assign_add(variable, on.read(velocity) * self.momentum - grad * rate)
        else:
            on.assign_add(variable, on.read(velocity))

    def _sparse_update(self, grad, variable):
        if self.momentum:
            return False
        rows = convert_to_tensor(grad.values, variable.dtype) * self._rate(variable.dtype)
        variable.scatter_sub(IndexedSlices(rows, grad.indices, variable.shape))
        return True


class Adam(Optimizer):
    """Adam (Kingma & Ba) with Keras's defaults and its epsilon placement:
    m <- b1 m + (1 - b1) g; v <- b2 v + (1 - b2) g^2;
    x <- x - lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + epsilon).
    With `amsgrad`, Keras's AMSGrad: the largest v so far, v_hat <- max(v_hat, v), in v's
    place in the step."""

    _squares_gradients = True

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None,
                 name=None):  # fmt: skip
        super().__init__(learning_rate, name, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         use_ema, ema_momentum, ema_overwrite_frequency)  # fmt: skip
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self.amsgrad = bool(amsgrad)

    def _slot_starts(self):
        return {"m": 0.0, "v": 0.0, "v_hat": 0.0} if self.amsgrad else {"m": 0.0, "v": 0.0}

    def _update_each(self, pairs):
        """As Optimizer's; the eager updates on arrays (`_updated_in_one_pass`) are gathered
        and made together at the end, in one call of the installed kernel for each dtype."""
        self._update_scalars = {}  # what every variable's eager update shares, by numpy dtype
        self._one_pass = {}  # the updates gathered, by numpy dtype
        try:
            super()._update_each(pairs)
        finally:
            self._run_one_pass()

    def _dense_update(self, grad, variable, slots, on, square=None):
        m, v = slots["m"], slots["v"]
        t = self._step(variable.dtype, on)
        if (
            on is _Arrays
            and not self.amsgrad
            and self._updated_in_one_pass(grad, variable, m, v, t)
        ):
            return
        square = grad * grad if square is None else square
        on.assign(m, on.read(m) * self.beta_1 + grad * (1 - self.beta_1))
        on.assign(v, on.read(v) * self.beta_2 + square * (1 - self.beta_2))
        if self.amsgrad:
            v = slots["v_hat"]
            on.assign(v, on.maximum(on.read(v), on.read(slots["v"])))
        bias = self._bias(t, on)
        on.assign_sub(
            variable,
            self._rate(variable.dtype) * bias * on.read(m) / (on.sqrt(on.read(v)) + self.epsilon),
        )

    def _bias(self, t, on):
        return on.sqrt(1 - on.pow(self.beta_2, t)) / (1 - on.pow(self.beta_1, t))

    def _updated_in_one_pass(self, grad, variable, m, v, t):
        """The eager update on arrays as one loop in C over the variable and its slots (the
        kernel installed with tracer), with the bits of the operations above, gathered for
        `_run_one_pass`; False where that kernel is not there (a dtype other than float32 and
        float64). Its scalars are worked out once a call of apply_gradients for each dtype:
        the step and the rate are the same for every variable."""
        dtype = variable._value.dtype  # numpy's, whose hash is C's
        if array_math.adam_updates_run(dtype) is None:
            return False
        scalars = self._update_scalars.get(dtype)
        if scalars is None:
            step = self._rate(variable.dtype) * self._bias(t, _Arrays)
            beta_1, beta_2 = self.beta_1, self.beta_2
            values = [beta_1, 1 - beta_1, beta_2, 1 - beta_2, step, self.epsilon]
            self._update_scalars[dtype] = scalars = np.array(values, dtype)
        if any(entry[0] is variable for entry in self._one_pass.get(dtype, ())):
            self._run_one_pass()  # a variable given twice: its first update comes first
        self._one_pass.setdefault(dtype, []).append((variable, m, v, grad))
        return True

    def _run_one_pass(self):
        """The gathered updates, in one call of the installed kernel for each dtype; each
        variable and slot gets a new array, as an assign gives it."""
        gathered, self._one_pass = self._one_pass, {}
        for dtype, entries in gathered.items():
            arrays = [(x._value, m._value, v._value, grad) for x, m, v, grad in entries]
            updated = array_math.adam_updates(arrays, self._update_scalars[dtype])
            if updated is None:  # the kernel was there when they were gathered
                raise RuntimeError(f"Adam: the installed update of {dtype} refused them")
            for (x, m, v, _), values in zip(entries, updated):
                for target, value in zip((m, v, x), values):
                    _Arrays.replace(target, value)


class AdamW(Adam):
    """Adam with Keras's decoupled weight decay (`weight_decay`, 0.004 by default): each
    variable first scaled by 1 - weight_decay * lr, then Adam's update."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad=False, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None,
                 name=None):  # fmt: skip
        if weight_decay is None:
            raise ValueError("AdamW: weight_decay must be a number (the decay is AdamW's point)")
        super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, weight_decay, clipnorm,
                         clipvalue, global_clipnorm, use_ema, ema_momentum,
                         ema_overwrite_frequency, name)  # fmt: skip


class Adamax(Optimizer):
    """Keras's Adamax: m <- m + (g - m)(1 - b1); u <- max(b2 u, |g|);
    x <- x - lr m / ((1 - b1^t)(u + epsilon))."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None,
                 name=None):  # fmt: skip
        super().__init__(learning_rate, name, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         use_ema, ema_momentum, ema_overwrite_frequency)  # fmt: skip
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)

    def _slot_starts(self):
        return {"momentum": 0.0, "norm": 0.0}

    def _dense_update(self, grad, variable, slots, on, square=None):
        m, u = slots["momentum"], slots["norm"]
        t = self._step(variable.dtype, on)
        on.assign_add(m, (grad - on.read(m)) * (1 - self.beta_1))
        on.assign(u, on.maximum(on.read(u) * self.beta_2, abs(grad)))
        correction = 1 - on.pow(self.beta_1, t)
        rate = self._rate(variable.dtype)
        on.assign_sub(variable, rate * on.read(m) / (correction * (on.read(u) + self.epsilon)))


class Nadam(Optimizer):
    """Keras's Nadam: Adam with Nesterov momentum, whose momentum factors u_t = b1 (1 - 0.5
    0.96^t) multiply into one product shared by every variable (`u_product`, moved on once
    an apply_gradients, before the variables' updates): m <- m + (g - m)(1 - b1); v <- v +
    (g^2 - v)(1 - b2); m_hat = u_{t+1} m / (1 - u_product u_{t+1}) + (1 - u_t) g / (1 -
    u_product); x <- x - lr m_hat / (sqrt(v / (1 - b2^t)) + epsilon)."""

    _squares_gradients = True

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None,
                 name=None):  # fmt: skip
        super().__init__(learning_rate, name, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         use_ema, ema_momentum, ema_overwrite_frequency)  # fmt: skip
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self.u_product = None  # made in the first variable's dtype at the first update

    def _slot_starts(self):
        return {"momentum": 0.0, "velocity": 0.0}

    @property
    def variables(self):
        extra = [] if self.u_product is None else [self.u_product]
        return VariableList([*super().variables, *extra])

    def _update_each(self, pairs):
        if pairs:
            self._move_u_product(pairs[0][1].dtype)
        super()._update_each(pairs)

    def _factor(self, t, beta_1, on):
        """u_t of step `t`, from beta_1 and the decay 0.96 in the variable's dtype."""
        return beta_1 * (1.0 - 0.5 * on.pow(type(beta_1)(0.96), t))

    def _move_u_product(self, dtype):
        if self.u_product is None:
            self._restore_u_product(np.array(1.0, dtype.as_numpy_dtype))
        on = _Arrays if _nothing_records() else _Ops
        t = self._step(self.u_product.dtype, on)
        # Keras moves it with its Python-float beta_1 and 0.96, unlike `_factor`'s casts
        on.assign(
            self.u_product, on.read(self.u_product) * self.beta_1 * (1.0 - 0.5 * on.pow(0.96, t))
        )

    def _restore_u_product(self, value):
        """Set the product (made where there is none yet, in `value`'s dtype)."""
        if self.u_product is None:
            with outside_trace():
                self.u_product = Variable(value, trainable=False, name=f"{self.name}/u_product")
        else:
            self.u_product.assign(np.asarray(value, self.u_product.dtype.as_numpy_dtype))

    def _dense_update(self, grad, variable, slots, on, square=None):
        # Keras's Nadam casts its betas to the variable's dtype first (Adam does not), so
        # 1 - beta_2 is float32's 1 - 0.999f, not 0.001 rounded
        scalar = variable.dtype.as_numpy_dtype
        beta_1, beta_2 = scalar(self.beta_1), scalar(self.beta_2)
        m, v = slots["momentum"], slots["velocity"]
        t = self._step(variable.dtype, on)
        square = grad * grad if square is None else square
        u_t, u_next = self._factor(t, beta_1, on), self._factor(t + 1, beta_1, on)
        u_product = on.cast(self.u_product, variable.dtype)
        on.assign_add(m, (grad - on.read(m)) * (1 - beta_1))
        on.assign_add(v, (square - on.read(v)) * (1 - beta_2))
        m_hat = u_next * on.read(m) / (1 - u_product * u_next) + (1 - u_t) * grad / (1 - u_product)
        v_hat = on.read(v) / (1 - on.pow(beta_2, t))
        rate = self._rate(variable.dtype)
        on.assign_sub(variable, m_hat * rate / (on.sqrt(v_hat) + self.epsilon))


class Adadelta(Optimizer):
    """Keras's Adadelta: a <- rho a + (1 - rho) g^2; d = -sqrt(b + epsilon) g / sqrt(a +
    epsilon); b <- rho b + (1 - rho) d^2; x <- x + lr d."""

    _squares_gradients = True

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None, name=None):  # fmt: skip
        super().__init__(learning_rate, name, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         use_ema, ema_momentum, ema_overwrite_frequency)  # fmt: skip
        self.rho, self.epsilon = float(rho), float(epsilon)

    def _slot_starts(self):
        return {"accumulated_grad": 0.0, "accumulated_delta_var": 0.0}

    def _dense_update(self, grad, variable, slots, on, square=None):
        grads, deltas = slots["accumulated_grad"], slots["accumulated_delta_var"]
        square = grad * grad if square is None else square
        on.assign(grads, on.read(grads) * self.rho + square * (1 - self.rho))
        delta = -(on.sqrt(on.read(deltas) + self.epsilon) * grad) / on.sqrt(
            on.read(grads) + self.epsilon
        )
        on.assign(deltas, on.read(deltas) * self.rho + delta * delta * (1 - self.rho))
        on.assign_add(variable, self._rate(variable.dtype) * delta)


class Lion(Optimizer):
    """Keras's Lion: x <- x - lr sign(b1 m + (1 - b1) g); m <- b2 m + (1 - b2) g."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, weight_decay=None,
                 clipnorm=None, clipvalue=None, global_clipnorm=None, use_ema=False,
                 ema_momentum=0.99, ema_overwrite_frequency=None, name=None):  # fmt: skip
        if not 0 < float(beta_1) <= 1:
            raise ValueError(f"Lion: beta_1 must be in (0, 1], not {beta_1}")
        super().__init__(learning_rate, name, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         use_ema, ema_momentum, ema_overwrite_frequency)  # fmt: skip
        self.beta_1, self.beta_2 = float(beta_1), float(beta_2)

    def _slot_starts(self):
        return {"momentum": 0.0}

    def _dense_update(self, grad, variable, slots, on, square=None):
        m = slots["momentum"]
        step = on.sign(on.read(m) * self.beta_1 + grad * (1.0 - self.beta_1))
        on.assign_sub(variable, self._rate(variable.dtype) * step)
        on.assign(m, on.read(m) * self.beta_2 + grad * (1.0 - self.beta_2))


class RMSprop(Optimizer):
    """Keras's RMSprop: v <- rho v + (1 - rho) g^2 (centered: minus the square of the mean
    gradient); step = lr g / sqrt(v + epsilon), taken with momentum when it is given."""

    _squares_gradients = True

    def __init__(
        self,
        learning_rate=0.001,
        rho=0.9,
        momentum=0.0,
        epsilon=1e-7,
        centered=False,
        weight_decay=None,
        clipnorm=None,
        clipvalue=None,
        global_clipnorm=None,
        use_ema=False,
        ema_momentum=0.99,
        ema_overwrite_frequency=None,
        name=None,
    ):
        super().__init__(learning_rate, name, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         use_ema, ema_momentum, ema_overwrite_frequency)  # fmt: skip
        self.rho, self.momentum, self.epsilon = float(rho), float(momentum), float(epsilon)
        self.centered = bool(centered)

    def _slot_starts(self):
        starts = {"velocity": 0.0}
        if self.momentum:
            starts["momentum"] = 0.0
        if self.centered:
            starts["average_gradient"] = 0.0
        return starts

    def _dense_update(self, grad, variable, slots, on, square=None):
        velocity = slots["velocity"]
        square = grad * grad if square is None else square
        on.assign(velocity, on.read(velocity) * self.rho + square * (1 - self.rho))
        denominator = on.read(velocity) + self.epsilon
        if self.centered:
            average = slots["average_gradient"]
            on.assign(average, on.read(average) * self.rho + grad * (1 - self.rho))
            denominator = denominator - on.read(average) * on.read(average)
        increment = grad * self._rate(variable.dtype) / on.sqrt(denominator)
        if self.momentum:
            momentum = slots["momentum"]
            on.assign(momentum, on.read(momentum) * self.momentum + increment)
            increment = on.read(momentum)
        on.assign_sub(variable, increment)


class Adagrad(Optimizer):
    """Keras's Adagrad: a <- a + g^2 (from initial_accumulator_value); x <- x - lr g / sqrt(a + epsilon)."""

    _squares_gradients = True

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 weight_decay=None, clipnorm=None, clipvalue=None, global_clipnorm=None,
                 use_ema=False, ema_momentum=0.99, ema_overwrite_frequency=None,
                 name=None):  # fmt: skip
        super().__init__(learning_rate, name, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         use_ema, ema_momentum, ema_overwrite_frequency)  # fmt: skip
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.epsilon = float(epsilon)

    def _slot_starts(self):
        return {"accumulator": self.initial_accumulator_value}

    def _dense_update(self, grad, variable, slots, on, square=None):
        accumulator = slots["accumulator"]
        on.assign_add(accumulator, grad * grad if square is None else square)
        on.assign_sub(
            variable,
            grad * self._rate(variable.dtype) / on.sqrt(on.read(accumulator) + self.epsilon),
        )


class Ftrl(Optimizer):
    """Keras's FTRL-Proximal (McMahan et al., 2013), with its L2 shrinkage and `beta`:
    n' = n + g^2 (from initial_accumulator_value); with p = -learning_rate_power,
    z <- z + g + 2 l2_shrinkage x - (n'^p - n^p) / lr x;
    x <- (clip(z, -l1, l1) - z) / (n'^p / lr + 2 (l2 + beta / (2 lr))); n <- n'.
    An IndexedSlices gradient is made dense (its square the sum of its slices' squares), as
    Keras makes it: every row is set from its z and n, a row without a slice too."""

    _squares_gradients = True

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, l2_shrinkage_regularization_strength=0.0,
                 beta=0.0, weight_decay=None, clipnorm=None, clipvalue=None,
                 global_clipnorm=None, use_ema=False, ema_momentum=0.99,
                 ema_overwrite_frequency=None, name=None):  # fmt: skip
        super().__init__(learning_rate, name, weight_decay, clipnorm, clipvalue, global_clipnorm,
                         use_ema, ema_momentum, ema_overwrite_frequency)  # fmt: skip
        if learning_rate_power > 0:
            raise ValueError(f"Ftrl: learning_rate_power must be <= 0, not {learning_rate_power}")
        at_least_zero = {
            "initial_accumulator_value": initial_accumulator_value,
            "l1_regularization_strength": l1_regularization_strength,
            "l2_regularization_strength": l2_regularization_strength,
            "l2_shrinkage_regularization_strength": l2_shrinkage_regularization_strength,
        }
        for option, value in at_least_zero.items():
            if value < 0:
                raise ValueError(f"Ftrl: {option} must be >= 0, not {value}")
        self.learning_rate_power = float(learning_rate_power)
        self.initial_accumulator_value = float(initial_accumulator_value)
        self.l1_regularization_strength = float(l1_regularization_strength)
        self.l2_regularization_strength = float(l2_regularization_strength)
        self.l2_shrinkage_regularization_strength = float(l2_shrinkage_regularization_strength)
        self.beta = float(beta)

    def _slot_starts(self):
        return {"accumulator": self.initial_accumulator_value, "linear": 0.0}

    def _dense_update(self, grad, variable, slots, on, square=None):
        accumulator, linear = slots["accumulator"], slots["linear"]
        rate = self._rate(variable.dtype)
        power = -self.learning_rate_power
        l2 = self.l2_regularization_strength + self.beta / (2.0 * rate)
        shrunk = grad + 2 * self.l2_shrinkage_regularization_strength * on.read(variable)
        old = on.read(accumulator)
        new = old + (grad * grad if square is None else square)
        new_power = on.pow(new, power)
        step = (new_power - on.pow(old, power)) / rate * on.read(variable)
        on.assign_add(linear, shrunk - step)
        quadratic = new_power / rate + 2 * l2
        l1 = self.l1_regularization_strength
        clipped = on.maximum(on.minimum(on.read(linear), l1), -l1)
        on.assign(variable, (clipped - on.read(linear)) / quadratic)
        on.assign(accumulator, new)


_BY_NAME = {
    "sgd": SGD,
    "adam": Adam,
    "rmsprop": RMSprop,
    "adagrad": Adagrad,
    "adamw": AdamW,
    "adamax": Adamax,
    "nadam": Nadam,
    "adadelta": Adadelta,
    "lion": Lion,
    "ftrl": Ftrl,
}


def get(identifier):
    """An optimizer for `Model.compile`: an Optimizer as is, or a new one with Keras's
    defaults for its name ("adam", "sgd", "rmsprop", "adagrad", "adamw", "adamax", "nadam",
    "adadelta", "lion", "ftrl"; any case)."""
    if isinstance(identifier, Optimizer):
        return identifier
    found = _BY_NAME.get(identifier.lower()) if isinstance(identifier, str) else None
    if found is None:
        raise ValueError(
            f"unknown optimizer {identifier!r}; use an optimizer object or one of "
            f"{', '.join(repr(name) for name in _BY_NAME)}"
        )
    return found()
