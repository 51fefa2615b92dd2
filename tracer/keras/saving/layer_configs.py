"""Keras 3 configs of tracer's layers: the entries of a `.keras` file's `config.json`.

An entry names its class and holds the arguments that make the layer again:

    {"module": "keras.layers", "class_name": "Dense", "registered_name": null,
     "config": {"name": "dense", "trainable": true, "dtype": {...DTypePolicy...},
                "units": 8, "activation": "relu", "kernel_initializer": {...}, ...},
     "build_config": {"input_shape": [null, 4]}}

`LAYERS` is the table of the layers tracer reads and writes. Reading refuses, with a
ValueError naming it, any class the table lacks (unless the caller's `custom_objects` has it),
any argument whose value would change what the layer computes and that tracer's layer does not
take (`sparse=true`, `renorm=true`), and anything that would run code from the file (Keras's
`Lambda` layers and `__lambda__` functions), whatever `safe_mode` says. Options that only shape
training (regularizers, constraints) are dropped with a warning.
"""

import dataclasses
import inspect
import json
import warnings

from tracer.keras import activations, constraints, initializers, regularizers
from tracer.keras.layers import (
    activation_layers,
    attention,
    category_encoding,
    convolutional,
    core,
    discretization,
    einsum_dense,
    hashing,
    normalization,
    pooling,
    preprocessing,
    recurrent,
    regularization,
    reshaping,
    wrappers,
)
from tracer.keras.layers.layer import (
    Layer,
    attribute_arguments,
    dtype_policy,
    init_parameters,
)
from tracer.keras.operations import Operation
from tracer.keras.registration import get_registered_name, get_registered_object

_COMMON = ("name", "trainable", "dtype")
# Keras's options for a layer's weights and outputs in training: read into the layer
_WEIGHT_OPTIONS = (
    "kernel_regularizer",
    "recurrent_regularizer",
    "bias_regularizer",
    "activity_regularizer",
    "embeddings_regularizer",
    "kernel_constraint",
    "recurrent_constraint",
    "bias_constraint",
    "embeddings_constraint",
    "depthwise_regularizer",
    "depthwise_constraint",
    "beta_regularizer",
    "gamma_regularizer",
    "beta_constraint",
    "gamma_constraint",
)
# Keras 2's argument that Keras 3 still reads and ignores; BatchNormalization's renorm
# momentum, which acts only with renorm (refused unless false); the lookup layers' record of
# their vocabulary's size (the vocabulary gives it), StringLookup's vocabulary_dtype (always
# string) and the OOV hashing method, which acts only with num_oov_indices > 1 (refused)
_IGNORED = (
    "input_length",
    "renorm_momentum",
    "vocabulary_size",
    "vocabulary_dtype",
    "oov_method",
)
_CODE_CLASSES = ("Lambda", "__lambda__", "TFOpLambda", "SlicingOpLambda")
_DTYPES = ("float16", "bfloat16", "float32", "float64", "mixed_float16")


@dataclasses.dataclass(frozen=True)
class LayerSpec:
    """How one Keras layer class maps to tracer's: `write(layer)` gives the config's
    arguments after name, trainable and dtype, in Keras's order; `fixed` holds the arguments
    tracer's layer supports only at one value; `nested` names the arguments that are layers;
    `build_config(layer)` gives the build config of a layer of several inputs."""

    cls: type
    write: object
    fixed: dict = dataclasses.field(default_factory=dict)
    nested: tuple = ()  # the arguments that hold layers (their config entries in a file)
    build_config: object = None  # layer -> its build config, where not one input's shape
    writes_trainable: bool = True  # False where Keras's class takes no `trainable`


def _dense(layer):
    return {
        "units": layer.units,
        "activation": _activation(layer),
        "use_bias": layer.use_bias,
        "kernel_initializer": _initializer(layer.kernel_initializer, "GlorotUniform"),
        "bias_initializer": _initializer(layer.bias_initializer, "Zeros"),
        **_options(
            layer, "kernel_regularizer", "bias_regularizer", "kernel_constraint", "bias_constraint"
        ),
        "quantization_config": None,
    }


