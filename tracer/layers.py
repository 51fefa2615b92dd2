"""`tt.layers`: the Keras layers under tracer's short name (`tt.layers.Dense` is
`tt.keras.layers.Dense`)."""

from tracer.keras.layers import (  # noqa: F401
    Conv2D,
    Dense,
    Dropout,
    Embedding,
    Flatten,
    Layer,
    MaxPool2D,
)
from tracer.keras.models import Sequential  # noqa: F401
