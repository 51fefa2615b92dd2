"""`batch_jacobian` gives one jacobian per row: for the elementwise square of a (2, 2) batch
each is diagonal, twice that row (seed 003, the TF 2.4 `tf.GradientTape` page, method
`batch_jacobian`). The seed gives the value in a comment; the script asserts it."""

import numpy as np

import tracer as tt

rows = tt.constant([[1.0, 2.0], [3.0, 4.0]])
with tt.GradientTape() as tape:
    tape.watch(rows)
    squares = rows * rows

per_row = tape.batch_jacobian(squares, rows)

# [[[2, 0], [0, 4]], [[6, 0], [0, 8]]]
expected = np.stack([np.diag(2.0 * row) for row in rows.numpy()])
np.testing.assert_array_equal(per_row.numpy(), expected)
assert per_row.shape == (2, 2, 2)
