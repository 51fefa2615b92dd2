"""Keras 3 configs of models (the top of `config.json`): Sequential, Functional, and the
`compile_config` of a compiled model.

    {"module": "keras", "class_name": "Sequential", "registered_name": null,
     "config": {"name": ..., "trainable": true, "dtype": {...},
                "layers": [{InputLayer}, {Dense}, ...], "build_input_shape": [null, 4]},
     "build_config": {"input_shape": [null, 4]},
     "compile_config": {"optimizer": {...}, "loss": "mse", "metrics": ["mae"], ...}}

A Functional config lists every layer with its `inbound_nodes` (the tensors each call took,
named by `keras_history`: the layer that made the tensor, which of its calls, which of its
outputs) and names the model's inputs and outputs the same way; reading it calls the layers
again on `tt.keras.Input` tensors in the order the nodes allow.
"""

import dataclasses
import inspect
import warnings

import numpy as np

from tracer.keras.registration import get_registered_name, get_registered_object
from tracer.keras.saving import layer_configs, operations
from tracer.keras.saving.layer_configs import dtype_policy, entry_class

MAX_LAYERS = 100_000


def model_config(model, with_compile=True):
    """The config entry of a Sequential or Functional model, or of a subclassed model with a
    get_config of its own (Keras's entry: that config as it is, the shape it was built for);
    `with_compile` adds its `compile_config` (a model nested in another has none)."""
    kind = _kind(model)
    if kind == "Sequential":
        entry = _sequential_config(model)
    elif kind == "Functional":
        entry = _functional_config(model)
    elif _has_own_config(model):
        entry = _subclassed_config(model)
    else:
        raise ValueError(
            f"cannot save {type(model).__name__} {model.name!r} as a .keras file: a subclassed "
            "model needs a get_config method (and from_config, unless its config is the "
            "arguments of its constructor); or save its weights with save_weights(...) and make "
            "the model again in code"
        )
    if with_compile:
        entry["compile_config"] = model.get_compile_config() or {}
    return entry


def model_from_config(entry, custom_objects=None, compile=True):
    """The tracer model (built, its weights not yet loaded) a config entry describes."""
    layer_configs.check_no_code(entry)
    class_name = entry_class(entry)
    config = entry.get("config")
    if not isinstance(config, dict):
        raise ValueError(f"the config of model {class_name} is not a JSON object")
    if class_name == "Sequential":
        model = _sequential_from_config(config, custom_objects)
    elif class_name in ("Functional", "Model"):
        model = _functional_from_config(config, custom_objects)
    elif (custom_objects and class_name in custom_objects) or get_registered_object(
        entry.get("registered_name"), custom_objects
    ):
        model = layer_configs.make_layer(entry, custom_objects)
    else:
        raise ValueError(
            f"the file holds a model {class_name} that tracer does not have (tracer reads "
            "Sequential and functional models; pass a subclass in custom_objects)"
        )
    if not is_model(model):  # a subclassed model: built as the entry says, to take weights
        build_from_config(model, entry.get("build_config"))
    if config.get("trainable") is False:
        model.trainable = False
    if compile and entry.get("compile_config"):
        if _overrides(model, "compile_from_config"):
            model.compile_from_config(entry["compile_config"])
        else:
            compile_from(model, entry["compile_config"], custom_objects)
    return model


def any_from_config(entry, custom_objects):
    """A layer, or a model nested in a model."""
    if entry_class(entry) in ("Sequential", "Functional"):
        return model_from_config(entry, custom_objects, compile=False)
    if operations.is_operation(entry):
        return operations.make(entry)
    return layer_configs.make_layer(entry, custom_objects)


# --- subclassed models ------------------------------------------------------------------------


def _overrides(model, method):
    """Whether `model`'s class writes its own `method` (a user's hook), not tracer's."""
    from tracer.keras.models import Model

    return getattr(type(model), method) is not getattr(Model, method)


def _has_own_config(model):
    from tracer.keras.layers.layer import Layer

    return type(model).get_config is not Layer.get_config


def _subclassed_config(model):
    config = model.get_config()
    if not isinstance(config, dict):
        raise TypeError(f"{type(model).__name__}.get_config() must return a dict, not {config!r}")
    entry = {
        "module": None,
        "class_name": type(model).__name__,
        "config": config,
        "registered_name": get_registered_name(type(model)),
    }
    shape = getattr(model, "_build_input_shape", None)
    if model.built and shape is not None:
        entry["build_config"] = {"input_shape": [None if d is None else int(d) for d in shape]}
    return entry


