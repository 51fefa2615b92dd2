"""`tt.keras.layers.Layer`: a Module that builds its weights on its first call, as Keras's.

What a Keras user relies on: a unique snake-case name per process (`dense`, `dense_1`), weights
made by `add_weight` and named under the layer (`dense/kernel:0`, the layer's scope nested in
the caller's: a layer built inside another layer's call is `outer/dense/kernel:0`), floating
inputs cast to the layer's dtype (under a mixed policy, `"mixed_float16"`, to its compute
dtype, float16, with its float32 weights read as float16 during `call`:
tracer/keras/autocast.py), `training` passed to `call` only when `call` takes it (where
not given, the outer layer call's, as Keras 3's call context passes it down), and
weights listed as Keras 3 lists them, the layer's own before its sub-layers' (its trainable ones
first, then the others, each in the order they were made). Setting
`trainable` sets it on every weight below, so that tapes stop watching them too.
"""

import contextlib
import functools
import inspect
import re
import sys
import warnings

import numpy as np

from tracer.context import state
from tracer.dtypes import as_dtype
from tracer.keras import (
    activations,
    constraints,
    extensions,
    initializers,
    mixed_precision,
    regularizers,
)
from tracer.keras import autocast as autocast_module
from tracer.keras.layers import budget
from tracer.keras.naming import keras_named, unique_layer_name
from tracer.module import Module, name_scope
from tracer.ops import array_ops
from tracer.ops.array_ops import cast
from tracer.tensor import Tensor, TensorLike, convert_to_tensor
from tracer.train import deferred
from tracer.variable import Variable


def _layer_dtype(dtype):
    """(the dtype of a layer's weights, its mixed policy or None) from its `dtype` argument:
    a dtype, its name, a DTypePolicy or a policy's name (`"mixed_float16"`; the unsupported
    `"mixed_bfloat16"` raises NotImplementedError), or Keras's DTypePolicy entry (as
    get_config gives it); the global policy's for None."""
    if isinstance(dtype, dict):
        dtype = (dtype.get("config") or {}).get("name")
    if dtype is None:
        dtype = mixed_precision.global_policy()
    elif isinstance(dtype, str) and dtype.startswith("mixed_"):
        dtype = mixed_precision.DTypePolicy(dtype)
    if isinstance(dtype, mixed_precision.DTypePolicy):
        policy = mixed_precision.supported(dtype)
        mixed = policy if mixed_precision.is_mixed(policy) else None
        return as_dtype(policy.variable_dtype), mixed
    return as_dtype(dtype), None


def to_snake_case(name):
    """Keras's default layer name: `Dense` -> `dense`, `MaxPooling2D` -> `max_pooling2d`;
    a private class `_Block` -> `private__block` (a scope name cannot start with "_")."""
    name = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    name = re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()
    return "private" + name if name.startswith("_") else name


_NO_INPUTS = object()  # a call given its inputs by keyword


def _first_argument(layer, kwargs):
    """The value of the first parameter of `layer`'s call, taken out of `kwargs`."""
    name = _first_parameter(type(layer).call)
    if name is None or name not in kwargs:
        raise TypeError(
            f"layer {layer.name!r} ({type(layer).__name__}) was called without inputs: give "
            f"them first, or as {name or 'inputs'}="
        )
    return kwargs.pop(name)


@functools.cache
def _first_parameter(call):
    parameters = list(inspect.signature(call).parameters.values())[1:]
    if parameters and parameters[0].kind in (
        parameters[0].POSITIONAL_ONLY,
        parameters[0].POSITIONAL_OR_KEYWORD,
    ):
        return parameters[0].name
    return None


