"""Nested tapes where only the inner one watches the constant (seed 002, the TF 1.x-era
`GradientTape` page, nested tapes).

The seed expects a second derivative of 2.0 from this setup. tracer follows TensorFlow 2.x
(API.md, "Details that follow TensorFlow 2.x"): the outer tape never watched the constant, so
its gradient is None. The script asserts a first derivative of 6.0 and a None second one.
"""

import tracer as tt


def slope_of_square(point):
    with tt.GradientTape() as inner:
        inner.watch(point)
        area = point * point
    return inner.gradient(area, point)


point = tt.constant(3.0)
with tt.GradientTape() as outer:  # never told to watch `point`
    slope = slope_of_square(point)
curvature = outer.gradient(slope, point)

assert slope.numpy() == 6.0, slope
assert curvature is None, curvature