def build_from_config(layer, build_config):
    """Build `layer` as its entry's build_config says, as Keras does: a model of one's own
    (without a build_from_config of its own) by one call on zeros of the `input_shape` there
    (unknown sizes 1: its layers build as the inputs reach them), a layer by
    `layer_configs.build_from_entry`."""
    from tracer.keras.layers.layer import Layer
    from tracer.keras.models import Model
    from tracer.ops.array_ops import zeros

    if layer.built:
        return
    if isinstance(layer, Model) and type(layer).build_from_config is Layer.build_from_config:
        shape = (build_config or {}).get("input_shape") if isinstance(build_config, dict) else None
        if _is_flat_shape(shape):
            layer(zeros([1 if d is None else int(d) for d in shape]))
            layer._build_input_shape = tuple(shape)
        return
    layer_configs.build_from_entry(layer, build_config)


# --- Sequential --------------------------------------------------------------------------------


def _sequential_config(model):
    shapes = _sequential_input_shapes(model)
    entries = []
    if shapes and shapes[0] is not None:
        entries.append(_input_layer(shapes[0], _input_dtype(model.layers[0]), "input_layer"))
    for layer, shape in zip(model.layers, shapes):
        if is_model(layer):
            entries.append(model_config(layer, with_compile=False))
        else:
            entries.append(layer_configs.layer_config(layer, shape))
    config = {
        "name": model.name,
        "trainable": model.trainable,
        "dtype": dtype_policy(model),
        "layers": entries,
    }
    entry = {
        "module": "keras",
        "class_name": "Sequential",
        "config": config,
        "registered_name": None,
    }
    if shapes and shapes[0] is not None:
        config["build_input_shape"] = shapes[0]
        entry["build_config"] = {"input_shape": shapes[0]}
    return entry


def _sequential_input_shapes(model):
    """The input shape of each layer, or None where it is not known: the model's input shape
    for the first, the output shape of the one before for the others; the batch axis is
    the model's input's (None unless its Input gave a batch size, as a stateful RNN needs)."""
    shapes = []
    given = getattr(model, "_input_shape", None)
    batch = given[0] if given else None
    previous = given or inferred_shape(model.layers[:1])
    for layer in model.layers:
        shapes.append(None if previous is None else [batch, *_json_dims(previous[1:])])
        output = getattr(layer, "_output_shape", None)
        previous = output if _is_flat_shape(output) and layer.built else None
    return shapes


def _sequential_from_config(config, custom_objects):
    from tracer.keras.models import Sequential

    entries = config.get("layers")
    if not isinstance(entries, list) or len(entries) > MAX_LAYERS:
        raise ValueError("a Sequential config must list its layers")
    model = Sequential(name=config.get("name"))
    input_shape = config.get("build_input_shape")
    for entry in entries:
        if entry_class(entry) == "InputLayer":
            input_shape = _batch_shape(entry.get("config") or {})
            continue
        layer = any_from_config(entry, custom_objects)
        model.layers.append(layer)  # NOTE: not add(): it would build for shapes given before
        if not is_model(layer):
            layer_configs.build_from_entry(layer, entry.get("build_config"))
    if input_shape is not None:
        _build_sequential(model, _shape(input_shape))
    # NOTE: built as Keras's is: each layer with weights was built from its build_config
    # (weights_file.read names any that was not), the others build on the first call
    model.built = True
    return model


def _build_sequential(model, shape):
    """Build every layer for inputs of `shape` by a call on zeros of one sample, as
    Sequential does when given a `tt.keras.Input`; leaves shapes with unknown sizes to the
    layers' own build configs."""
    model._input_shape = shape
    if any(d is None for d in shape[1:]) or not model.layers:
        return
    # NOTE: Sequential._build_for reads the first layer's dtype, which a nested model lacks
    if hasattr(model, "_build_for") and getattr(model.layers[0], "dtype", None) is not None:
        model._build_for(shape)
    else:
        model(np.zeros((1, *shape[1:]), np.float32), training=False)
    model.built = True


# --- Functional --------------------------------------------------------------------------------


