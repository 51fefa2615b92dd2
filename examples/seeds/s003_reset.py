"""Clearing a tape with `reset()` matches starting a fresh tape: the loss recorded before it is
not differentiated (seed 003, the TF 2.4 `tf.GradientTape` page, method `reset`).

The seed leaves both losses abstract; here they are w * w (slope 4.0 at w = 2) and 3 * w
(slope 3.0), so a slope of 3.0, not 7.0, shows that the first one was dropped.
"""

import tracer as tt

weight = tt.Variable(2.0)
parts = (lambda: weight * weight, lambda: 3.0 * weight)

# A new tape for the second part.
with tt.GradientTape() as tape:
    total = parts[0]()
with tt.GradientTape() as tape:
    total = total + parts[1]()
slope_second_tape = tape.gradient(total, weight)

# One tape, cleared between the parts.
with tt.GradientTape() as tape:
    total = parts[0]()
    for part in parts[1:]:
        tape.reset()  # forget what was recorded so far
        total = total + part()
slope_reset = tape.gradient(total, weight)

assert total.numpy() == 10.0, total
assert slope_second_tape.numpy() == 3.0, slope_second_tape
assert slope_reset.numpy() == 3.0, slope_reset
