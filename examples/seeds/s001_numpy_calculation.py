"""A step done in NumPy cuts the recorded path, so the gradient is None (seed 001, the autodiff
guide notebook, cell In [18], the second cause of a None gradient)."""

import numpy as np

import tracer as tt

grid = tt.Variable([[1.0, 2.0], [3.0, 4.0]])

with tt.GradientTape() as tape:
    squares = grid**2
    column_means = np.mean(squares, axis=0)  # a NumPy array: the tape sees nothing here
    overall = tt.reduce_mean(column_means)

print(tape.gradient(overall, grid))
