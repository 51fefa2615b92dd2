"""Keras 3's `serialize_keras_object` and `deserialize_keras_object`: any Keras object as the
JSON-ready entry a `.keras` file holds for it, and back.

    >>> entry = tt.keras.utils.serialize_keras_object(tt.keras.layers.Dense(3, name="d"))
    >>> entry["module"], entry["class_name"], entry["config"]["units"]
    ('keras.layers', 'Dense', 3)
    >>> tt.keras.utils.deserialize_keras_object(entry).units
    3

An entry is {"module", "class_name", "config", "registered_name"}: Keras's own classes name
their module ("keras.layers", "keras.losses", ...) and no registered name; a class of one's own
has module null and its registered name (`package>Class`, or its own name, which
`custom_objects` or a `custom_object_scope` must then give). A function is Keras's entry of a
function (class "function", its registered name as config). Layers and models are written by
layer_configs and model_configs, as in a file; as there, nothing read is run as code.
"""

import inspect

import numpy as np

from tracer.keras.registration import get_registered_name, get_registered_object
from tracer.keras.saving import layer_configs, model_configs

_PLAIN = (str, int, float, bool)


def _kinds():
    """(base class, Keras's module, tracer's module that holds Keras's classes of the kind)."""
    from tracer import optimizers, schedules
    from tracer.keras import constraints, initializers, losses, metrics, regularizers

    return (
        (losses.Loss, "keras.losses", losses),
        (metrics.Metric, "keras.metrics", metrics),
        (initializers.Initializer, "keras.initializers", initializers),
        (regularizers.Regularizer, "keras.regularizers", regularizers),
        (constraints.Constraint, "keras.constraints", constraints),
        (schedules.LearningRateSchedule, "keras.optimizers.schedules", schedules),
        (optimizers.Optimizer, "keras.optimizers", optimizers),
    )


def serialize_keras_object(obj):
    """The Keras entry of `obj` (a layer, model, loss, metric, optimizer, initializer, ...,
    a function, or plain values, lists and dicts of them)."""
    from tracer.keras.layers.layer import Layer

    if obj is None or isinstance(obj, _PLAIN):
        return obj
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, (list, tuple)):
        items = [serialize_keras_object(item) for item in obj]
        return tuple(items) if isinstance(obj, tuple) else items
    if isinstance(obj, dict):
        return {key: serialize_keras_object(value) for key, value in obj.items()}
    if inspect.isfunction(obj):
        return layer_configs.function_entry(obj)
    if isinstance(obj, Layer):
        if model_configs.is_model(obj):
            return model_configs.model_config(obj)
        return layer_configs.layer_config(obj, model_configs.inferred_shape([obj]))
    for base, module, keras_module in _kinds():
        if isinstance(obj, base):
            if module == "keras.optimizers":
                return model_configs.optimizer_config(obj)
            own = getattr(keras_module, type(obj).__name__, None) is type(obj)
            return {
                "module": module if own else None,
                "class_name": type(obj).__name__,
                "config": serialize_keras_object(obj.get_config()),
                "registered_name": None if own else get_registered_name(type(obj)),
            }
    get_config = getattr(obj, "get_config", None)
    if not callable(get_config):
        raise TypeError(
            f"cannot serialize {obj!r} of type {type(obj).__name__}: to be serializable, a "
            "class must have a get_config() method"
        )
    return {
        "module": None,
        "class_name": type(obj).__name__,
        "config": serialize_keras_object(get_config()),
        "registered_name": get_registered_name(type(obj)),
    }


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """The object a Keras entry describes: its class found among Keras's (tracer's), in
    `custom_objects`, a custom_object_scope or the registered ones; a name is looked up so
    too (`module_objects=` first), else returned as it is. Never runs code from the entry."""
    module_objects = kwargs.get("module_objects")
    if config is None or isinstance(config, (int, float, bool)):
        return config
    if isinstance(config, str):
        if module_objects and config in module_objects:
            return module_objects[config]
        found = get_registered_object(config, custom_objects)
        return config if found is None else found
    if isinstance(config, (list, tuple)):
        return [
            deserialize_keras_object(item, custom_objects, safe_mode, **kwargs) for item in config
        ]
    if not isinstance(config, dict):
        raise TypeError(f"cannot deserialize {config!r}: it is not a Keras entry")
    if "class_name" not in config:
        return {
            key: deserialize_keras_object(value, custom_objects, safe_mode, **kwargs)
            for key, value in config.items()
        }
    layer_configs.check_no_code(config)
    class_name, module = config["class_name"], config.get("module") or ""
    if class_name == "function":
        return layer_configs.read_function(config, custom_objects)
    inner = config.get("config") if isinstance(config.get("config"), dict) else {}
    custom = (custom_objects or {}).get(class_name) or get_registered_object(
        config.get("registered_name") or class_name, custom_objects
    )
    if module.startswith("keras.layers") or module == "keras" or _is_layer_class(custom):
        return _layer(config, custom_objects)
    for _, kind_module, keras_module in _kinds():
        if module == kind_module:
            if kind_module == "keras.optimizers":
                return model_configs.read_optimizer(config)
            cls = getattr(keras_module, class_name, None)
            if isinstance(cls, type):
                return cls.from_config(inner) if hasattr(cls, "from_config") else cls(**inner)
    if custom is None:
        raise TypeError(
            f"could not locate class {class_name!r}: register it with "
            "@register_keras_serializable or pass it in custom_objects"
        )
    return custom.from_config(inner) if hasattr(custom, "from_config") else custom(**inner)


def _layer(config, custom_objects):
    """A layer or model from its entry, built where the entry says how (build_config)."""
    layer = model_configs.any_from_config(config, custom_objects)
    model_configs.build_from_config(layer, config.get("build_config"))
    return layer


def _is_layer_class(cls):
    from tracer.keras.layers.layer import Layer

    return isinstance(cls, type) and issubclass(cls, Layer)


__all__ = ["deserialize_keras_object", "serialize_keras_object"]
