"""Catalogue cases of erfc (tracer/ops/math_ops.py: libm's, with its gradient -2/sqrt(pi)
exp(-x^2)) and of the compositions around it: GELU far on the negative side, where its
distribution function is erfc's (tiny values with the formula's slope, not 0), and
tf.math.multiply_no_nan (mul_no_nan's). Their values against TensorFlow's are
tests/test_ops_added.py's."""

import numpy as np

import tracer as tt

rng = np.random.default_rng(20261212)


def normal(*shape):
    return rng.standard_normal(shape)


CASES = {
    # both tails: erfc near 2 on the left, near 0 on the right
    "erfc": (lambda x: tt.math.erfc(x) * x, [normal(2, 3) * 1.5]),
}

COMPOSITES = {
    # from -9 to -6: P(x) is 1e-19 to 1e-9 there, where 1 + erf(x / sqrt(2)) was 0 or
    # rounding; scaled up so that finite differences see it
    "gelu_far_negative": (
        lambda x: tt.nn.gelu(x) * 1e9,
        [rng.uniform(-9.0, -6.0, (4,))],
    ),
    "multiply_no_nan": (
        lambda x, y: tt.math.multiply_no_nan(x * x, y),
        [normal(2, 3), normal(3)],
    ),
}
