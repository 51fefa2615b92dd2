"""`tt.keras.activations`: Keras's activation functions by their Keras names, composed of
tracer's ops, so they are differentiable and compile under `tt.function`.

>>> tt.keras.activations.get("relu")(tt.constant([-1.0, 2.0])).numpy()
array([0., 2.], dtype=float32)

`get(None)` is `linear`, as in Keras 3 (`tt.layers.get_activation` keeps its own table).

As Keras 3's, `sigmoid` and `softmax` note on their output the logits it came from
(`logits_of`), and the crossentropy losses compute from those, so a saturated probability
still gives the exact loss and gradient.
"""

import weakref

from tracer.ops import array_ops, math_ops, nn_ops
from tracer.ops.convert import as_tensor

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    """max(x, 0), generalised as Keras's: values at or below `threshold` become
    `negative_slope * (x - threshold)`, and the result is capped at `max_value`.

    >>> relu(tt.constant([-2.0, 1.0, 9.0]), max_value=6.0).numpy()
    array([0., 1., 6.], dtype=float32)
    """
    x = as_tensor(x)
    if negative_slope and max_value is None and not threshold:
        return leaky_relu(x, negative_slope)
    if threshold:
        y = math_ops.where(x > threshold, x, 0.0)
    elif max_value == 6:
        y, max_value = nn_ops.relu6(x), None
    else:
        y = math_ops.relu(x)
    if max_value is not None:
        y = math_ops.clip_by_value(y, 0.0, max_value)
    if negative_slope:
        y = y - negative_slope * math_ops.relu(threshold - x)
    return y


def leaky_relu(x, negative_slope=0.2):
    """x for x > 0, `negative_slope * x` otherwise (so the gradient at 0 is the slope, as
    TensorFlow's)."""
    x = as_tensor(x)
    return math_ops.where(x > 0.0, x, negative_slope * x)


def relu6(x):
    """min(max(x, 0), 6)."""
    return nn_ops.relu6(x)


def elu(x, alpha=1.0):
    """x for x > 0, `alpha * (exp(x) - 1)` otherwise: tt.nn.elu, scaled where x <= 0 for
    another alpha, as Keras 3 on TensorFlow (so at 0 the derivative is 1 for alpha 1, else
    alpha)."""
    result = nn_ops.elu(x)
    if alpha == 1.0:
        return result
    return math_ops.where(result > 0.0, result, alpha * result)


def selu(x):
    """`scale * elu(x, alpha)` with the self-normalising constants of Klambauer et al.

    At exactly 0 the gradient is `scale`, the linear branch's, as TF's SeluGrad (Keras 3's
    selu) gives; `elu`'s own gradient at 0 takes the exponential branch, as tf.nn.elu's."""
    x = as_tensor(x)
    negative = _SELU_ALPHA * (math_ops.exp(math_ops.minimum(x, 0.0)) - 1.0)
    return _SELU_SCALE * math_ops.where(x < 0.0, negative, x)


def sigmoid(x):
    """1 / (1 + exp(-x)); the output remembers `x` as its logits (see `logits_of`)."""
    return _with_logits(math_ops.sigmoid(x), x)


def tanh(x):
    return math_ops.tanh(x)


def softplus(x):
    """log(1 + exp(x))."""
    return math_ops.softplus(x)


def softsign(x):
    """x / (1 + |x|)."""
    return math_ops.softsign(x)


def silu(x):
    """x * sigmoid(x), also called swish."""
    x = as_tensor(x)
    return x * math_ops.sigmoid(x)


swish = silu


def hard_sigmoid(x):
    """relu6(x + 3) / 6: 0 up to -3, 1 from 3, `x / 6 + 0.5` between, as Keras 3 defines it
    (so its gradient is relu6's, 0 at -3 and at 3)."""
    x = as_tensor(x)
    return nn_ops.relu6(x + 3.0) / 6.0


