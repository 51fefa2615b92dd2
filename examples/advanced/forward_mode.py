"""Forward-mode autodiff with tt.autodiff.ForwardAccumulator.

* A Jacobian-vector product: how a Dense layer's squared-error loss changes when its
  kernel moves along a chosen direction, checked against the analytic derivative.
* A Hessian-vector product by forward-over-backward: an accumulator around a
  GradientTape differentiates the tape's gradient along a tangent. For sum(v**3) at
  v = [1, 2] with tangent [1, 3], TensorFlow's ForwardAccumulator reference documents a
  gradient of [3, 12] and a product of [6, 36].
* The functional form tt.jvp, and the Hessian-vector product inside a tt.function.
"""

import numpy as np

import tracer as tt

# Jacobian-vector products of a layer's loss along directions in kernel space
features = np.array([[0.5, -1.0], [2.0, 1.5], [-1.0, 3.0]], dtype=np.float32)
labels = np.array([[0.0], [1.0], [-2.0]], dtype=np.float32)
layer = tt.keras.layers.Dense(1)
layer.build([None, 2])

for direction in ([[1.0], [0.0]], [[0.0], [1.0]], [[-2.0], [0.5]]):
    with tt.autodiff.ForwardAccumulator(
        primals=layer.kernel, tangents=tt.constant(direction)
    ) as fwd:
        loss = tt.reduce_sum((layer(tt.constant(features)) - labels) ** 2.0)
    # loss = sum(r**2) with r = X K + b - y, so moving K along D changes it by sum(2 r (X D))
    x64 = features.astype(np.float64)
    r = x64 @ layer.kernel.numpy() + layer.bias.numpy() - labels
    terms = 2.0 * r * (x64 @ np.array(direction))
    # float32's rounding of a sum is relative to its terms' size, not to the sum's (the
    # kernel is drawn at random: some directions nearly cancel)
    scale = np.sum(np.abs(terms))
    np.testing.assert_allclose(fwd.jvp(loss).numpy(), np.sum(terms), rtol=1e-5, atol=1e-6 * scale)


def cube_sum(v):
    return tt.reduce_sum(v**3.0)


def grad_and_hvp(point, tangent):
    """The gradient of cube_sum at `point`, and its Hessian times `tangent`."""
    v = tt.Variable(point)
    with tt.autodiff.ForwardAccumulator(v, tt.constant(tangent)) as fwd:
        with tt.GradientTape() as tape:
            out = cube_sum(v)
        grad = tape.gradient(out, v)
    return grad.numpy(), fwd.jvp(grad).numpy()


grad, hvp = grad_and_hvp([1.0, 2.0], [1.0, 3.0])
np.testing.assert_array_equal(grad, [3.0, 12.0])
np.testing.assert_array_equal(hvp, [6.0, 36.0])

# the gradient is 3 v**2 and the Hessian is diag(6 v)
point, tangent = np.array([-1.5, 0.5, 4.0]), np.array([2.0, -1.0, 0.25])
grad, hvp = grad_and_hvp(point.tolist(), tangent.tolist())
np.testing.assert_allclose(grad, 3 * point**2, rtol=1e-6)
np.testing.assert_allclose(hvp, 6 * point * tangent, rtol=1e-6)

# tt.jvp returns the value and its directional derivative together
value, derivative = tt.jvp(lambda t: t * t, [tt.constant(3.0)], [tt.constant(1.0)])
assert value.numpy() == 9.0 and derivative.numpy() == 6.0


@tt.function
def compiled_hvp(point, tangent):
    with tt.autodiff.ForwardAccumulator(point, tangent) as fwd:
        with tt.GradientTape() as tape:
            tape.watch(point)
            out = cube_sum(point)
        grad = tape.gradient(out, point)
    return fwd.jvp(grad)


np.testing.assert_array_equal(
    compiled_hvp(tt.constant([1.0, 2.0]), tt.constant([1.0, 3.0])).numpy(), [6.0, 36.0]
)
print("forward mode: ok")
