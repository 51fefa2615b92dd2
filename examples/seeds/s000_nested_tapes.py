"""Higher derivatives from nested tapes: an outer and an inner tape both watch the same
constant, giving the first and second derivative of its square (seed 000, nested tapes)."""

import tracer as tt

point = tt.constant(5.0)
with tt.GradientTape() as outer:
    outer.watch(point)
    with tt.GradientTape() as inner:
        inner.watch(point)
        area = point * point
    # Taken while `outer` still records, so it can be differentiated again.
    first = inner.gradient(area, point)
second = outer.gradient(first, point)

for derivative in (first, second):
    print(derivative)
