"""First and second derivatives of a square at 5.0 from two nested tapes that both watch the
input (seed 003, the TF 2.4 `tf.GradientTape` page, nested tapes)."""

import tracer as tt


def first_and_second_derivative(at):
    point = tt.constant(at)
    with tt.GradientTape() as outer:
        outer.watch(point)
        with tt.GradientTape() as inner:
            inner.watch(point)
            area = point * point
        slope = inner.gradient(area, point)  # recorded by `outer`
    return slope, outer.gradient(slope, point)


slope, curvature = first_and_second_derivative(5.0)
print(slope)
print(curvature)
