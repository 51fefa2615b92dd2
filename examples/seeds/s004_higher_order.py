"""A gradient taken while an outer tape records can itself be differentiated, giving the second
derivative of x**3 at 1.0 (seed 004, the older eager-mode tutorial, "Higher-order
gradients")."""

import tracer as tt

start = tt.Variable(1.0)
with tt.GradientTape() as outer:
    with tt.GradientTape() as inner:
        cube = start**3
    first_derivative = inner.gradient(cube, start)  # still inside `outer`
second_derivative = outer.gradient(first_derivative, start)

assert first_derivative.numpy() == 3.0, first_derivative
assert second_derivative.numpy() == 6.0, second_derivative