def _convolution(layer):
    """The arguments Keras's convolutions share, in their order: Conv2D's and Conv1D's add
    groups after dilation_rate, the transposed ones output_padding after padding."""
    return {
        "filters": layer.filters,
        "kernel_size": list(layer.kernel_size),
        "strides": list(layer.strides),
        "padding": layer.padding.lower(),
        "data_format": _DATA_FORMATS[layer.data_format],
        "dilation_rate": list(layer.dilation_rate),
        "activation": _activation(layer),
        "use_bias": layer.use_bias,
        "kernel_initializer": _initializer(layer.kernel_initializer, "GlorotUniform"),
        "bias_initializer": _initializer(layer.bias_initializer, "Zeros"),
        **_options(layer, "kernel_regularizer", "bias_regularizer", "activity_regularizer"),
        **_options(layer, "kernel_constraint", "bias_constraint"),
    }


def _conv2d(layer):
    return _inserted(_convolution(layer), "dilation_rate", {"groups": layer.groups})


def _conv_transpose(layer):
    output_padding = None if layer.output_padding is None else list(layer.output_padding)
    return _inserted(_convolution(layer), "padding", {"output_padding": output_padding})


def _inserted(config, after, entries):
    """`config` with `entries` placed right after its key `after`."""
    result = {}
    for key, value in config.items():
        result[key] = value
        if key == after:
            result.update(entries)
    return result


def _depthwise_conv2d(layer):
    return {
        "depth_multiplier": layer.depth_multiplier,
        "kernel_size": list(layer.kernel_size),
        "strides": list(layer.strides),
        "padding": layer.padding.lower(),
        "data_format": _DATA_FORMATS[layer.data_format],
        "dilation_rate": list(layer.dilation_rate),
        "activation": _activation(layer),
        "use_bias": layer.use_bias,
        "depthwise_initializer": _initializer(layer.depthwise_initializer, "GlorotUniform"),
        "bias_initializer": _initializer(layer.bias_initializer, "Zeros"),
        **_options(layer, "depthwise_regularizer", "bias_regularizer", "activity_regularizer"),
        **_options(layer, "depthwise_constraint", "bias_constraint"),
    }


def _separable_conv2d(layer):
    return {
        "filters": layer.filters,
        "kernel_size": list(layer.kernel_size),
        "strides": list(layer.strides),
        "padding": layer.padding.lower(),
        "data_format": _DATA_FORMATS[layer.data_format],
        "dilation_rate": list(layer.dilation_rate),
        "depth_multiplier": layer.depth_multiplier,
        "activation": _activation(layer),
        "use_bias": layer.use_bias,
        "depthwise_initializer": _initializer(layer.depthwise_initializer, "GlorotUniform"),
        "pointwise_initializer": _initializer(layer.pointwise_initializer, "GlorotUniform"),
        "bias_initializer": _initializer(layer.bias_initializer, "Zeros"),
        **_options(
            layer,
            "depthwise_regularizer",
            "pointwise_regularizer",
            "bias_regularizer",
            "activity_regularizer",
        ),  # fmt: skip
        **_options(layer, "depthwise_constraint", "pointwise_constraint", "bias_constraint"),
    }


def _pooling(layer):
    return {
        "pool_size": list(layer.pool_size),
        "padding": layer.padding.lower(),
        "strides": list(layer.strides),
        "data_format": _DATA_FORMATS[layer.data_format],
    }


def _flatten(layer):
    return {"data_format": "channels_last"}


def _dropout(layer):
    noise_shape = None if layer.noise_shape is None else list(layer.noise_shape)
    return {"rate": layer.rate, "seed": layer.seed, "noise_shape": noise_shape}


def _embedding(layer):
    return {
        "input_dim": layer.input_dim,
        "output_dim": layer.output_dim,
        "embeddings_initializer": _initializer(layer.embeddings_initializer, "RandomUniform"),
        **_options(
            layer, "embeddings_regularizer", "activity_regularizer", "embeddings_constraint"
        ),
        "mask_zero": layer.mask_zero,
        "quantization_config": None,
    }


