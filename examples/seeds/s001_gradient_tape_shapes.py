"""Each gradient has the shape of the source it was taken with respect to (seed 001, the
autodiff guide notebook, cell In [3], "Gradient tapes").

The weights start random, so only shapes are printed.
"""

import tracer as tt

weights = tt.Variable(tt.random.normal((3, 2)), name="weights")
offset = tt.Variable(tt.zeros(2), name="offset")
row = tt.constant([[1.0, 2.0, 3.0]])

with tt.GradientTape() as tape:
    prediction = tt.matmul(row, weights) + offset
    cost = tt.reduce_mean(tt.square(prediction))

weights_grad, offset_grad = tape.gradient(cost, [weights, offset])

print(weights.shape)
print(weights_grad.shape)
