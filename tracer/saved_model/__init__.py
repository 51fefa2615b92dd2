"""`tt.saved_model`: a model's compiled functions and variables in a directory, loaded back
without its Python code, as TensorFlow's `tf.saved_model`.

    tt.saved_model.save(model, "exported")       # exported/saved_model.npz
    loaded = tt.saved_model.load("exported")
    loaded.call(x)                                # the traced program, compiled; gradients too

What is saved: the object's tracked attributes (variables, `tt.function` methods and
attributes, modules, and lists, tuples and dicts of them), each `tt.function` as the
signatures it was traced for, and its input_signature's, as tracer's IR; each variable's
value. Loading rebuilds the objects: each function runs its saved graphs (compiled on first
call), reading and assigning the loaded variables, and its gradients are the graphs' (a
custom gradient's, saved as the graph of its gradient function, included). Python code that
a graph calls back (`tt.py_function`, `tt.print`) cannot be saved. docs/saved_model.md has
the format and the choices.
"""

from tracer.saved_model.graph_format import SavedModelError
from tracer.saved_model.loading import contains_saved_model, load
from tracer.saved_model.saving import save


class SaveOptions:
    """TensorFlow's `tf.saved_model.SaveOptions`. Custom gradients are saved unless
    `experimental_custom_gradients=False`, which saves a custom gradient's forward alone (the
    loaded gradient is then that of the ops it ran, as TensorFlow's); the other options
    concern TensorFlow's devices and formats and change nothing here."""

    def __init__(
        self,
        namespace_whitelist=None,
        save_debug_info=False,
        function_aliases=None,
        experimental_debug_stripper=False,
        experimental_io_device=None,
        experimental_variable_policy=None,
        experimental_custom_gradients=True,
        experimental_image_format=False,
        experimental_skip_saver=False,
        experimental_sharding_callback=None,
    ):
        self.experimental_custom_gradients = bool(experimental_custom_gradients)


class LoadOptions:
    """TensorFlow's `tf.saved_model.LoadOptions`: its options concern devices and change
    nothing here."""

    def __init__(self, **options):
        self.options = options


__all__ = [
    "LoadOptions",
    "SaveOptions",
    "SavedModelError",
    "contains_saved_model",
    "load",
    "save",
]