def _batch_normalization(layer):
    return {
        "axis": layer.axis,
        "momentum": layer.momentum,
        "epsilon": layer.epsilon,
        **_normalization_weights(layer),
        "moving_mean_initializer": _initializer(layer.moving_mean_initializer, "Zeros"),
        "moving_variance_initializer": _initializer(layer.moving_variance_initializer, "Ones"),
        **_options(
            layer, "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"
        ),
        "synchronized": False,
        "renorm": False,
        "renorm_clipping": None,
        "renorm_momentum": 0.99,
    }


def _layer_normalization(layer):
    return {
        "axis": list(layer.axis),
        "epsilon": layer.epsilon,
        "center": layer.center,
        "scale": layer.scale,
        "rms_scaling": layer.rms_scaling,
        "beta_initializer": _initializer(layer.beta_initializer, "Zeros"),
        "gamma_initializer": _initializer(layer.gamma_initializer, "Ones"),
        **_options(
            layer, "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"
        ),
    }


def _group_normalization(layer):
    return {
        "groups": layer.groups,
        "axis": layer.axis,
        "epsilon": layer.epsilon,
        "center": layer.center,
        "scale": layer.scale,
        "beta_initializer": _initializer(layer.beta_initializer, "Zeros"),
        "gamma_initializer": _initializer(layer.gamma_initializer, "Ones"),
        **_options(
            layer, "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"
        ),
    }


def _recurrent(layer):
    """SimpleRNN's arguments, which LSTM and GRU extend: the RNN's options, then the cell's."""
    return {
        "return_sequences": layer.return_sequences,
        "return_state": layer.return_state,
        "go_backwards": layer.go_backwards,
        "stateful": layer.stateful,
        "unroll": layer.unroll,
        "zero_output_for_mask": layer.zero_output_for_mask,
        "units": layer.units,
        "activation": _activation(layer),
        "use_bias": layer.use_bias,
        "kernel_initializer": _initializer(layer.kernel_initializer, "GlorotUniform"),
        "recurrent_initializer": _initializer(layer.recurrent_initializer, "Orthogonal"),
        "bias_initializer": _initializer(layer.bias_initializer, "Zeros"),
        **_options(layer, "kernel_regularizer", "recurrent_regularizer", "bias_regularizer"),
        **_options(layer, "activity_regularizer", "kernel_constraint", "recurrent_constraint"),
        **_options(layer, "bias_constraint"),
        "dropout": layer.dropout,
        "recurrent_dropout": layer.recurrent_dropout,
    }


def _gated(layer, extra):
    """LSTM's and GRU's: SimpleRNN's with the recurrent activation after the activation,
    `extra` after the initializers (LSTM) or the dropouts (GRU), and the seed last."""
    config = _recurrent(layer)
    ordered = {}
    for key, value in config.items():
        ordered[key] = value
        if key == "activation":
            ordered["recurrent_activation"] = activations.serialize(layer.recurrent_activation)
        if key == extra[0]:
            ordered.update(extra[1])
    return {**ordered, "seed": layer.seed}


def _lstm(layer):
    return _gated(layer, ("bias_initializer", {"unit_forget_bias": layer.unit_forget_bias}))


def _gru(layer):
    return _gated(layer, ("recurrent_dropout", {"reset_after": layer.reset_after}))


def _bidirectional(layer):
    shape = getattr(layer, "_build_input_shape", None)
    return {
        "merge_mode": layer.merge_mode,
        "layer": layer_config(layer.forward_layer, shape),
        "backward_layer": layer_config(layer.backward_layer, shape),
    }


def _einsum_dense(layer):
    return {
        "output_shape": list(layer.partial_output_shape),
        "equation": layer.equation,
        "activation": _activation(layer),
        "bias_axes": layer.bias_axes,
        "kernel_initializer": _initializer(layer.kernel_initializer, "GlorotUniform"),
        "bias_initializer": _initializer(layer.bias_initializer, "Zeros"),
        **_options(layer, "kernel_regularizer", "bias_regularizer", "activity_regularizer"),
        **_options(layer, "kernel_constraint", "bias_constraint"),
        "quantization_config": None,
    }


