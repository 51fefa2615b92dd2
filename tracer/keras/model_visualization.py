"""`tt.keras.utils.plot_model` and `model_to_dot`: Keras draws a model's graph with pydot and
graphviz; tracer does not draw models. Where pydot is missing they fail as Keras's do (an
ImportError that says to install it; in a notebook plot_model prints that and returns None,
so a tutorial's cell goes on), and where it is there they say that tracer does not draw.

>>> model = tt.keras.Sequential([tt.keras.Input((2,)), tt.keras.layers.Dense(1)])
>>> tt.keras.utils.plot_model(model)  # doctest: +SKIP
Traceback (most recent call last):
ImportError: You must install pydot (`pip install pydot`) for `plot_model` to work.
"""

import importlib.util
import sys

_NO_DRAWING = (
    "tracer does not draw models: {what} is not supported (model.summary() prints the "
    "layers, their shapes and connections)"
)


def _has_pydot():
    return importlib.util.find_spec("pydot") is not None


def _check_built(model):
    if not model.built:
        raise ValueError(
            "This model has not yet been built. Build the model first by calling `build()` or "
            "by calling the model on a batch of data."
        )


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True, **kwargs):
    """Keras's pydot graph of `model`: an ImportError without pydot, as Keras's, and
    NotImplementedError with it."""
    _check_built(model)
    if not _has_pydot():
        raise ImportError("You must install pydot (`pip install pydot`) for model_to_dot to work.")
    raise NotImplementedError(_NO_DRAWING.format(what="model_to_dot"))


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False, **kwargs):
    """Keras's drawing of `model` into `to_file`: without pydot an ImportError, or in IPython
    the message printed and None returned, as Keras does; with pydot NotImplementedError."""
    _check_built(model)
    if not _has_pydot():
        message = "You must install pydot (`pip install pydot`) for `plot_model` to work."
        if "IPython.core.magics.namespace" in sys.modules:
            print(message)
            return None
        raise ImportError(message)
    raise NotImplementedError(_NO_DRAWING.format(what="plot_model"))


__all__ = ["model_to_dot", "plot_model"]
