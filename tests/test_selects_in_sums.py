"""A select summed over leading axes into a float32 column's double accumulator (a bias's
gradient through relu: the sum of select(y > 0, g, 0) over a batch of images). The modules are
built without trapping maths (codegen/build.py's FLAGS), so that GCC vectorizes that loop,
converting the elements a select leaves out as well; none of them reaches the sum (NaN and
infinities among them), and the sums are numpy's, added row after row in double."""

import numpy as np
import pytest

import tracer as tt

RNG = np.random.default_rng(29)


def _bias_gradient(x, b, g):
    with tt.GradientTape() as tape:
        tape.watch(b)
        y = tt.reduce_sum(tt.nn.relu(x + b) * g)
    return tape.gradient(y, b)


@pytest.mark.parametrize("shape", [(8, 8, 8, 16), (300, 40)])
def test_a_relus_bias_gradient_sums_only_what_its_select_keeps(shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    b = RNG.standard_normal(shape[-1:]).astype(np.float32)
    g = RNG.standard_normal(shape).astype(np.float32)
    off = x + b <= 0
    g[off] = RNG.choice(np.array([np.nan, np.inf, -np.inf], np.float32), int(off.sum()))
    got = tt.function(_bias_gradient, backend="c")(x, b, g).numpy()
    kept = np.where(off, 0, g).astype(np.float64).reshape(-1, shape[-1])
    want = np.add.reduce(kept, axis=0).astype(np.float32)  # row after row, in double
    assert np.isfinite(got).all()
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