class Layer(Module):
    """Subclass it with `build(input_shape)` (make weights with `add_weight`) and
    `call(inputs)`; calling the layer builds it once, then calls `call`.

    >>> layer = tt.keras.layers.Dense(2, activation="relu")
    >>> layer(tt.constant([[1.0, 2.0, 3.0]])).shape
    TensorShape([1, 2])
    """

    _has_scope = True  # whether its weights' names are under its own (models: no)

    activity_regularizer = None  # a penalty on the outputs, added to `losses` at each call

    # Keras's: under a mixed policy, whether the layer casts its floating inputs to the
    # compute dtype and reads its weights in it (LayerNormalization and Embedding do not)
    autocast = True
    # a mixed policy's (set on the layer where it has one): the DTypePolicy, and the compute
    # dtype its call runs in; None for the others, which compute in `dtype`
    _dtype_policy = None
    _mixed_compute = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and not hasattr(build, "_marks_built"):
            cls.build = _marking_built(build)

    def __init__(
        self,
        trainable=True,
        name=None,
        dtype=None,
        activity_regularizer=None,
        autocast=True,
        **kwargs,
    ):
        # Keras's `input_shape=(4,)` / `input_dim=4`: a Sequential starting with this layer
        # builds at once for inputs of that shape (batch axis unknown)
        self._input_shape_argument = _input_shape_argument(kwargs)
        if self._input_shape_argument is not None:
            # Keras's place: the line of the layer class's super().__init__; for one of
            # tracer's layers without an __init__ of its own (Keras's has one), this one
            caller = sys._getframe(1).f_globals.get("__name__", "")
            own = type(self).__module__.startswith("tracer.") and not caller.startswith("tracer.")
            warnings.warn(
                "Do not pass an `input_shape`/`input_dim` argument to a layer. When using "
                "Sequential models, prefer using an `Input(shape)` object as the first layer "
                "in the model instead.",
                stacklevel=1 if own else 2,
            )
        # Keras's `kernel_regularizer=...`, `bias_constraint=...`: for the weight of that name
        self._weight_options = self._take_weight_options(kwargs)
        self._regularized = []  # (weight, regularizer) of each regularized weight
        self._added_losses = []  # add_loss's, since the last outermost call
        if activity_regularizer is not None:
            self.activity_regularizer = regularizers.get(activity_regularizer)
        if kwargs:
            raise TypeError(
                f"unexpected keyword arguments {sorted(kwargs)} for {type(self).__name__}"
            )
        self._own_weights = []  # first, so that a layer's own weights come before its sub-layers'
        # the ids of its weights made non-trainable (moving statistics): `trainable` leaves them
        self._fixed_weights = set()
        self._seed_variables = []  # random-number state: variables, but not weights
        self._name = name or unique_layer_name(to_snake_case(type(self).__name__))
        self._scope = name_scope(f"{state.name_scope}{self._name}/")
        self._trainable = bool(trainable)
        self._in_call = False
        self.dtype, policy = _layer_dtype(dtype)
        if policy is not None:
            self._dtype_policy = policy
            self._mixed_compute = as_dtype(policy.compute_dtype)
        if not autocast:
            self.autocast = False
        self.built = False
        self._output_shape = None

    def __call__(self, inputs=_NO_INPUTS, *args, **kwargs):
        # every eager layer call comes here: a Tensor is asked about first, and the scope is
        # entered and left inline (as `_enter_scope` and `_leave_scope` do)
        if inputs is _NO_INPUTS:  # `mha(query=q, value=v)`: the call's first argument by name
            inputs = _first_argument(self, kwargs)
        if type(inputs) is Tensor or _converts(inputs):
            if type(inputs) is not Tensor:
                inputs = convert_to_tensor(inputs)
            dtype = inputs.dtype  # (interned: one object per type)
            if (
                dtype is not self.dtype
                and dtype.is_floating
                and getattr(self.dtype, "is_floating", False)
                and self._mixed_compute is None
            ):
                inputs = _cast_keeping_mask(inputs, self.dtype)
        elif _holds_keras_tensors((inputs, args, kwargs)):
            return extensions.symbolic_call(self, inputs, *args, **kwargs)
        # the dtype its weights are read in during `call` (Keras's autocast scope): a mixed
        # policy's compute dtype, else their own (None)
        reading = self._mixed_compute
        if reading is not None:
            if self.autocast and self.dtype is not None:  # (a model leaves it to its layers)
                inputs, args, kwargs = _cast_floats((inputs, args, kwargs), reading)
            if not self.autocast:
                reading = None
        training_default, takes_training, takes_mask = _call_facts(type(self).call)
        depth = _call_depth[0]
        if depth == 0:
            _call_training[0] = None  # (the outermost call opens Keras's call context)
        # Keras 3's `training`: given, else an outer layer's call's, else the call's default;
        # what a layer resolves its inner layers inherit (Dropout in a subclassed model's fit)
        if "training" in kwargs:
            training = kwargs["training"]
        else:
            training = _call_training[0]
            if training is None:
                training = training_default
        _call_training[0] = training
        if not takes_training:
            if kwargs:
                kwargs.pop("training", None)
        elif training is not None:
            kwargs["training"] = training
        if self._in_call or not self._has_scope:  # `_enter_scope`
            outer = None
        else:
            self._in_call = True
            outer = state.name_scope
            state.name_scope = f"{outer}{self._name}/"
        if _losses_added[0] and depth == 0:
            self._clear_losses()  # Keras's: each outermost call starts afresh
        # in place, as the decrement: `depth + 1` would lose an increment that another thread
        # made since `depth` was read (a thread switches at the calls in between)
        _call_depth[0] += 1
        try:
            if not self.built:
                # the shape the layer was built for: what Keras files record
                self._build_input_shape = getattr(inputs, "shape", None)
                self._build_input_dtype = getattr(inputs, "dtype", None)
                self._build_on_first_call(self._build_input_shape)
                self.built = True
                if self in deferred.pending:
                    deferred.restore_built(self)
            previous_mask = inputs._keras_mask if type(inputs) is Tensor else _masks_of(inputs)
            if previous_mask is not None and takes_mask and kwargs.get("mask") is None:
                kwargs["mask"] = previous_mask  # Keras's: the mask an earlier layer gave
            if reading is not autocast_module.reading[0]:
                outputs = autocast_module.calling(self, reading, inputs, args, kwargs)
            elif args or kwargs:
                outputs = self.call(inputs, *args, **kwargs)
            else:
                outputs = self.call(inputs)
            if self.activity_regularizer is not None:
                _penalize_activity(self, outputs)
            # (supports_masking, a property, asked only where there is a mask to pass on or make)
            if previous_mask is not None or _makes_masks(type(self)):
                if self.supports_masking:
                    _set_output_masks(self, inputs, previous_mask, outputs)
                elif previous_mask is not None:
                    warnings.warn(
                        f"Layer '{self.name}' (of type {type(self).__name__}) was passed an "
                        "input with a mask attached to it. However, this layer does not support "
                        "masking and will therefore destroy the mask information. Downstream "
                        "layers will not see the mask.",
                        stacklevel=1,  # Keras's place: each layer's warning shows once
                    )
            if self._output_shape is None:  # what Model.summary() shows
                self._output_shape = _shapes_of(outputs)
            return outputs
        finally:
            _call_depth[0] -= 1
            if outer is not None:  # `_leave_scope`
                state.name_scope = outer
                self._in_call = False

    def build(self, input_shape):
        """Make the layer's weights for inputs of `input_shape` (none by default)."""
        self.built = True

    def _build_on_first_call(self, input_shape):
        """What the first call builds (a Sequential lets its layers build as they run)."""
        self.build(input_shape)

    def call(self, inputs, *args, **kwargs):
        return inputs

    def add_weight(
        self,
        name=None,
        shape=(),
        dtype=None,
        initializer=None,
        trainable=True,
        regularizer=None,
        constraint=None,
        autocast=True,
        **kwargs,
    ):
        """A new Variable of this layer, `name` under the layer's scope; the initializer is
        Glorot-uniform for floating weights and zeros otherwise, as in Keras. `regularizer`
        adds its penalty to `losses`; `constraint` projects the weight after each optimizer
        update (by default the layer's `<name>_regularizer` and `<name>_constraint`). Under a
        mixed policy a floating weight is read in the compute dtype during `call`, unless
        `autocast` is False (a BatchNormalization's statistics)."""
        options = self._weight_options.get(name, {})
        regularizer = regularizers.get(regularizer) or options.get("regularizer")
        constraint = constraints.get(constraint) or options.get("constraint")
        dtype = as_dtype(dtype or self.dtype)
        if initializer is None:
            initializer = "glorot_uniform" if dtype.is_floating else "zeros"
        initializer = initializers.get(initializer)
        shape = tuple(int(d) for d in shape)
        budget.claim(self, name or "Variable", shape, dtype)
        casts = autocast and self._mixed_compute is not None and dtype.is_floating
        variable_class = autocast_module.AutocastVariable if casts else Variable
        outer = self._enter_scope()
        try:
            variable = keras_named(
                variable_class(
                    lambda: initializer(shape, dtype=dtype),
                    trainable=trainable and self._trainable,
                    name=name or "Variable",
                    dtype=dtype,
                    constraint=constraint,
                )
            )
        finally:
            self._leave_scope(outer)
        # Keras 3's order, which get_weights and set_weights follow: the layer's trainable
        # weights, then its non-trainable ones, each in the order they were made
        fixed = self._fixed_weights
        position = sum(id(w) not in fixed for w in self._own_weights) if trainable else None
        self._own_weights.insert(len(self._own_weights) if position is None else position, variable)
        if not trainable:
            fixed.add(id(variable))
        if regularizer is not None:
            _weights_regularized[0] = True
            self._regularized.append((variable, regularizer))
        if self in deferred.pending:  # a restored value waits for it (explicit build() too)
            deferred.restore_built(self)
        return variable

    def add_loss(self, loss):
        """Add `loss` (a scalar, or a tensor to be summed) to `losses` until the next call
        of the outermost layer; `fit` minimizes it with the compiled loss, as Keras's."""
        _losses_added[0] = True
        self._added_losses.append(loss)

    @property
    def losses(self):
        """The losses of this layer and the layers below, in Keras 3's order: those
        `add_loss` and the activity regularizers added in the last call, layer by layer,
        then each regularized weight's penalty, made anew at each reading."""
        if not (_losses_added[0] or _weights_regularized[0]):
            return []  # (no walk of the layers: a model's step asks at every call)
        layers = (self, *self._sublayers())
        found = [loss for layer in layers for loss in layer._added_losses]
        for layer in layers:
            found.extend(regularizer(weight) for weight, regularizer in layer._regularized)
        return found

    def _clear_losses(self):
        for layer in (self, *self._sublayers()):
            layer._added_losses = []

    def _take_weight_options(self, kwargs):
        """{weight name: {"regularizer": ..., "constraint": ...}} from Keras's keyword
        arguments `<weight>_regularizer` and `<weight>_constraint` in `kwargs` (taken out of
        it); each is also an attribute of the layer, as Keras's."""
        options = {}
        for key in [k for k in kwargs if k.endswith(("_regularizer", "_constraint"))]:
            prefix, _, kind = key.rpartition("_")
            if prefix not in _WEIGHTS_BY_OPTION:
                continue  # left in kwargs: named as unexpected
            value = kwargs.pop(key)
            value = regularizers.get(value) if kind == "regularizer" else constraints.get(value)
            setattr(self, key, value)
            if value is not None:
                options.setdefault(_WEIGHTS_BY_OPTION[prefix], {})[kind] = value
        return options

    @property
    def supports_masking(self):
        """Whether the layer attaches `compute_mask`'s mask to its outputs: what it was set
        to, else (Keras 3's default) whether its class has a compute_mask of its own."""
        chosen = self.__dict__.get("_supports_masking")
        return _makes_masks(type(self)) if chosen is None else chosen

    @supports_masking.setter
    def supports_masking(self, value):
        self._supports_masking = bool(value)

    def compute_mask(self, inputs, previous_mask=None):
        """The mask of the outputs of a layer that supports masking: by default its inputs'
        (Keras's)."""
        return previous_mask

    def _base_config(self):
        """The arguments every layer's Keras config starts with (for `get_config`): its
        dtype as Keras's DTypePolicy entry."""
        return {"name": self.name, "trainable": self.trainable, "dtype": dtype_policy(self)}

    @classmethod
    def from_config(cls, config):
        """The layer `config` (what `get_config` gives) describes: `cls(**config)`."""
        return cls(**config)

    def get_config(self):
        """Keras's config of the layer: its name, trainable and dtype, then Keras's arguments
        of tracer's layer class it is (or derives from), or, for a layer of one's own that
        writes no config, each argument of its constructor held as the attribute of that
        name. A layer of one's own that writes its config starts from the first three alone,
        as in Keras (`dict(units=self.units, **super().get_config())`)."""
        config = self._base_config()
        keras_class = next(c for c in type(self).__mro__ if c.__module__.startswith("tracer."))
        saving = extensions.saving  # (tracer.keras imports it: its table knows tracer's layers)
        arguments = saving.layer_configs.table_arguments(self, keras_class) if saving else None
        if arguments is None:
            if (
                type(self).get_config is not Layer.get_config
                and keras_class.get_config is Layer.get_config
            ):
                return config
            arguments = attribute_arguments(self, leave_out=init_parameters(Layer))
            if "activation" in arguments:
                with contextlib.suppress(ValueError):  # a function of one's own stays itself
                    arguments["activation"] = activations.serialize(self.activation)
        return {**config, **{k: v for k, v in arguments.items() if k not in config}}

    def get_build_config(self):
        """Keras's record of how the layer was built, {"input_shape": [...]}, which a file
        keeps and `build_from_config` reads back (None when it is not built); a layer of one's
        own may record more, and read it back in its `build_from_config`."""
        shape = getattr(self, "_build_input_shape", None)
        if not self.built or shape is None:
            return None
        return {"input_shape": [None if d is None else int(d) for d in shape]}

    def build_from_config(self, config):
        """Build the layer as `config` (what `get_build_config` gave) says."""
        if config and config.get("input_shape") is not None:
            self.build(tuple(config["input_shape"]))
            self.built = True

    @property
    def dtype_policy(self):
        """Keras's DTypePolicy: the mixed one it was given, else that of the layer's dtype
        (float32 for a layer of strings or integers, as Keras's lookup layers have)."""
        if self._dtype_policy is not None:
            return self._dtype_policy
        dtype = self.dtype
        floating = getattr(dtype, "is_floating", False) and not dtype.is_complex
        return mixed_precision.DTypePolicy(dtype.name if floating else "float32")

    @property
    def compute_dtype(self):
        return self.dtype_policy.compute_dtype

    @property
    def variable_dtype(self):
        return self.dtype_policy.variable_dtype

    @property
    def _compute_dtype(self):
        """The tracer dtype the layer computes in (its outputs'): a mixed policy's compute
        dtype, else `dtype`; what a layer's own constants and states are made in."""
        return self._mixed_compute or self.dtype

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        value = bool(value)
        for layer in (self, *self._sublayers()):
            layer._trainable = value
            for variable in layer._own_weights:
                variable.trainable = value and id(variable) not in layer._fixed_weights

    @property
    def input(self):
        """The KerasTensors of the layer's first call in a functional model (one, or a
        list), as Keras 3 gives them: what a model of its inner values is made from."""
        return self._first_call("input_tensors", "input")

    @property
    def output(self):
        """The KerasTensors the layer's first call in a functional model gave (one, or a
        list): `tt.keras.Model(model.inputs, model.get_layer(name).output)` extracts them."""
        return self._first_call("outputs", "output")

    def _first_call(self, attribute, what):
        nodes = getattr(self, "_inbound_nodes", None)
        if not nodes:
            raise AttributeError(
                f"The layer {self.name} has never been called and thus has no defined {what}."
            )
        values = list(getattr(nodes[0], attribute))
        return values[0] if len(values) == 1 else values

    @property
    def variables(self):
        """Every weight of the layer and its sub-layers (a list, as Keras gives)."""
        return list(self._flatten(_is_variable))

    @property
    def weights(self):
        """The variables less random-number state (a Dropout's seed), as Keras 3's weights:
        what get_weights, set_weights, count_params and Keras's files hold."""
        seeds = {id(v) for layer in (self, *self._sublayers()) for v in layer._seed_variables}
        return [v for v in self.variables if id(v) not in seeds]

    @property
    def trainable_variables(self):
        return list(self._flatten(_is_trainable, descend=_trainable_layer))

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self):
        trainable = {id(v) for v in self.trainable_variables}
        return [v for v in self.variables if id(v) not in trainable]

    @property
    def non_trainable_weights(self):
        trainable = {id(v) for v in self.trainable_variables}
        return [v for v in self.weights if id(v) not in trainable]

    def get_weights(self):
        return [v.numpy() for v in self.weights]

    def set_weights(self, weights):
        ours = self.weights
        if len(weights) != len(ours):
            raise ValueError(
                f"set_weights: layer {self.name!r} has {len(ours)} weights, given {len(weights)}"
            )
        for variable, value in zip(ours, weights):
            variable.assign(np.asarray(value, dtype=variable.dtype.as_numpy_dtype))

    def count_params(self):
        return int(sum(np.prod(v.shape, dtype=np.int64) for v in self.weights))

    def _attributes(self):
        """Keras's order: the weights and layers in the order they were set, not by name;
        without the layer's own bookkeeping (`_BOOKKEEPING`), which holds neither."""
        return [value for key, value in vars(self).items() if key not in _BOOKKEEPING]

    def _sublayers(self):
        return [module for module in self.submodules if isinstance(module, Layer)]

    def _enter_scope(self):
        """Enter this layer's name scope, once however deeply its methods nest; returns what
        `_leave_scope` restores (None when already inside, or where the layer has no scope of
        its own: `_has_scope`)."""
        if self._in_call or not self._has_scope:
            return None
        self._in_call = True
        outer = state.name_scope
        state.name_scope = f"{outer}{self._name}/"
        return outer

    def _leave_scope(self, outer):
        if outer is not None:
            state.name_scope = outer
            self._in_call = False


