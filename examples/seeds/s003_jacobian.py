"""The jacobian of an elementwise square of [1.0, 2.0] is diagonal, [[2, 0], [0, 4]] (seed 003,
the TF 2.4 `tf.GradientTape` page, method `jacobian`). The seed gives the value in a comment;
the script asserts it."""

import numpy as np

import tracer as tt

pair = tt.constant([1.0, 2.0])
with tt.GradientTape() as tape:
    tape.watch(pair)
    squares = pair * pair

jac = tape.jacobian(squares, pair)

np.testing.assert_array_equal(jac.numpy(), np.diag([2.0, 4.0]))
assert jac.shape == (2, 2)
