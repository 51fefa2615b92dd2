"""`tt.keras.Model` for subclassing and `tt.keras.Sequential` (also under `tt.keras.models`)."""

from tracer.keras.layers.layer import Layer


class Model(Layer):
    """A layer that holds layers: subclass it, make the layers in `__init__` and use them in
    `call`, as TensorFlow's guides do. The training loop is the user's, with a tape."""

    def compile(self, *args, **kwargs):
        _no_keras_loop("compile")

    def fit(self, *args, **kwargs):
        _no_keras_loop("fit")

    def evaluate(self, *args, **kwargs):
        _no_keras_loop("evaluate")


class Sequential(Model):
    """Layers applied in order, each casting its inputs to its own dtype. Its layers keep
    their own names (`dense/kernel:0`), as in TensorFlow's tutorials; `training` reaches
    the layers that take it (Dropout)."""

    def __init__(self, layers=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.dtype = None
        self.layers = []
        for layer in layers or ():
            self.add(layer)

    def add(self, layer):
        if not callable(layer):
            raise TypeError(f"Sequential.add takes a layer, not {type(layer).__name__}")
        self.layers.append(layer)

    def pop(self):
        return self.layers.pop()

    def build(self, input_shape):
        """Nothing to build: each layer builds itself on its first call."""
        self.built = True

    def call(self, inputs, training=None):
        for layer in self.layers:
            if isinstance(layer, Layer):
                inputs = layer(inputs, training=training)
            else:
                inputs = layer(inputs)
        return inputs

    def _enter_scope(self):
        """Sequential adds no scope of its own to its layers' names."""
        return None


def _no_keras_loop(method):
    raise NotImplementedError(
        f"tracer has no Model.{method}: write the loop with a tt.GradientTape and an optimizer "
        "(examples/train_keras_style.py shows one, compiled and checkpointed)"
    )