def hard_silu(x):
    """x * hard_sigmoid(x), also called hard_swish: silu's piecewise-quadratic
    approximation (0 up to -3, x from 3)."""
    x = as_tensor(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def gelu(x, approximate=False):
    """x * Phi(x) (the normal CDF); with `approximate`, the tanh form."""
    return nn_ops.gelu(x, approximate=approximate)


def mish(x):
    """x * tanh(softplus(x))."""
    x = as_tensor(x)
    return x * math_ops.tanh(math_ops.softplus(x))


def exponential(x):
    return math_ops.exp(x)


def linear(x):
    """The identity (as a tensor)."""
    return array_ops.identity(as_tensor(x))


def applied(activation, y):
    """`activation` of a layer's newly computed `y`: `y` itself where it is `linear` (a Dense
    or Conv2D without activation records and runs no identity op, as Keras's linear is `y`);
    relu with its defaults is the op itself, without the questions its generalisation asks
    (a small layer's eager call is mostly such overhead)."""
    if activation is relu:
        return math_ops.relu(y)
    return y if activation is linear else activation(y)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) over `axis`; the output remembers `x` as its logits."""
    return _with_logits(nn_ops.softmax(x, axis=axis), x)


# id(output) -> (a weak reference to the output, its logits): Keras 3 sets
# `output._keras_logits`; tracer's Tensor has fixed slots, which its C op path lays out.
_LOGITS = {}


def _with_logits(output, logits):
    key = id(output)

    def forget(reference):
        if _LOGITS.get(key, (None,))[0] is reference:
            del _LOGITS[key]

    _LOGITS[key] = (weakref.ref(output, forget), logits)
    return output


def logits_of(output):
    """The logits that Keras's `sigmoid` or `softmax` computed `output` from, else None: Keras
    3's crossentropies use them in place of the probabilities (only for that very tensor, so
    a slice, a cast or a reshape of it does not carry them, as in Keras).

    >>> z = tt.constant([[-30.0]])
    >>> logits_of(sigmoid(z)) is z, logits_of(tt.sigmoid(z))
    (True, None)
    """
    entry = _LOGITS.get(id(output))
    if entry is None or entry[0]() is not output:
        return None
    return entry[1]


def log_softmax(x, axis=-1):
    return nn_ops.log_softmax(x, axis=axis)


# Keras's names; "swish" and "hard_swish" are aliases, so serialize(swish) gives "silu" as in
# Keras.
_BY_NAME = {
    fn.__name__: fn
    for fn in (
        relu,
        leaky_relu,
        relu6,
        elu,
        selu,
        sigmoid,
        tanh,
        softplus,
        softsign,
        silu,
        hard_sigmoid,
        hard_silu,
        gelu,
        mish,
        exponential,
        linear,
        softmax,
        log_softmax,
    )
}
_ALIASES = {"swish": silu, "hard_swish": hard_silu}


def get(identifier):
    """The activation function for a Keras name, a callable (returned as is) or None
    (`linear`).

    >>> tt.keras.activations.get("swish") is tt.keras.activations.silu
    True
    """
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        fn = _BY_NAME.get(identifier) or _ALIASES.get(identifier)
        if fn is not None:
            return fn
    elif callable(identifier):
        return identifier
    names = ", ".join(repr(name) for name in sorted(_BY_NAME.keys() | _ALIASES.keys()))
    raise ValueError(f"unknown activation {identifier!r}; use a callable, None or one of {names}")


def serialize(activation):
    """The Keras name of one of this module's activations.

    >>> tt.keras.activations.serialize(tt.keras.activations.relu)
    'relu'
    """
    for name, fn in _BY_NAME.items():
        if fn is activation:
            return name
    raise ValueError(f"cannot serialize {activation!r}: it is not one of Keras's activations")


__all__ = sorted(_BY_NAME.keys() | _ALIASES.keys() | {"get", "serialize"})