# the prefix of a Keras option `<prefix>_regularizer` or `<prefix>_constraint` -> the name
# of the weight it is for (DepthwiseConv2D's depthwise kernel is its `kernel`)
_WEIGHTS_BY_OPTION = {
    "kernel": "kernel",
    "bias": "bias",
    "recurrent": "recurrent_kernel",
    "embeddings": "embeddings",
    "depthwise": "kernel",
    "beta": "beta",
    "gamma": "gamma",
    "alpha": "alpha",
}
# whether any layer has added a loss, and any weight has a regularizer, in this process:
# until then the outermost layer call clears nothing and `losses` walks no layer
_losses_added = [False]
_weights_regularized = [False]
_call_depth = [0]  # of layer calls in progress (the outermost is at 0)
_call_training = [None]  # the `training` of the layer calls in progress (Keras's call context)


def _penalize_activity(layer, outputs):
    """Add the activity regularizer's penalty of each output, per example (Keras's)."""
    for output in outputs if isinstance(outputs, (list, tuple)) else [outputs]:
        if isinstance(output, Tensor):
            penalty = layer.activity_regularizer(output)
            if output.ndim > 0:
                penalty = penalty / cast(array_ops.shape(output)[0], penalty.dtype)
            layer.add_loss(penalty)


def _set_output_masks(layer, inputs, previous_mask, outputs):
    """Attach `layer.compute_mask(inputs, previous_mask)` to the outputs (each its own
    where there are several) that have none yet, as Keras's layers do: the next layer whose
    call takes a mask is given it (an LSTM after an Embedding with `mask_zero` skips the
    padding)."""
    masks = layer.compute_mask(inputs, previous_mask)
    if masks is None:
        return
    flat_outputs = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    flat_masks = masks if isinstance(masks, (list, tuple)) else [masks]
    for output, mask in zip(flat_outputs, flat_masks):
        if mask is not None and type(output) is Tensor and output._keras_mask is None:
            output._keras_mask = mask


