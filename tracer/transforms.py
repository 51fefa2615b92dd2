"""Functional gradients, JAX style, built on GradientTape: `tt.grad` and `tt.value_and_grad`.

    df = tt.grad(lambda x: x ** 3)
    df(2.0)            # 12.0
    tt.grad(df)(2.0)   # 12.0: they compose, with each other and with tt.function

Unconnected arguments get zeros, as in JAX, not None.
"""

import functools

from tracer.tape import GradientTape, UnconnectedGradients
from tracer.tensor import TensorLike, convert_to_tensor
from tracer.variable import Variable


def value_and_grad(f, argnums=0):
    """A function returning (f(*args), the gradient of f with respect to args[argnums])."""
    positions = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        args = list(args)
        for k in positions:
            if not isinstance(args[k], Variable):
                args[k] = args[k] if isinstance(args[k], TensorLike) else convert_to_tensor(args[k])
        sources = [args[k] for k in positions]
        with GradientTape() as tape:
            tape.watch(sources)
            value = f(*args, **kwargs)
        grads = tape.gradient(value, sources, unconnected_gradients=UnconnectedGradients.ZERO)
        return value, grads[0] if isinstance(argnums, int) else tuple(grads)

    return wrapped


def grad(f, argnums=0):
    """A function returning the gradient of f (a scalar) with respect to args[argnums]."""
    value_and_gradient = value_and_grad(f, argnums)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        return value_and_gradient(*args, **kwargs)[1]

    return wrapped