def _functional_config(model):
    from tracer.keras.functional import functional_structure
    from tracer.keras.layers.input_layer import InputLayer

    structure = functional_structure(model)
    entries = []
    for item in structure["layers"]:
        layer = item["layer"]
        if isinstance(layer, InputLayer):
            entry = _input_layer(
                list(layer.batch_shape), layer.dtype.name, layer.name, layer.sparse
            )
        elif _kind(layer) == "Functional":
            raise ValueError(_NESTED_FUNCTIONAL)
        elif is_model(layer):
            entry = model_config(layer, with_compile=False)
        elif isinstance(layer, operations.OperationLayer):
            entry = operations.entry(layer)
        else:
            entry = layer_configs.layer_config(layer, _first_input_shape(item["inbound_nodes"]))
        entry["name"] = item["name"]
        entry["inbound_nodes"] = item["inbound_nodes"]
        entries.append(entry)
    config = {
        "name": structure["name"],
        "trainable": structure["trainable"],
        "layers": entries,
        "input_layers": _to_json(structure["input_layers"]),
        "output_layers": _to_json(structure["output_layers"]),
    }
    return {
        "module": "keras.src.models.functional",
        "class_name": "Functional",
        "config": config,
        "registered_name": "Functional",
        "build_config": {"input_shape": None},
    }


_NESTED_FUNCTIONAL = (
    "tracer does not read or write functional models nested in functional models; call the "
    "inner model's layers in the outer model instead"
)


def _first_input_shape(nodes):
    """The shape of the first argument of a layer's first call (its build_config), or a
    list of shapes when that argument is a list of tensors."""
    if not nodes or not nodes[0]["args"]:
        return None
    first = nodes[0]["args"][0]
    if isinstance(first, dict) and first.get("class_name") == "__keras_tensor__":
        return first["config"]["shape"]
    if isinstance(first, list) and all(isinstance(t, dict) for t in first):
        return [t["config"]["shape"] for t in first]
    return None


def _to_json(structure):
    """Tuples as lists, as JSON has them."""
    if isinstance(structure, (list, tuple)):
        return [_to_json(item) for item in structure]
    if isinstance(structure, dict):
        return {key: _to_json(value) for key, value in structure.items()}
    return structure


def _functional_from_config(config, custom_objects):
    from tracer.keras.models import Model

    entries = config.get("layers")
    if not isinstance(entries, list) or len(entries) > MAX_LAYERS:
        raise ValueError("a functional config must list its layers")
    tensors = {}  # (layer name, node index, tensor index) -> tensor
    pending = []
    for entry in entries:
        config_of = entry.get("config") if isinstance(entry.get("config"), dict) else {}
        name = entry.get("name") or config_of.get("name")
        if not isinstance(name, str):
            raise ValueError(f"layer {entry_class(entry)} of the functional config has no name")
        if entry_class(entry) == "InputLayer":
            tensors[(name, 0, 0)] = _make_input(config_of, name)
            continue
        if entry_class(entry) == "Functional":
            raise ValueError(_NESTED_FUNCTIONAL)
        layer = any_from_config(entry, custom_objects)
        if not is_model(layer):
            layer_configs.build_from_entry(layer, entry.get("build_config"))
        nodes = entry.get("inbound_nodes") or []
        if not isinstance(nodes, list):
            raise ValueError(f"layer {name!r}: inbound_nodes must be a list")
        pending.append(_Calls(layer, name, nodes))
    # NOTE: Keras lists layers so that one pass usually makes every call; a layer shared
    # between branches may wait for a later pass
    while pending:
        progressed = False
        for calls in pending:
            progressed |= _call_ready_nodes(calls, tensors)
        pending = [calls for calls in pending if calls.made < len(calls.nodes)]
        if pending and not progressed:
            waiting = ", ".join(repr(calls.name) for calls in pending)
            raise ValueError(f"the functional config's layers {waiting} take tensors none makes")
    inputs = _resolve_history(config.get("input_layers"), tensors)
    outputs = _resolve_history(config.get("output_layers"), tensors)
    return Model(inputs, outputs, name=config.get("name"))


@dataclasses.dataclass
class _Calls:
    """A layer of a functional config, its calls (`nodes`) and how many are made."""

    layer: object
    name: str
    nodes: list
    made: int = 0