def _masks_of(inputs):
    """The masks of a list of tensors (a merge layer's inputs) as a list, None where none
    has one."""
    if not isinstance(inputs, (list, tuple)):
        return None
    masks = [getattr(t, "_keras_mask", None) for t in inputs]
    return masks if any(m is not None for m in masks) else None


@functools.cache
def _makes_masks(cls):
    """Whether the layer class has a compute_mask of its own (an Embedding's makes a mask
    where its inputs have none; the default only passes one on)."""
    return cls.compute_mask is not Layer.compute_mask


@functools.cache
def _takes_mask(call):
    return "mask" in inspect.signature(call).parameters


def _input_shape_argument(kwargs):
    """The input shape (batch axis first, None) that `input_dim` or else `input_shape` gave
    (Layer.__init__ warns, as Keras 3 does, that an `Input` should say it)."""
    dim = kwargs.pop("input_dim", None)
    # NOTE: as in Keras, an `input_shape` beside `input_dim` stays, an unknown argument
    shape = (dim,) if dim is not None else kwargs.pop("input_shape", None)
    if shape is None:
        return None
    return (None, *(None if d is None else int(d) for d in shape))


def _shapes_of(outputs):
    """The shape of an output, or the shapes of several in a list or tuple as they came (the
    summary writes them as Keras does: [...] or (...))."""
    if isinstance(outputs, (list, tuple)):
        return type(outputs)(tuple(getattr(o, "shape", ())) for o in outputs)
    return tuple(getattr(outputs, "shape", ()))


