"""A tape reset from inside an `if`, where leaving the context is not an option (seed 002, the
TF 1.x-era `GradientTape` page, method `reset`).

The seed leaves the loss and the threshold abstract; here the loss is w * w = 4.0. Above a
threshold of 10.0 nothing happens and the slope is 4.0; above 1.0 the tape is reset, and the
loss, recorded before the reset, has no gradient.
"""

import tracer as tt

weight = tt.Variable(2.0)


def slope_after_check(threshold):
    with tt.GradientTape() as tape:
        penalty = weight * weight
        if penalty > threshold:
            tape.reset()
    return tape.gradient(penalty, weight)


assert slope_after_check(10.0).numpy() == 4.0
slope = slope_after_check(1.0)
assert slope is None, slope
