"""`tt.keras.applications`: the preprocessing of Keras's ImageNet models, without the models.

Each model's module (`tt.keras.applications.inception_v3`, `.resnet50`, `.vgg16`, ...) has
its `preprocess_input(x, data_format=None)`, `imagenet_utils.preprocess_input` with the
convention that model was trained with (tracer/keras/applications/imagenet_utils.py). The
models themselves (`InceptionV3`, ...) are not in tracer: their weights are a download.

    >>> import numpy as np, tracer as tt
    >>> tt.keras.applications.inception_v3.preprocess_input(np.array([255.0])).tolist()
    [1.0]
"""

import functools
import sys
import types

from tracer.keras.applications import imagenet_utils

# each model's module -> the convention of its preprocess_input, as in Keras 3
_MODES = {
    "densenet": "torch",
    "inception_resnet_v2": "tf",
    "inception_v3": "tf",
    "mobilenet": "tf",
    "mobilenet_v2": "tf",
    "nasnet": "tf",
    "resnet": "caffe",
    "resnet50": "caffe",
    "resnet_v2": "tf",
    "vgg16": "caffe",
    "vgg19": "caffe",
    "xception": "tf",
}


def _model_module(name, mode):
    """The module `tt.keras.applications.<name>`, importable by that name."""
    module = types.ModuleType(f"{__name__}.{name}", f"Keras's {name}: preprocess_input ({mode!r}).")

    @functools.wraps(imagenet_utils.preprocess_input)
    def preprocess_input(x, data_format=None):
        return imagenet_utils.preprocess_input(x, data_format=data_format, mode=mode)

    preprocess_input.__doc__ = f"`imagenet_utils.preprocess_input` with mode={mode!r}."
    module.preprocess_input = preprocess_input
    sys.modules[module.__name__] = module
    return module


globals().update({name: _model_module(name, mode) for name, mode in _MODES.items()})


def __getattr__(name):
    if name[:1].isupper():
        raise AttributeError(
            f"tt.keras.applications.{name}: Keras's pretrained models are not in tracer (their "
            "weights are a download); build the model with tt.keras.layers, and preprocess "
            "its inputs with tt.keras.applications.<model>.preprocess_input"
        )
    raise AttributeError(f"module 'tracer.keras.applications' has no attribute {name!r}")


__all__ = ["imagenet_utils", *_MODES]
