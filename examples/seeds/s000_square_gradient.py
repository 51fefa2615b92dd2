"""The slope of a square at 3.0, from a tape told to watch a constant: the opening example of
seed 000 (the current `tf.GradientTape` reference page)."""

import tracer as tt


def slope_of_square(at):
    point = tt.constant(at)
    with tt.GradientTape() as tape:
        tape.watch(point)  # constants are not watched unless asked
        area = point * point
    return tape.gradient(area, point)


print(slope_of_square(3.0))
