"""`tt.keras.Model` for subclassing and `tt.keras.Sequential` (also under `tt.keras.models`);
`Model(inputs, outputs)` makes a functional model (`tracer.keras.functional`)."""

import json

import numpy as np

from tracer.keras import extensions, summary
from tracer.keras.layers.input_layer import Input, InputLayer
from tracer.keras.layers.layer import Layer
from tracer.keras.naming import path_scope, unique_layer_name
from tracer.keras.training import Trainer
from tracer.tensor import constant


class Model(Trainer, Layer):
    """A layer that holds layers: subclass it, make the layers in `__init__` and use them in
    `call`, as TensorFlow's guides do; or give it `inputs` and `outputs` (`tt.keras.Input`
    and layers called on it) for Keras's functional API."""

    def __new__(cls, *args, **kwargs):
        if cls is Model and _functional_arguments(args, kwargs):
            # Python then runs Functional.__init__
            return super().__new__(extensions.functional_model)
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        """A subclass given `inputs` and `outputs` is a functional model with the subclass's
        own methods (Keras's way to customize `train_step` of a functional model): as Keras
        does, the subclass's base Model becomes Functional, whose `__init__` then runs."""
        functional = extensions.functional_model
        if _functional_arguments(args, kwargs) and not isinstance(self, functional):
            _based_on(type(self), functional)
            functional.__init__(self, *args, **kwargs)
            return
        super().__init__(*args, **kwargs)

    @property
    def layers(self):
        """The layers the model holds as attributes (or in lists of them), in the order set,
        as Keras's `model.layers` of a subclassed model."""
        return _direct_layers(self)

    @layers.setter
    def layers(self, _):
        raise AttributeError(
            "`Model.layers` attribute is reserved and should not be used. Please use another name."
        )

    def get_layer(self, name=None, index=None):
        """The layer called `name`, or the one at `index` of `layers` (Keras's errors: a
        ValueError for both or neither given, an unknown name, an index out of range)."""
        if name is not None and index is not None:
            raise ValueError(
                f"Provide only a layer name or a layer index. Received: index={index}, name={name}."
            )
        layers = self.layers
        if index is not None:
            if len(layers) <= index:
                raise ValueError(
                    f"Was asked to retrieve layer at index {index} but model only has "
                    f"{len(layers)} layers."
                )
            return layers[index]
        if name is None:
            raise ValueError("Provide either a layer name or layer index at `get_layer`.")
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(
            f"No such layer: {name}. Existing layers are: {[layer.name for layer in layers]}."
        )

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False, show_trainable=False, layer_range=None):  # fmt: skip
        """Print Keras's table of the layers, `line_length` wide (Keras's default: 88, 108
        for a functional model's four columns, at most 76 where stdout is no terminal), with a
        "Trainable" column where `show_trainable`; a `print_fn` is given the whole text at
        once, as Keras gives it."""
        text = summary.summary_text(self, line_length, positions, show_trainable)
        if print_fn is None:
            print(text, end="")
        else:
            print_fn(text)

    def _summary_rows(self):
        """The summary's rows: the layers the model holds directly, in the order set."""
        return summary.layer_rows(_direct_layers(self))

    def save(self, filepath, overwrite=True, **kwargs):
        """Keras 3's `.keras` file: the model's config and its weights, in one zip."""
        extensions.saving.save_model(self, filepath, overwrite=overwrite, **kwargs)

    def export(self, filepath, format="tf_saved_model", verbose=True, input_signature=None, **kwargs):  # fmt: skip
        """Keras 3's export: a SavedModel whose `serve` endpoint runs the model for inference
        (tracer/keras/saving/export_archive.py)."""
        from tracer.keras.saving import export_archive

        export_archive.export(self, filepath, format, verbose, input_signature, **kwargs)

    def get_compile_config(self):
        """What `compile` was given, as a `.keras` file keeps it (Keras's); a model of one's
        own may keep more, and read it back in its `compile_from_config`."""
        return extensions.saving.model_configs.compile_config(self)

    def compile_from_config(self, config):
        """Compile the model as `config` (what `get_compile_config` gave) says."""
        extensions.saving.model_configs.compile_from(self, config)

    def to_json(self, **kwargs):
        """The model's Keras config as JSON: what a .keras file's config.json holds."""
        return json.dumps(extensions.saving.model_configs.model_config(self), **kwargs)

    def save_weights(self, filepath, overwrite=True):
        """Keras 3's `.weights.h5` file of the model's weights."""
        extensions.saving.save_weights(self, filepath, overwrite=overwrite)

    def load_weights(self, filepath, skip_mismatch=False):
        """Set the weights from a `.weights.h5` or `.keras` file."""
        extensions.saving.load_weights(self, filepath, skip_mismatch=skip_mismatch)