def _cast_keeping_mask(tensor, dtype):
    """`tensor` cast to `dtype`, with the Keras mask it carries (a cast makes a new tensor)."""
    mask = tensor._keras_mask
    tensor = cast(tensor, dtype)
    if mask is not None:
        tensor._keras_mask = mask
    return tensor


def _cast_floats(structure, dtype):
    """`structure` (lists, tuples and dicts of a layer's call arguments) with each floating
    Tensor of another dtype cast to `dtype`: a mixed-precision layer's inputs, as Keras
    converts them (integer and boolean tensors, masks included, are left alone)."""
    if type(structure) is Tensor:
        if structure.dtype.is_floating and structure.dtype is not dtype:
            return _cast_keeping_mask(structure, dtype)
        return structure
    if isinstance(structure, (list, tuple)) and not hasattr(structure, "_fields"):
        return type(structure)(_cast_floats(item, dtype) for item in structure)
    if type(structure) is dict:
        return {key: _cast_floats(value, dtype) for key, value in structure.items()}
    return structure


def _holds_keras_tensors(structure):
    """Whether `structure` holds a KerasTensor (tt.keras.Input, or a layer called on one),
    through lists, tuples and dicts: the layer is then called symbolically."""
    if isinstance(structure, (list, tuple)):
        return any(_holds_keras_tensors(item) for item in structure)
    if isinstance(structure, dict):
        return any(_holds_keras_tensors(item) for item in structure.values())
    return hasattr(structure, "_keras_history")


