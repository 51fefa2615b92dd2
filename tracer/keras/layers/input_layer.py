"""`tt.keras.Input` and `tt.keras.layers.InputLayer`: the layer that holds a functional
model's input, a KerasTensor of a given shape and dtype."""

import warnings

from tracer.keras.keras_tensor import KerasHistory, KerasTensor, Node
from tracer.keras.layers.layer import Layer
from tracer.keras.naming import unique_layer_name


class InputLayer(Layer):
    """The layer that holds a model's input: its node makes the KerasTensor `output`, of
    shape `batch_shape`. `tt.keras.Input` makes one and returns its output. Called on a
    tensor, it returns it unchanged (a Sequential may start with one)."""

    def __init__(
        self,
        shape=None,
        batch_size=None,
        dtype=None,
        sparse=None,
        ragged=None,
        batch_shape=None,
        name=None,
        optional=False,
        **kwargs,
    ):
        # Keras 3 still takes Keras 2's names (a tutorial's `InputLayer(input_shape=(28, 28, 1))`)
        if "input_shape" in kwargs:
            warnings.warn(
                "Argument `input_shape` is deprecated. Use `shape` instead.", stacklevel=1
            )
            shape = kwargs.pop("input_shape")
        if "batch_input_shape" in kwargs:
            batch_shape = kwargs.pop("batch_input_shape")
        for argument, value in (("ragged", ragged), ("optional", optional)):
            if value:
                raise NotImplementedError(f"tt.keras.Input: tracer has no {argument} inputs")
        self.sparse = bool(sparse)
        super().__init__(name=name or unique_layer_name("input_layer"), dtype=dtype, **kwargs)
        self.batch_shape = _batch_shape(shape, batch_size, batch_shape)
        # NOTE: the tensor takes the name given, not the layer's: an unnamed Input's tensor is
        # `keras_tensor_<n>` as in Keras 3, whose dict inputs are then looked up by that name.
        history = KerasHistory(self, 0, 0)
        tensor = KerasTensor(self.batch_shape, self.dtype, name, history, sparse=self.sparse)
        self._inbound_nodes = [Node(self, outputs=[tensor])]
        self.built = True

    @property
    def output(self):
        """The KerasTensor this layer holds."""
        return self._inbound_nodes[0].outputs[0]

    def get_config(self):
        """Keras 3's config of an InputLayer."""
        return {
            "batch_shape": list(self.batch_shape),
            "dtype": self.dtype.name,
            "sparse": self.sparse,
            "ragged": False,
            "name": self.name,
            "optional": False,
        }


def Input(
    shape=None,
    batch_size=None,
    dtype=None,
    sparse=None,
    ragged=None,
    batch_shape=None,
    name=None,
    tensor=None,
    optional=False,
):
    """A symbolic input of a functional model: a KerasTensor of shape `(batch_size, *shape)`
    (the batch size None by default: any), or of `batch_shape`; None in `shape` is any size.
    Keras 3's arguments, and no others (`type_spec=`, TensorFlow's Keras 2 argument, is
    Python's TypeError, as in Keras 3).

    >>> tt.keras.Input(shape=(None, 3), dtype="int32").shape
    (None, None, 3)
    """
    if tensor is not None:
        raise NotImplementedError("tt.keras.Input: tracer makes its own input tensor (no tensor=)")
    layer = InputLayer(
        shape, batch_size, dtype, sparse, ragged, batch_shape, name=name, optional=optional
    )
    return layer.output


def _batch_shape(shape, batch_size, batch_shape):
    if batch_shape is not None:
        if shape is not None or batch_size is not None:
            raise ValueError("tt.keras.Input takes `shape` (and `batch_size`) or `batch_shape`")
        return tuple(None if d is None else int(d) for d in batch_shape)
    if shape is None:
        raise ValueError(
            "tt.keras.Input needs a `shape` (without the batch axis) or a `batch_shape`"
        )
    if isinstance(shape, int):
        shape = (shape,)
    return (batch_size, *shape)