class Sequential(Model):
    """Layers applied in order, each casting its inputs to its own dtype. Its layers keep
    their own names (`dense/kernel:0`), as in TensorFlow's tutorials; `training`, where
    given, reaches the layers that take it (Dropout)."""

    _has_scope = False  # no scope of its own in its layers' names

    def __init__(self, layers=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.dtype = None
        # the layers, in order: `layers`, held under that name (past Model's property) so that
        # checkpoints name them `layers/0`, ... as before a subclassed Model had the property
        vars(self)["layers"] = []
        self._input_shape = None
        for layer in layers or ():
            self.add(layer, rebuild=False)
        if self._input_shape is not None:
            self._build_for(self._input_shape)

    def add(self, layer, rebuild=True):
        """Append a layer; a `tt.keras.Input` (or a first layer given `input_shape`) fixes
        the input shape, and the model builds at once for it (unless `rebuild` is False), as
        Keras's does. An `InputLayer` does as its Input does (it is not one of `layers`)."""
        if isinstance(layer, InputLayer):
            layer = layer.output
        if hasattr(layer, "_keras_history") and not callable(layer):  # tt.keras.Input(...)
            self._input_shape = tuple(layer.shape)  # its batch size too, where given
            self._input_tensor = layer  # what a symbolic build starts from
        elif not callable(layer):
            raise TypeError(f"Sequential.add takes a layer, not {type(layer).__name__}")
        else:
            self.layers.append(layer)
            first = getattr(layer, "_input_shape_argument", None)
            if len(self.layers) == 1 and first is not None:
                self._input_shape = first
        if rebuild and self._input_shape is not None:
            self._build_for(self._input_shape)

    def _build_for(self, input_shape):
        """Build every layer for inputs of `input_shape` by calling the layers on zeros of
        one sample (of the batch, where its size is given), or on a KerasTensor where a size
        beyond the batch's is unknown (`Input((None,))`); the summary then shows the batch
        axis as given (None: any). A stateful RNN's states are zeros again afterwards."""
        self._input_shape = tuple(input_shape)
        if not self.layers:
            return
        # NOTE: Keras's Sequential builds a Functional model without a name, each time: the
        # next functional model a user makes is named after the ones it took.
        unique_layer_name("functional")
        with path_scope(self.name):  # its layers' weights' paths: "sequential/dense/kernel"
            self._build_layers()
        self._clear_losses()  # (what building on zeros added: Keras's build adds none)

    def _build_layers(self):
        """`_build_for`'s calls of the layers, in the model's scope."""
        if any(d is None for d in self._input_shape[1:]):
            self._build_symbolically()
            return
        dtype = _input_dtype(self.layers[0])
        batch = self._input_shape[0]
        sample = (batch or 1, *self._input_shape[1:])
        empty = (
            np.full(sample, b"", object) if np.dtype(dtype) == object else np.zeros(sample, dtype)
        )
        outputs = constant(empty)
        for layer in self.layers:
            layer._output_shape = None
            outputs = layer(outputs, training=False) if isinstance(layer, Layer) else layer(outputs)
            if isinstance(layer, Layer):
                layer._output_shape = (batch, *layer._output_shape[1:])
        for layer in self._flatten(lambda leaf: getattr(leaf, "stateful", False) is True):
            layer.reset_state()  # (the zeros moved its states on)
        self.built = True

    @property
    def layers(self):
        """The layers in order (the list itself, which loading a config appends to)."""
        return vars(self)["layers"]

    def _build_symbolically(self):
        outputs = getattr(self, "_input_tensor", None)
        if outputs is None:
            dtype = np.dtype(_input_dtype(self.layers[0])).name
            outputs = Input(batch_shape=self._input_shape, dtype=dtype)
        if outputs.dtype == "string" or not all(isinstance(x, Layer) for x in self.layers):
            return  # strings or plain functions: each layer builds on the first call
        for layer in self.layers:
            outputs = layer(outputs)
            layer._output_shape = getattr(outputs, "shape", layer._output_shape)
        self.built = True

    def pop(self, rebuild=True):
        layer = self.layers.pop()
        if rebuild and self.layers and self._input_shape is not None:
            self._build_for(self._input_shape)
        return layer

    @property
    def input_shape(self):
        """The input shape (None for the batch axis) that a `tt.keras.Input`, a first layer's
        `input_shape` or `build` fixed."""
        if self._input_shape is None:
            raise AttributeError(f"Sequential model '{self.name}' has no defined input shape yet.")
        return self._input_shape

    @property
    def output_shape(self):
        """The last layer's output shape for that input shape (the batch axis as given)."""
        last = self.layers[-1] if self.layers and self._input_shape is not None else None
        shape = getattr(last, "_output_shape", None)
        if shape is None:
            raise AttributeError(f"Sequential model '{self.name}' has no defined output shape yet.")
        return (self._input_shape[0], *shape[1:])

    def build(self, input_shape):
        """Build every layer for inputs of `input_shape` (Keras's `model.build((None, 3))`)."""
        self._build_for(tuple(input_shape))
        self.built = True

    def _build_on_first_call(self, input_shape):
        """Nothing: on the first call each layer builds itself as the inputs reach it."""
        unique_layer_name("functional")  # the name Keras's build gives its Functional
        self.built = True

    def _summary_rows(self):
        return summary.layer_rows(self.layers)

    def get_config(self):
        """Keras's config of the model: its name and its layers' entries, as a `.keras`
        file's config.json holds them."""
        return extensions.saving.model_configs.model_config(self, with_compile=False)["config"]

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """The model (new layers, new weights) `config` describes."""
        entry = {"class_name": "Sequential", "config": config}
        return extensions.saving.model_configs.model_from_config(entry, custom_objects, False)

    def call(self, inputs, training=None):
        layers = vars(self)["layers"]  # (`layers`, without the property's call)
        for layer in layers:
            if not getattr(layer, "built", True):
                with path_scope(self.name):  # layers built as the inputs reach them
                    return self._call_layers(layers, inputs, training)
        return self._call_layers(layers, inputs, training)

    @staticmethod
    def _call_layers(layers, inputs, training):
        # `training` reaches the layers only where given, as in a functional model and Keras:
        # a layer called without it takes its call's own default
        if training is None:
            for layer in layers:
                inputs = layer(inputs)
            return inputs
        for layer in layers:
            if isinstance(layer, Layer):
                inputs = layer(inputs, training=training)
            else:
                inputs = layer(inputs)
        return inputs


def _functional_arguments(args, kwargs):
    """Whether a Model is made with Keras's functional arguments, inputs and outputs."""
    return len(args) >= 2 or "inputs" in kwargs or "outputs" in kwargs


def _based_on(cls, functional):
    """Make `cls`'s base Model (directly, or through its other bases) `functional`."""
    if Model in cls.__bases__:
        cls.__bases__ = tuple(functional if base is Model else base for base in cls.__bases__)
        return
    for base in cls.__bases__:
        if issubclass(base, Model) and not issubclass(base, functional):
            _based_on(base, functional)


def _input_dtype(layer):
    """The dtype a layer takes its inputs in (float32 for a nested model, which has none)."""
    dtype = getattr(layer, "dtype", None)
    return dtype.as_numpy_dtype if dtype is not None else np.float32


def _direct_layers(model):
    """The layers a model holds as attributes (or in lists of them), in the order set."""
    found = []
    for value in vars(model).values():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, Layer) and all(item is not f for f in found):
                found.append(item)
    return found


def clone_model(model, input_tensors=None, clone_function=None, call_function=None, **kwargs):
    """A new model of new layers, made from `model`'s config, with new weights (Keras's
    `clone_model`; `set_weights(model.get_weights())` copies the weights)."""
    given = {"input_tensors": input_tensors, "clone_function": clone_function,
             "call_function": call_function, **kwargs}  # fmt: skip
    refused = sorted(name for name, value in given.items() if value is not None)
    if refused:
        raise NotImplementedError(
            f"clone_model: tracer clones a model from its config alone, not with {refused}"
        )
    return type(model).from_config(model.get_config())


def model_from_json(json_string, custom_objects=None):
    """The model (uncompiled, with new weights) a `to_json` string describes."""
    entry = json.loads(json_string)
    return extensions.saving.model_configs.model_from_config(entry, custom_objects, compile=False)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """The model a `.keras` file holds (Keras 3's format, written by Keras or by tracer)."""
    return extensions.saving.load_model(
        filepath, custom_objects=custom_objects, compile=compile, safe_mode=safe_mode
    )
