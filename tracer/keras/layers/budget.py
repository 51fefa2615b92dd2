"""A bound on the bytes of the weights that layers make while a file's config builds a model.

A `.keras` file's config says how large each layer is, and building the model makes its
weights before they are compared with the file's: a damaged or hostile config declaring a
Dense layer of 10^9 units made gigabytes of weights from a file of a kilobyte. While
`load_model` builds from a config, each `add_weight` counts its bytes against what the
file's weights can hold, and a weight past that is refused with a ValueError that names the
layer, the weight and its shape, before anything is allocated.
"""

import contextlib
import contextvars
import math

# (bytes still allowed, what the bound is of), while a config is being built
_bound = contextvars.ContextVar("weight_budget", default=None)


@contextlib.contextmanager
def bounded(limit, source):
    """Weights made inside may take `limit` bytes in all; `source` names the file."""
    token = _bound.set([limit, source])
    try:
        yield
    finally:
        _bound.reset(token)


def claim(layer, name, shape, dtype):
    """Count a new weight of `layer` against the bound, if one is set; ValueError past it."""
    bound = _bound.get()
    if bound is None:
        return
    size = math.prod(shape) * dtype.itemsize
    if size > bound[0]:
        raise ValueError(
            f"{bound[1]}: layer {layer.name!r} would make its weight {name!r} of shape "
            f"{tuple(shape)} ({size} bytes), more than the file's weights can hold; the "
            "config does not match its weights (refusing to build it)"
        )
    bound[0] -= size
