"""Several tapes at once, and gradients of gradients.

* Two tapes recording the same computation, each watching a different input, give each
  input's own partial derivative (at 0: cos 0 = 1 for sin, and 0.25 for the sigmoid, the
  values TensorFlow's advanced-autodiff guide gives).
* A gradient taken inside an outer tape is itself differentiable: the outer tape gives the
  second derivative (3 and 6 for x**3 at x = 1 in the guide).
* The same nesting with a layer: an inner tape that watches only the input gives the
  input gradient, and the outer tape differentiates that gradient's norm with respect to
  the layer's weights (a penalty on input gradients), checked here against central
  finite differences in float64.
"""

import numpy as np

import tracer as tt


def sigmoid64(z):
    return 1.0 / (1.0 + np.exp(-z))


# one tape per input
for p0, q0 in [(0.0, 0.0), (1.2, -0.7)]:
    p, q = tt.constant(p0), tt.constant(q0)
    with tt.GradientTape() as tape_p, tt.GradientTape() as tape_q:
        tape_p.watch(p)
        tape_q.watch(q)
        total = tt.reduce_sum(tt.math.sin(p) + tt.nn.sigmoid(q))
    d_p = tape_p.gradient(total, p).numpy()
    d_q = tape_q.gradient(total, q).numpy()
    if p0 == q0 == 0.0:
        assert d_p == 1.0 and d_q == 0.25
    np.testing.assert_allclose(d_p, np.cos(p0), rtol=1e-6)
    np.testing.assert_allclose(d_q, sigmoid64(q0) * (1 - sigmoid64(q0)), rtol=1e-6)


# second derivatives of a cube: 3 x**2, then 6 x
def first_and_second(x0):
    x = tt.Variable(x0)
    with tt.GradientTape() as outer:
        with tt.GradientTape() as inner:
            cube = x * x * x
        slope = inner.gradient(cube, x)  # recorded by `outer`
    return slope.numpy(), outer.gradient(slope, x).numpy()


assert first_and_second(1.0) == (3.0, 6.0)
for x0 in [-2.0, 0.5, 3.0]:
    np.testing.assert_allclose(first_and_second(x0), [3 * x0**2, 6 * x0], rtol=1e-6)


# penalising the input gradient of a ReLU layer
inputs = tt.random.normal([7, 5], seed=3)
relu_layer = tt.keras.layers.Dense(10, activation=tt.nn.relu)


def input_grad_norm(layer, batch):
    with tt.GradientTape() as weights_tape:
        with tt.GradientTape(watch_accessed_variables=False) as input_tape:
            input_tape.watch(batch)
            energy = tt.reduce_sum(layer(batch) ** 2)
        norm = tt.norm(input_tape.gradient(energy, batch))
    return norm, weights_tape.gradient(norm, layer.trainable_variables)


norm, (d_kernel, d_bias) = input_grad_norm(relu_layer, inputs)
assert d_kernel.shape == (5, 10) and d_bias.shape == (10,)


def input_grad_norm64(x, kernel, bias):
    # energy = sum(relu(x K + b)**2) has input gradient 2 relu(x K + b) K^T
    return np.linalg.norm(2.0 * np.maximum(x @ kernel + bias, 0.0) @ kernel.T)


x64 = inputs.numpy().astype(np.float64)
kernel64 = relu_layer.kernel.numpy().astype(np.float64)
bias64 = relu_layer.bias.numpy().astype(np.float64)
np.testing.assert_allclose(norm.numpy(), input_grad_norm64(x64, kernel64, bias64), rtol=1e-5)

step = 1e-6
for analytic, param in [(d_kernel, kernel64), (d_bias, bias64)]:
    numeric = np.zeros_like(param)
    for idx in np.ndindex(param.shape):
        saved = param[idx]
        param[idx] = saved + step
        up = input_grad_norm64(x64, kernel64, bias64)
        param[idx] = saved - step
        down = input_grad_norm64(x64, kernel64, bias64)
        param[idx] = saved
        numeric[idx] = (up - down) / (2 * step)
    np.testing.assert_allclose(analytic.numpy(), numeric, rtol=1e-3, atol=1e-4)
print("higher-order gradients: ok")