def _call_ready_nodes(calls, tensors):
    """Make the layer's next calls whose input tensors exist; whether any was made."""
    progressed = False
    while calls.made < len(calls.nodes):
        try:
            args, kwargs = _node_arguments(calls.nodes[calls.made], tensors)
        except KeyError:
            break
        outputs = calls.layer(*args, **kwargs)
        flat = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        for i, tensor in enumerate(flat):
            tensors[(calls.name, calls.made, i)] = tensor
        calls.made += 1
        progressed = True
    return progressed


def _node_arguments(node, tensors):
    """`(args, kwargs)` of one call: Keras 3's `{"args": [...], "kwargs": {...}}`, or the
    `[[layer, node, tensor, kwargs], ...]` of files written by Keras 2. KeyError when a
    tensor is not made yet."""
    if isinstance(node, dict):
        args = _resolve_tensors(node.get("args") or [], tensors)
        return args, _resolve_tensors(node.get("kwargs") or {}, tensors)
    if isinstance(node, list):
        inputs, kwargs = [], {}
        for item in node:
            if not isinstance(item, list):
                raise ValueError(f"cannot read the inbound node {node!r}")
            inputs.append(tensors[_history_key(item[:3])])
            kwargs.update(item[3] if len(item) > 3 and isinstance(item[3], dict) else {})
        return [inputs[0] if len(inputs) == 1 else inputs], kwargs
    raise ValueError(f"cannot read the inbound node {node!r}")


