"""The first thing to run: a gradient, a second derivative, and the IR the tape recorded."""

import tracer as tt

x = tt.constant(3.0)
with tt.GradientTape() as outer:
    outer.watch(x)
    with tt.GradientTape(persistent=True) as inner:
        inner.watch(x)
        y = x * x * tt.sin(x)
    dy_dx = inner.gradient(y, x)
d2y_dx2 = outer.gradient(dy_dx, x)

print("y        =", y)
print("dy/dx    =", dy_dx)
print("d2y/dx2  =", d2y_dx2)
print()
print("What the inner tape recorded:")
print(inner.ir())