def _multi_head_attention(layer):
    return {
        "num_heads": layer.num_heads,
        "key_dim": layer.key_dim,
        "value_dim": layer.value_dim,
        "dropout": layer.dropout,
        "use_bias": layer.use_bias,
        "use_gate": False,
        "output_shape": layer.output_shape_argument,
        "attention_axes": list(layer.attention_axes),
        "sliding_window": None,
        "kernel_initializer": _initializer(layer.kernel_initializer, "GlorotUniform"),
        "bias_initializer": _initializer(layer.bias_initializer, "Zeros"),
        **_options(layer, "kernel_regularizer", "bias_regularizer", "activity_regularizer"),
        **_options(layer, "kernel_constraint", "bias_constraint"),
        "seed": layer.seed,
    }


def _attention_build_config(layer):
    """Keras's: the query's, value's (and key's) shapes the layer was built for."""
    if layer._built_for is None:
        return None
    return {"shapes_dict": {k: _json_shape(v) for k, v in layer._built_for.items()}}


def _time_distributed(layer):
    shape = getattr(layer, "_build_input_shape", None)
    return {"layer": layer_config(layer.layer, None if shape is None else (shape[0], *shape[2:]))}


def _prelu(layer):
    return {
        "alpha_initializer": _initializer(layer.alpha_initializer, "Zeros"),
        **_options(layer, "alpha_regularizer", "alpha_constraint"),
        "shared_axes": layer.shared_axes,
    }


def _normalization_weights(layer):
    """center, scale and the initializers of beta and gamma, in BatchNormalization's order."""
    return {
        "center": layer.center,
        "scale": layer.scale,
        "beta_initializer": _initializer(layer.beta_initializer, "Zeros"),
        "gamma_initializer": _initializer(layer.gamma_initializer, "Ones"),
    }


def _own_config(layer):
    """The arguments of a layer whose `get_config` gives Keras's (name, trainable and dtype
    are written from the layer)."""
    return {k: v for k, v in layer.get_config().items() if k not in _COMMON}


def _options(layer, *keys):
    """Keras's `<weight>_regularizer` and `<weight>_constraint` arguments of the layer (None
    where it has none)."""
    written = {}
    for key in keys:
        value = getattr(layer, key, None)
        module = regularizers if key.endswith("_regularizer") else constraints
        written[key] = module.serialize(value)
    return written


