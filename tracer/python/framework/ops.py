"""`tensorflow.python.framework.ops`'s public names that programs import, as tracer's."""

from tracer.compat.v1.graphs import (  # noqa: F401
    Graph,
    disable_eager_execution,
    enable_eager_execution,
    get_default_graph,
    reset_default_graph,
)
from tracer.framework import executing_eagerly  # noqa: F401
from tracer.tensor import Tensor, convert_to_tensor  # noqa: F401