def _converts(inputs):
    """Whether `inputs` is one array-like (not a structure of several inputs)."""
    return isinstance(inputs, (TensorLike, np.ndarray, np.generic, int, float))


@functools.cache
def _call_facts(call):
    """(the default of its `training`, whether it takes `training`, whether it takes `mask`)
    of a layer's `call`: what every call of the layer asks, in one lookup."""
    parameters = inspect.signature(call).parameters
    training = parameters.get("training")
    default = (
        None
        if training is None or training.default is inspect.Parameter.empty
        else training.default
    )
    takes_training = training is not None or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )
    return default, takes_training, _takes_mask(call)


def _is_variable(leaf):
    return isinstance(leaf, Variable)


# what Layer.__init__ and __call__ set on a layer beside its weights: names, flags and
# shapes, never a variable or a layer (a model's trainable variables, asked for twice a
# step, walked the shapes' tuples)
_BOOKKEEPING = frozenset(
    {
        "_input_shape_argument",
        "_name",
        "_dtype_policy",
        "_mixed_compute",
        "autocast",
        "_scope",
        "_trainable",
        "_in_call",
        "dtype",
        "built",
        "_output_shape",
        "_build_input_shape",
        "_input_shape",
        "_weight_options",
        "_regularized",
        "_added_losses",
    }
)