LAYERS = {
    "Dense": LayerSpec(core.Dense, _dense),
    "Conv2D": LayerSpec(convolutional.Conv2D, _conv2d),
    "Conv1D": LayerSpec(convolutional.Conv1D, _conv2d),
    "Conv2DTranspose": LayerSpec(convolutional.Conv2DTranspose, _conv_transpose),
    "Conv1DTranspose": LayerSpec(convolutional.Conv1DTranspose, _conv_transpose),
    "DepthwiseConv2D": LayerSpec(convolutional.DepthwiseConv2D, _depthwise_conv2d),
    "SeparableConv2D": LayerSpec(convolutional.SeparableConv2D, _separable_conv2d),
    "MaxPooling2D": LayerSpec(convolutional.MaxPooling2D, _pooling),
    "AveragePooling2D": LayerSpec(convolutional.AveragePooling2D, _pooling),
    "MaxPooling1D": LayerSpec(convolutional.MaxPooling1D, _pooling),
    "AveragePooling1D": LayerSpec(convolutional.AveragePooling1D, _pooling),
    "Flatten": LayerSpec(core.Flatten, _flatten, {"data_format": "channels_last"}),
    "Dropout": LayerSpec(core.Dropout, _dropout),
    "Embedding": LayerSpec(core.Embedding, _embedding, {"sparse": False}),
    "BatchNormalization": LayerSpec(
        normalization.BatchNormalization,
        _batch_normalization,
        {"synchronized": False, "renorm": False, "renorm_clipping": None},
    ),
    "GroupNormalization": LayerSpec(normalization.GroupNormalization, _group_normalization),
    "LayerNormalization": LayerSpec(normalization.LayerNormalization, _layer_normalization),
    "SimpleRNN": LayerSpec(recurrent.SimpleRNN, _recurrent),
    "LSTM": LayerSpec(recurrent.LSTM, _lstm),
    "GRU": LayerSpec(recurrent.GRU, _gru),
    "EinsumDense": LayerSpec(einsum_dense.EinsumDense, _einsum_dense),
    "MultiHeadAttention": LayerSpec(
        attention.MultiHeadAttention,
        _multi_head_attention,
        {"use_gate": False, "sliding_window": None},
        build_config=_attention_build_config,
    ),
    # Keras 3.15's SpatialDropout1D and 2D take no `trainable` (and write none)
    **{
        cls.__name__: LayerSpec(cls, _own_config, writes_trainable=False)
        for cls in (regularization.SpatialDropout1D, regularization.SpatialDropout2D)
    },
    "PReLU": LayerSpec(activation_layers.PReLU, _prelu),
    "TimeDistributed": LayerSpec(wrappers.TimeDistributed, _time_distributed, nested=("layer",)),
    "Bidirectional": LayerSpec(
        recurrent.Bidirectional, _bidirectional, nested=("layer", "backward_layer")
    ),
    # layers whose get_config gives Keras 3's arguments
    **{
        cls.__name__: LayerSpec(cls, _own_config)
        for cls in (
            activation_layers.ReLU,
            activation_layers.LeakyReLU,
            activation_layers.ELU,
            activation_layers.Softmax,
            core.Identity,
            core.Masking,
            core.Rescaling,
            category_encoding.CategoryEncoding,
            discretization.Discretization,
            hashing.Hashing,
            normalization.UnitNormalization,
            preprocessing.Normalization,
            regularization.GaussianNoise,
            regularization.GaussianDropout,
            regularization.ActivityRegularization,
            reshaping.Permute,
            reshaping.RepeatVector,
            reshaping.ZeroPadding2D,
            reshaping.Cropping2D,
            reshaping.UpSampling2D,
            reshaping.ZeroPadding1D,
            reshaping.Cropping1D,
            reshaping.UpSampling1D,
            attention.Attention,
            attention.AdditiveAttention,
            pooling.GlobalAveragePooling1D,
            pooling.GlobalAveragePooling2D,
            pooling.GlobalMaxPooling1D,
            pooling.GlobalMaxPooling2D,
        )
    },
}
_ALIASES = {
    "Convolution1D": "Conv1D",
    "Convolution2D": "Conv2D",
    "Convolution1DTranspose": "Conv1DTranspose",
    "Convolution2DTranspose": "Conv2DTranspose",
    "MaxPool1D": "MaxPooling1D",
    "AvgPool1D": "AveragePooling1D",
    "MaxPool2D": "MaxPooling2D",
    "AvgPool2D": "AveragePooling2D",
    "GlobalAvgPool1D": "GlobalAveragePooling1D",
    "GlobalAvgPool2D": "GlobalAveragePooling2D",
    "GlobalMaxPool1D": "GlobalMaxPooling1D",
    "GlobalMaxPool2D": "GlobalMaxPooling2D",
}
_DATA_FORMATS = {"NHWC": "channels_last", "NCHW": "channels_first", "NWC": "channels_last"}


def _spec_of(cls):
    return next((s for s in LAYERS.values() if s.cls is cls), None)


def table_arguments(layer, cls=None):
    """The Keras arguments of a layer of this module's table (`Dense`'s units, activation,
    initializers, ...), read as those of class `cls` (its own by default: a subclass of
    Dense as a Dense), or None for a class the table does not hold: what `Layer.get_config`
    gives for tracer's layers."""
    spec = _spec_of(cls or type(layer))
    return None if spec is None else spec.write(layer)