def _resolve_tensors(value, tensors, depth=0):
    if depth > 32:
        raise ValueError("an inbound node nests too deeply")
    if isinstance(value, dict) and value.get("class_name") == "__keras_tensor__":
        return tensors[_history_key((value.get("config") or {}).get("keras_history"))]
    if isinstance(value, dict):
        return {k: _resolve_tensors(v, tensors, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve_tensors(v, tensors, depth + 1) for v in value]
    return value


def _resolve_history(value, tensors, depth=0):
    """The tensors `input_layers`/`output_layers` name: one `[name, node, tensor]`, or a
    list or dict of them."""
    if depth > 32:
        raise ValueError("the functional config's inputs or outputs nest too deeply")
    try:
        if isinstance(value, list) and value and isinstance(value[0], str):
            return tensors[_history_key(value)]
    except KeyError as error:
        raise ValueError(f"the functional config names a tensor no layer makes: {error}") from None
    if isinstance(value, list) and value:
        return [_resolve_history(item, tensors, depth + 1) for item in value]
    if isinstance(value, dict) and value:
        return {key: _resolve_history(item, tensors, depth + 1) for key, item in value.items()}
    raise ValueError(f"a functional config names its inputs and outputs, not {value!r}")


def _history_key(history):
    if (
        not isinstance(history, (list, tuple))
        or len(history) != 3
        or not isinstance(history[0], str)
        or not all(isinstance(i, int) for i in history[1:])
    ):
        raise ValueError(f"a tensor's keras_history must be [layer, node, tensor], not {history!r}")
    return tuple(history)


def _make_input(config, name):
    shape = _batch_shape(config)
    if shape is None:
        raise ValueError(f"input {name!r} of the functional config has no shape")
    for option in ("ragged", "optional"):
        if config.get(option):
            raise ValueError(f"input {name!r} is {option}; tracer has no {option} inputs")
    dtype = config.get("dtype") or "float32"
    if dtype not in ("int32", "int64", "bool", "string"):
        dtype = layer_configs.dtype_name(dtype)
    from tracer.keras.layers.input_layer import Input

    sparse = bool(config.get("sparse"))
    return Input(batch_shape=tuple(_shape(shape)), dtype=dtype, name=name, sparse=sparse)


# --- compile ------------------------------------------------------------------------------------


def compile_config(model):
    """What `compile` was given, as Keras writes it ({} for a model not compiled)."""
    given = getattr(model, "_compile_config", None)
    if not getattr(model, "compiled", False) or not isinstance(given, dict):
        return {}
    optimizer = getattr(model, "optimizer", None)
    if getattr(optimizer, "inner_optimizer", None) is not None and not hasattr(
        given.get("optimizer"), "inner_optimizer"
    ):  # compile's own LossScaleOptimizer (mixed precision): Keras writes what it was given
        optimizer = optimizer.inner_optimizer
    config = {
        "optimizer": optimizer_config(optimizer) if optimizer is not None else None,
        "loss": _object_config(given.get("loss"), "keras.losses"),
        "loss_weights": given.get("loss_weights"),
        "metrics": _object_config(given.get("metrics"), "keras.metrics"),
        "weighted_metrics": _object_config(given.get("weighted_metrics"), "keras.metrics"),
        "run_eagerly": bool(given.get("run_eagerly", False)),
        "steps_per_execution": given.get("steps_per_execution", 1),
        "jit_compile": given.get("jit_compile") is True,
    }
    return config


def optimizer_config(optimizer):
    """An optimizer as a .keras file's compile config holds it."""
    return {
        "module": "keras.optimizers",
        "class_name": type(optimizer).__name__,
        "config": optimizer.get_config(),
        "registered_name": None,
    }


def _object_config(value, module):
    """A loss or metric as Keras writes it: a name as is, an object as its class entry."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [_object_config(v, module) for v in value]
    if isinstance(value, dict):
        return {k: _object_config(v, module) for k, v in value.items()}
    if inspect.isfunction(value):
        return value.__name__
    get_config = getattr(value, "get_config", None)
    return {
        "module": module,
        "class_name": type(value).__name__,
        "config": get_config() if callable(get_config) else {},
        "registered_name": None,
    }


def compile_from(model, config, custom_objects=None):
    """Compile `model` as the file's `compile_config` says, its losses and metrics found
    among tracer's, then in `custom_objects` and the registered classes; a warning, and an
    uncompiled model, when something it names is in none of them."""
    from tracer.keras import losses, metrics

    if not hasattr(model, "compile") or not isinstance(config, dict):
        return
    try:
        arguments = {
            "optimizer": read_optimizer(config.get("optimizer")),
            "loss": _read_object(config.get("loss"), losses, custom_objects),
            "loss_weights": config.get("loss_weights"),
            "metrics": _read_object(config.get("metrics"), metrics, custom_objects),
            "weighted_metrics": _read_object(
                config.get("weighted_metrics"), metrics, custom_objects
            ),
            "run_eagerly": bool(config.get("run_eagerly", False)),
        }
        model.compile(**{k: v for k, v in arguments.items() if v is not None})
    except (ValueError, TypeError, KeyError) as error:
        warnings.warn(
            f"the model is loaded uncompiled: its compile_config cannot be used ({error}); "
            "call model.compile(...) yourself",
            stacklevel=4,
        )


# Keras's optimizer options that mean nothing while unset
_UNSET_OPTIMIZER_OPTIONS = (None, False)


def read_optimizer(entry):
    """A tracer optimizer from a config entry (a name is passed on as it is)."""
    from tracer import optimizers

    if not isinstance(entry, dict):
        return entry
    if entry.get("class_name") == "LossScaleOptimizer":  # (tt.keras.mixed_precision's)
        from tracer.keras.loss_scale_optimizer import LossScaleOptimizer

        return LossScaleOptimizer.from_config(entry.get("config") or {})
    cls = getattr(optimizers, str(entry.get("class_name")), None)
    if not (isinstance(cls, type) and issubclass(cls, optimizers.Optimizer)):
        raise ValueError(f"tracer has no optimizer {entry.get('class_name')!r}")
    config = entry.get("config") if isinstance(entry.get("config"), dict) else {}
    if isinstance(config.get("learning_rate"), dict):
        config = {**config, "learning_rate": _read_schedule(config["learning_rate"])}
    accepted = layer_configs.init_parameters(cls)
    dropped = [
        f"{k}={v!r}"
        for k, v in config.items()
        if k not in accepted and v not in _UNSET_OPTIMIZER_OPTIONS
    ]
    if dropped:
        warnings.warn(
            f"{cls.__name__}: tracer's has no {', '.join(dropped)}; loaded without them",
            stacklevel=5,
        )
    return cls(**{k: v for k, v in config.items() if k in accepted})


def _read_schedule(entry):
    """A learning rate schedule of tracer's from its config entry (Keras's layout)."""
    from tracer import schedules

    cls = getattr(schedules, str(entry.get("class_name")), None)
    if not (isinstance(cls, type) and issubclass(cls, schedules.LearningRateSchedule)):
        raise ValueError(f"tracer has no learning rate schedule {entry.get('class_name')!r}")
    config = entry.get("config") if isinstance(entry.get("config"), dict) else {}
    accepted = layer_configs.init_parameters(cls)
    unknown = sorted(k for k in config if k not in accepted)
    if unknown:
        raise ValueError(f"{cls.__name__}: tracer's takes no {', '.join(unknown)}")
    return cls(**config)


def _read_object(value, module, custom_objects=None, depth=0):
    """A loss or metric of a compile_config: names as they are (or the function
    `custom_objects` gives for one), class entries as objects of tracer's classes (of
    `module`, tt.keras.losses or tt.keras.metrics), of `custom_objects` or of the
    registered ones."""
    if depth > 16:
        raise ValueError("the compile_config nests too deeply")
    if isinstance(value, list):
        return [_read_object(item, module, custom_objects, depth + 1) for item in value]
    if isinstance(value, str) and custom_objects and value in custom_objects:
        return custom_objects[value]
    if isinstance(value, dict) and "class_name" in value:
        name = str(value["class_name"])
        cls = getattr(module, name, None)
        if not isinstance(cls, type):
            cls = (custom_objects or {}).get(name) or get_registered_object(
                value.get("registered_name"), custom_objects
            )
        if not isinstance(cls, type):
            kind = module.__name__.rsplit(".", 1)[-1]
            raise ValueError(f"tracer's {kind} have no {name!r}, nor custom_objects")
        config = value.get("config") if isinstance(value.get("config"), dict) else {}
        accepted = layer_configs.init_parameters(cls)
        return cls(**{k: v for k, v in config.items() if k in accepted})
    if isinstance(value, dict):
        return {
            k: _read_object(item, module, custom_objects, depth + 1) for k, item in value.items()
        }
    return value


# --- shapes -------------------------------------------------------------------------------------


def _input_layer(shape, dtype, name, sparse=False):
    return {
        "module": "keras.layers",
        "class_name": "InputLayer",
        "config": {
            "batch_shape": shape,
            "dtype": dtype,
            "sparse": sparse,
            "ragged": False,
            "name": name,
            "optional": False,
        },
        "registered_name": None,
    }


def _input_dtype(layer):
    """The dtype of a Sequential's input: int32 ids for an Embedding, strings or integers
    for a lookup layer (its dtype), else float32."""
    if type(layer).__name__ == "Embedding":
        return "int32"
    dtype = getattr(layer, "dtype", None)
    if dtype is not None and (dtype.is_string or dtype.is_integer):
        return dtype.name
    return "float32"


def inferred_shape(layers):
    """The input shape of the first of `layers`: the one recorded (a Sequential's input
    shape, `input_shape=`, the first call's), else the sizes its weights fix, others None."""
    if not layers or not getattr(layers[0], "built", False):
        return None
    layer = layers[0]
    for name in ("_input_shape", "_input_shape_argument", "_build_input_shape"):
        recorded = getattr(layer, name, None)
        if isinstance(recorded, tuple):
            return recorded
    kernel, kind = getattr(layer, "kernel", None), type(layer).__name__
    if kind == "Dense" and kernel is not None:
        return (None, int(kernel.shape[0]))
    if kind == "Conv2D" and kernel is not None:
        channels = int(kernel.shape[2])
        if layer.data_format == "NHWC":
            return (None, None, None, channels)
        return (None, channels, None, None)
    return (None, None) if kind == "Embedding" else None


def _batch_shape(config):
    shape = config.get("batch_shape") or config.get("batch_input_shape")
    if shape is None and config.get("shape") is not None:
        shape = [None, *config["shape"]]
    return shape


def _shape(shape):
    if not _is_flat_shape(shape):
        raise ValueError(f"a shape must be a list of sizes (or nulls), not {shape!r}")
    return tuple(shape)


def _is_flat_shape(shape):
    return isinstance(shape, (list, tuple)) and all(
        d is None or (isinstance(d, int) and not isinstance(d, bool) and d >= 0) for d in shape
    )


def _json_dims(dims):
    return [None if d is None else int(d) for d in dims]


def _kind(model):
    names = {cls.__name__ for cls in type(model).__mro__}
    return (
        "Sequential" if "Sequential" in names else "Functional" if "Functional" in names else None
    )


def is_model(layer):
    """Whether `layer` is a Sequential or functional model (one that has a model config)."""
    return _kind(layer) is not None