def _is_trainable(leaf):
    return isinstance(leaf, Variable) and leaf.trainable


def _trainable_layer(module):
    return not isinstance(module, Layer) or module.trainable


def init_parameters(cls):
    """The keyword arguments `cls(...)` takes, its base classes' included where `__init__`
    passes `**kwargs` on."""
    names = set()
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is None:
            continue
        parameters = inspect.signature(init).parameters.values()
        names.update(p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD)
        names.update(p.name for p in parameters if p.kind is p.KEYWORD_ONLY)
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            break
    return names - {"self"}


def attribute_arguments(layer, leave_out):
    """{argument: value} of `layer`'s constructor arguments that are attributes of the same
    name (a tuple as a list, as JSON holds it), but those in `leave_out`: Keras's way for a
    layer without a config of its own."""
    arguments = {}
    for name in sorted(init_parameters(type(layer)) - set(leave_out)):
        if hasattr(layer, name):
            value = getattr(layer, name)
            arguments[name] = list(value) if isinstance(value, tuple) else value
    return arguments


def dtype_policy(layer):
    """Keras's DTypePolicy entry for the layer's policy: its mixed one, else its dtype's
    (float32 for one that has none, and for one that takes strings or integers: the lookup
    layers' policy is Keras's default)."""
    mixed = getattr(layer, "_dtype_policy", None)
    dtype = getattr(layer, "dtype", None)
    name = getattr(dtype, "name", None) if getattr(dtype, "is_floating", False) else None
    if mixed is not None:
        name = mixed.name
    return {
        "module": "keras",
        "class_name": "DTypePolicy",
        "config": {"name": name or "float32"},
        "registered_name": None,
    }


def refuse_quantization(layer, quantization_config):
    """Keras's `quantization_config` argument (Dense, EinsumDense, Embedding): None, as their
    configs write it; tracer does not quantize."""
    if quantization_config is not None:
        raise NotImplementedError(
            f"{type(layer).__name__}: quantization_config={quantization_config!r}; tracer does "
            "not quantize layers"
        )


def _marking_built(build):
    """A class's `build` that, as Keras's, leaves the layer built: a layer built by hand is
    not built again by its first call."""

    @functools.wraps(build)
    def marking_built(self, *args, **kwargs):
        result = build(self, *args, **kwargs)
        self.built = True
        return result

    marking_built._marks_built = True
    return marking_built