def layer_config(layer, input_shape=None):
    """The Keras config entry of `layer` (`input_shape`, when known, becomes its
    `build_config`). Raises ValueError for a layer Keras could not make again."""
    cls = type(layer)
    if cls is wrappers.Lambda:
        raise ValueError(
            f"cannot save layer {layer.name!r}: a Lambda layer's function is code, which a "
            "Keras file does not hold safely; save_weights, and make the model in code"
        )
    if cls is Operation:
        raise ValueError(
            f"cannot save layer {layer.name!r}: Keras's operation {layer.class_name} on "
            "KerasTensors (x[:, -1], a + b) is not written by tracer's saving; save_weights, "
            "and make the model in code"
        )
    spec = _spec_of(cls)
    if spec is not None:
        arguments, module = spec.write(layer), "keras.layers"
    elif cls.get_config is not Layer.get_config:  # a user's layer, or one of tracer's newer
        arguments, module = layer.get_config(), _keras_module(cls)
    else:
        arguments, module = _attribute_arguments(layer), _keras_module(cls)
    config = {"name": layer.name, "trainable": layer.trainable, "dtype": dtype_policy(layer)}
    if spec is not None and not spec.writes_trainable:
        del config["trainable"]
    config.update((k, v) for k, v in arguments.items() if k not in _COMMON)
    entry = {
        "module": module,
        "class_name": cls.__name__,
        "config": config,
        "registered_name": None if module else get_registered_name(cls),
    }
    build_config = spec.build_config(layer) if spec is not None and spec.build_config else None
    if type(layer).get_build_config is not Layer.get_build_config:  # a layer of one's own's
        build_config = layer.get_build_config()
    if build_config is not None:
        entry["build_config"] = build_config
    elif input_shape is not None:
        entry["build_config"] = {"input_shape": _json_shape(input_shape)}
    return entry


def make_layer(entry, custom_objects=None):
    """The tracer layer a Keras config entry describes (unbuilt)."""
    check_no_code(entry)
    class_name, config = entry_class(entry), entry.get("config")
    if not isinstance(config, dict):
        raise ValueError(f"the config of layer {class_name} is not a JSON object")
    custom_objects = custom_objects or {}
    custom = custom_objects.get(class_name) or get_registered_object(
        entry.get("registered_name"), custom_objects
    )
    if custom is not None:  # (its dtype as a name: Keras's policy entry is not an argument)
        if "dtype" in config:
            config = {**config, "dtype": dtype_name(config["dtype"])}
        return custom.from_config(config) if hasattr(custom, "from_config") else custom(**config)
    spec = LAYERS.get(_ALIASES.get(class_name, class_name))
    cls = spec.cls if spec is not None else _tracer_layer(class_name, entry)
    kwargs = _arguments(class_name, cls, config, spec.fixed if spec else {}, custom_objects)
    for key in spec.nested if spec else ():
        if kwargs.get(key) is not None:
            kwargs[key] = make_layer(kwargs[key], custom_objects)
    return cls(**kwargs)


def entry_class(entry):
    """The class name of a config entry, or ValueError when it is not an entry."""
    if not isinstance(entry, dict) or not isinstance(entry.get("class_name"), str):
        raise ValueError(f"a layer config must be a JSON object with a class_name, not {entry!r}")
    return entry["class_name"]


