"""`reset()` called from a branch inside the tape's context, where the context cannot be left
(seed 003, the TF 2.4 `tf.GradientTape` page, method `reset`).

The seed leaves the loss and the threshold abstract; here a helper resets the tape when the
loss w * w = 4.0 exceeds 1.0, so the loss recorded before the reset has no gradient.
"""

import tracer as tt


def square_and_maybe_reset(tape, value, limit):
    loss = value * value
    if loss > limit:
        tape.reset()
    return loss


weight = tt.Variable(2.0)
with tt.GradientTape() as tape:
    loss = square_and_maybe_reset(tape, weight, limit=1.0)

slope = tape.gradient(loss, weight)
assert slope is None, slope
