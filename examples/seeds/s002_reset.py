"""`reset()` inside one tape context does what closing it and opening a new tape does: only
what comes after is differentiated (seed 002, the TF 1.x-era `GradientTape` page, method
`reset`).

The seed leaves both losses abstract; here they are w * w (slope 4.0 at w = 2) and 3 * w
(slope 3.0), so a slope of 3.0 rather than 7.0 shows the first loss was forgotten.
"""

import tracer as tt

weight = tt.Variable(2.0)


def quadratic():
    return weight * weight


def linear():
    return 3.0 * weight


def slope_with_second_tape():
    with tt.GradientTape() as tape:
        total = quadratic()
    with tt.GradientTape() as tape:
        total = total + linear()
    return total, tape.gradient(total, weight)


def slope_with_reset():
    with tt.GradientTape() as tape:
        total = quadratic()
        tape.reset()
        total = total + linear()
    return total, tape.gradient(total, weight)


_, slope_second_tape = slope_with_second_tape()
total, slope_reset = slope_with_reset()

assert total.numpy() == 10.0, total
assert slope_second_tape.numpy() == 3.0, slope_second_tape
assert slope_reset.numpy() == 3.0, slope_reset
