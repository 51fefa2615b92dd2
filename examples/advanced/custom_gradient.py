"""Custom gradients with tt.custom_gradient.

Two uses are shown, both documented by TensorFlow's advanced-autodiff guide and its
tf.custom_gradient reference, whose values the asserts hold:

* a function that is the identity going forward but caps the norm of the gradient that
  flows back through it (tt.clip_by_norm in the backward function);
* softplus, log(1 + e^x), whose gradient from plain autodiff is NaN for large x (e^x
  overflows float32) and whose hand-written gradient stays finite, eagerly and inside a
  tt.function.
"""

import numpy as np

import tracer as tt


def norm_capped_identity(max_norm):
    """An identity op whose backward pass shortens the upstream gradient to `max_norm`."""

    @tt.custom_gradient
    def capped(value):
        def backward(upstream):
            return tt.clip_by_norm(upstream, max_norm)

        return value, backward

    return capped


cap_half = norm_capped_identity(0.5)

# f(w) = scale * capped(w**2): the gradient reaching the identity is `scale`, cut to 0.5
# when larger; the chain rule then multiplies by 2w.
for w0, scale in [(2.0, 1.0), (3.0, 1.0), (2.0, 0.25), (-1.5, 4.0)]:
    w = tt.Variable(w0)
    with tt.GradientTape() as tape:
        f = scale * cap_half(w * w)
    want = min(abs(scale), 0.5) * np.sign(scale) * 2 * w0
    got = tape.gradient(f, w).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    if (w0, scale) == (2.0, 1.0):
        assert got == 2.0  # the value the guide gives

# a vector gradient keeps its direction and has its length cut
vec = tt.constant([1.0, -2.0, 2.0])
with tt.GradientTape() as tape:
    tape.watch(vec)
    f = tt.reduce_sum(tt.constant([3.0, 0.0, 4.0]) * cap_half(vec))
np.testing.assert_allclose(tape.gradient(f, vec).numpy(), [0.3, 0.0, 0.4], rtol=1e-6)


def naive_softplus(x):
    return tt.math.log(1.0 + tt.exp(x))


@tt.custom_gradient
def softplus(x):
    def backward(upstream):
        # d/dx log(1 + e^x) = 1 / (1 + e^-x), which never divides infinity by infinity
        return upstream / (1.0 + tt.exp(-x))

    return naive_softplus(x), backward


def slope(fn, at):
    point = tt.constant(at)
    with tt.GradientTape() as tape:
        tape.watch(point)
        out = fn(point)
    return tape.gradient(out, point).numpy()


with np.errstate(over="ignore", invalid="ignore"):
    assert np.isnan(slope(naive_softplus, 100.0))  # inf / inf on the way back
    assert slope(softplus, 100.0) == 1.0

for at in [-6.0, -0.5, 0.0, 2.0, 30.0]:
    np.testing.assert_allclose(slope(softplus, at), 1.0 / (1.0 + np.exp(-at)), rtol=1e-6)


@tt.function
def compiled_slope(point):
    with tt.GradientTape() as tape:
        tape.watch(point)
        out = softplus(point)
    return tape.gradient(out, point)


with np.errstate(over="ignore", invalid="ignore"):
    assert compiled_slope(tt.constant(100.0)).numpy() == 1.0
np.testing.assert_allclose(compiled_slope(tt.constant(-1.0)).numpy(), 1 / (1 + np.e), rtol=1e-6)
print("custom gradients: ok")
