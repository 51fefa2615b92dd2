"""Jacobians from a GradientTape, with the shapes TensorFlow's advanced-autodiff guide
documents for the same sizes.

* A scalar source: the jacobian of a vector of sigmoids with respect to one shift is one
  derivative per element, s (1 - s).
* A layer's kernel as the source: the jacobian has the target's shape followed by the
  kernel's, and summing it over the target's axes gives tape.gradient.
* A Hessian: the jacobian of a gradient with respect to the same kernel, symmetric once
  flattened to a square matrix.
* tape.batch_jacobian: for a batch whose rows do not mix, the per-example jacobian equals
  the full jacobian summed over its second batch axis.
"""

import numpy as np

import tracer as tt

BATCH, IN, HIDDEN, OUT = 7, 5, 8, 6


def max_abs_diff(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


# one scalar source, many targets
grid = tt.linspace(-10.0, 10.0, 201)
shift = tt.Variable(0.0)
with tt.GradientTape() as tape:
    curve = tt.nn.sigmoid(grid + shift)
d_curve = tape.jacobian(curve, shift)
assert curve.shape == (201,) and d_curve.shape == (201,)
s64 = 1.0 / (1.0 + np.exp(-np.linspace(-10.0, 10.0, 201)))
np.testing.assert_allclose(d_curve.numpy(), s64 * (1.0 - s64), rtol=1e-4, atol=1e-7)

# a kernel as the source
batch = tt.random.normal([BATCH, IN], seed=21)
wide = tt.keras.layers.Dense(10, activation=tt.nn.relu)
with tt.GradientTape(persistent=True) as tape:
    activations = wide(batch)
jac = tape.jacobian(activations, wide.kernel)
grad = tape.gradient(activations, wide.kernel)
assert activations.shape == (BATCH, 10) and wide.kernel.shape == (IN, 10)
assert jac.shape == (BATCH, 10, IN, 10)
assert max_abs_diff(grad, tt.reduce_sum(jac, axis=[0, 1])) < 1e-3


# the Hessian of a two-layer loss with respect to the first kernel
def two_layer_loss(first, second, x):
    return tt.reduce_mean(second(first(x)) ** 2)


first = tt.keras.layers.Dense(HIDDEN, activation=tt.nn.relu)
second = tt.keras.layers.Dense(OUT, activation=tt.nn.relu)
batch = tt.random.normal([BATCH, IN], seed=22)
with tt.GradientTape() as outer:
    with tt.GradientTape() as inner:
        loss = two_layer_loss(first, second, batch)
    grad = inner.gradient(loss, first.kernel)
hessian = outer.jacobian(grad, first.kernel)
assert first.kernel.shape == (IN, HIDDEN)
assert hessian.shape == (IN, HIDDEN, IN, HIDDEN)
size = IN * HIDDEN
square = tt.reshape(hessian, [size, size]).numpy()
np.testing.assert_allclose(square, square.T, atol=1e-5)

# per-example jacobians of a smooth two-layer network
first = tt.keras.layers.Dense(HIDDEN, activation=tt.nn.elu)
second = tt.keras.layers.Dense(OUT, activation=tt.nn.elu)
batch = tt.random.normal([BATCH, IN], seed=23)
with tt.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
    tape.watch(batch)
    outputs = second(first(batch))
full = tape.jacobian(outputs, batch)
per_example = tape.batch_jacobian(outputs, batch)
assert outputs.shape == (BATCH, OUT)
assert full.shape == (BATCH, OUT, BATCH, IN)
assert per_example.shape == (BATCH, OUT, IN)
summed = tt.reduce_sum(full, axis=2)
assert summed.shape == (BATCH, OUT, IN)
assert max_abs_diff(per_example, summed) < 1e-3
print("jacobians: ok")
