"""The slope of a watched constant's square at 3.0 is 6.0 (seed 002, the TF 1.x-era
`GradientTape` page, its first example). The seed gives the value only in a comment, so the
script asserts it."""

import tracer as tt

three = tt.constant(3.0)
with tt.GradientTape() as tape:
    tape.watch(three)
    nine = tt.multiply(three, three)
slope = tape.gradient(nine, three)

assert slope.numpy() == 6.0, slope