def check_no_code(value, depth=0):
    """Refuse a config that holds code (a Lambda layer, a serialized Python function)."""
    if depth > 64:
        raise ValueError("the config nests too deeply")
    if isinstance(value, dict):
        if value.get("class_name") in _CODE_CLASSES:
            raise ValueError(
                f"the file holds Python code ({value.get('class_name') or 'a function'}); "
                "tracer never runs code from a file, whatever safe_mode says"
            )
        for item in value.values():
            check_no_code(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            check_no_code(item, depth + 1)


def dtype_name(value):
    """A tracer dtype name from a config's `dtype` (a policy entry or a name)."""
    if isinstance(value, dict):
        value = (value.get("config") or {}).get("name")
    if value is None:
        return None
    if value not in _DTYPES:
        raise ValueError(f"the file uses dtype policy {value!r}; tracer reads {_DTYPES}")
    return value


def build_from_entry(layer, build_config):
    """Build a layer just read as its entry's `build_config` says: by its own
    `build_from_config` where it has one (a layer of one's own), else for the input shape the
    config records; one without either builds on its first call."""
    if layer.built:
        return
    if type(layer).build_from_config is not Layer.build_from_config:
        build(layer, None, lambda: layer.build_from_config(build_config))
        return
    shape = (build_config or {}).get("input_shape") if isinstance(build_config, dict) else None
    if isinstance(shape, (list, tuple)) and all(d is None or isinstance(d, int) for d in shape):
        build(layer, shape)


def build(layer, input_shape, how=None):
    """Build `layer` for inputs of `input_shape` (None for unknown sizes), or by calling
    `how`, in its name scope, as its first call would."""
    from tracer.train import deferred

    outer = layer._enter_scope()
    try:
        how() if how is not None else layer.build(tuple(input_shape))
        layer.built = True
        if layer in deferred.pending:
            deferred.restore_built(layer)
    finally:
        layer._leave_scope(outer)


def _arguments(class_name, cls, config, fixed, custom_objects=None):
    """The keyword arguments of `cls` from a layer's config."""
    accepted = init_parameters(cls)
    kwargs = {}
    for key, value in config.items():
        if key in fixed:
            if value is not None and value != fixed[key]:
                raise ValueError(
                    f"the file's {class_name} layer {config.get('name')!r} has {key}={value!r}; "
                    f"tracer's {class_name} supports only {key}={fixed[key]!r}"
                )
            if key not in accepted:
                continue
        if key in _IGNORED:
            continue
        if key in _WEIGHT_OPTIONS:
            if value is not None:
                module = regularizers if key.endswith("_regularizer") else constraints
                kwargs[key] = module.get(value)
            continue
        if key not in accepted:
            if value not in (None, False, 0, [], {}):
                raise ValueError(
                    f"the file's {class_name} layer {config.get('name')!r} sets {key}={value!r}, "
                    f"which tracer's {class_name} does not have"
                )
            continue
        value = _argument(key, value, custom_objects)
        if value is not None or not key.endswith("_initializer"):  # None: the layer's default
            kwargs[key] = value
    return kwargs


def _argument(key, value, custom_objects=None):
    if key == "dtype":
        return dtype_name(value)
    if key == "activation":
        return _read_activation(value, custom_objects)
    if key.endswith("_initializer"):
        return _read_initializer(value)
    if isinstance(value, list):
        return tuple(value)
    return value


def _keras_module(cls):
    """Keras's module for tracer's own layers (Keras has a class of that name), None for a
    user's layer (read back by its registered name, or through `custom_objects`), as Keras
    writes it."""
    from tracer.keras import layers

    if cls.__module__.startswith("tracer.keras.layers") and cls.__name__ in layers.__all__:
        return "keras.layers"
    return None


def _attribute_arguments(layer):
    """The arguments of a layer without `get_config`, Keras's way: each argument of its
    constructor is the attribute of that name (`Concatenate(axis)` has `.axis`)."""
    arguments = attribute_arguments(layer, leave_out=_COMMON)
    missing = init_parameters(type(layer)) - set(_COMMON) - set(arguments)
    if missing:
        raise ValueError(
            f"cannot save layer {layer.name!r}: tracer has no Keras config for "
            f"{type(layer).__name__} (give the class a get_config method)"
        )
    if "activation" in arguments:
        arguments["activation"] = _activation(layer)
    for name, value in arguments.items():
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise ValueError(
                f"cannot save layer {layer.name!r}: tracer has no Keras config for its "
                f"argument {name}={type(value).__name__} ({type(layer).__name__}); "
                "save_weights, and make the model in code"
            ) from None
    return arguments


def _tracer_layer(class_name, entry):
    """A layer class of `tt.keras.layers` named `class_name` (merge layers and others added
    after this table); else a ValueError that names what tracer lacks, or, for a class of
    one's own that is neither registered nor in `custom_objects`, Keras's TypeError."""
    from tracer.keras import layers

    module = entry.get("module") or ""
    cls = getattr(layers, class_name, None) if class_name in layers.__all__ else None
    if module.startswith("keras") and isinstance(cls, type) and issubclass(cls, Layer):
        return cls
    if module.startswith("keras"):
        raise ValueError(f"the file holds a layer {class_name} that tracer does not have")
    raise TypeError(
        f"could not locate class {class_name!r} (from {module or 'an unnamed module'}): "
        "register it with @register_keras_serializable or pass its class in custom_objects"
    )


def _activation(layer):
    """A layer's activation as Keras writes it: a Keras activation by name, a function of
    one's own as Keras's entry of a function, which names it as it was registered (or by its
    own name, which `custom_objects` must give when the file is read)."""
    try:
        return activations.serialize(layer.activation)
    except ValueError:
        if not inspect.isfunction(layer.activation) or layer.activation.__name__ == "<lambda>":
            raise ValueError(
                f"cannot save layer {layer.name!r}: its activation {layer.activation!r} is not "
                "one of Keras's or a named function, so Keras could not make the layer again"
            ) from None
        return function_entry(layer.activation)


def function_entry(fn):
    """Keras's entry of a Python function (an activation, a loss of one's own)."""
    return {
        "module": "builtins",
        "class_name": "function",
        "config": get_registered_name(fn),
        "registered_name": "function",
    }


def read_function(value, custom_objects=None):
    """The function a Keras function entry (or a name) stands for: `custom_objects`'s, a
    registered one (or one of a custom_object_scope), else Keras's activation of that name."""
    name = value.get("config") if isinstance(value, dict) else value
    if not isinstance(name, str):
        raise ValueError(f"the file holds a function tracer cannot read: {value!r}")
    found = get_registered_object(name, custom_objects)
    if found is not None:
        return found
    try:
        return activations.get(name)
    except ValueError:
        raise ValueError(
            f"the file names a function {name!r} that is neither registered nor in "
            "custom_objects: register it with @register_keras_serializable or pass it in "
            "custom_objects"
        ) from None


def _read_activation(value, custom_objects=None):
    if isinstance(value, dict) and value.get("class_name") == "function":
        return read_function(value, custom_objects)
    if isinstance(value, dict) and str(value.get("module", "")).startswith("keras"):
        value = value.get("config")
    if not isinstance(value, str):
        raise ValueError(f"the file holds an activation tracer cannot read: {value!r}")
    if get_registered_object(value, custom_objects) is not None:
        return read_function(value, custom_objects)
    return activations.get(value)


def _initializer(value, default):
    """The Keras entry of an initializer argument (a name, an Initializer, ...)."""
    found = initializers.get(value)
    if isinstance(found, initializers.Initializer) and type(found).__name__ in (
        cls.__name__ for cls in initializers._CLASSES
    ):
        name, config = type(found).__name__, found.get_config()
    else:
        warnings.warn(
            f"initializer {value!r} has no Keras config; the file names {default}", stacklevel=4
        )
        name, config = default, {}
    return {
        "module": "keras.initializers",
        "class_name": name,
        "config": config,
        "registered_name": None,
    }


def _read_initializer(value):
    """A tracer initializer from a config's entry; only what layers start with before their
    weights are loaded, so one tracer lacks falls back to the layer's default."""
    if isinstance(value, str) or value is None:
        return value if value is None or value in initializers._BY_NAME else None
    if not isinstance(value, dict):
        return None
    cls = initializers._BY_NAME.get(value.get("class_name"))
    config = value.get("config") if isinstance(value.get("config"), dict) else {}
    if cls is None:
        warnings.warn(
            f"tracer has no initializer {value.get('class_name')!r}; the layer's default is "
            "used (the loaded weights replace it)",
            stacklevel=5,
        )
        return None
    accepted = init_parameters(cls)
    return cls.from_config({k: v for k, v in config.items() if k in accepted})


def _json_shape(shape):
    """A shape (or a list of shapes, for a layer that takes several inputs) for JSON."""
    if shape and all(isinstance(d, (list, tuple)) for d in shape):
        return [_json_shape(s) for s in shape]
    return [None if d is None else int(d) for d in shape]
