"""Catalogue cases of erfc (tracer/ops/math_ops.py: libm's, with its gradient -2/sqrt(pi)
exp(-x^2)) and of the compositions around it: GELU far on the negative side, where its
distribution function is erfc's (tiny values with the formula's slope, not 0), and
tf.math.multiply_no_nan (mul_no_nan's). Their values against TensorFlow's are
tests/test_ops_added.py's.

The special functions of tracer/ops/special_ops.py: lgamma, digamma, zeta, polygamma, ndtri,
the Bessel functions i0, i0e, i1, i1e on both sides of |x| = 20 (where the power series gives
way to the asymptotic expansion), igamma and igammac on both sides of x = a + 1 (series,
continued fraction), and the compositions erfinv and lbeta. zeta, polygamma, igamma and
igammac are differentiated in their second input: TensorFlow's zeta and polygamma have no
gradient in their first (the case holds it constant). Their values against TensorFlow's are
tests/test_special_ops.py's."""

import numpy as np

import tracer as tt
from tracer.ops.core import apply_binary
from tracer.ops.special_ops import IGAMMA_GRAD_A

rng = np.random.default_rng(20261212)


def normal(*shape):
    return rng.standard_normal(shape)


def uniform(low, high, *shape):
    return rng.uniform(low, high, shape)


# orders and exponents held constant (float64, as the cases' arguments)
ZETA_S = tt.constant([[1.5], [2.0], [3.5]], dtype=tt.float64)
POLYGAMMA_N = tt.constant([0.0, 1.0, 2.0, 3.0], dtype=tt.float64)
IGAMMA_A = tt.constant([0.6, 2.5, 5.0], dtype=tt.float64)
BESSEL_X = [np.array([-25.0, -3.0, -0.5, 0.7, 4.0, 22.0]) + uniform(-0.1, 0.1, 6)]

CASES = {
    # both tails: erfc near 2 on the left, near 0 on the right
    "erfc": (lambda x: tt.math.erfc(x) * x, [normal(2, 3) * 1.5]),
    # both sides of 0 (between the poles) and large x
    "lgamma": (
        tt.math.lgamma,
        [np.concatenate([uniform(0.2, 8.0, 4), -2.5 + uniform(-0.3, 0.3, 2), [40.5]])],
    ),
    "digamma": (
        tt.math.digamma,
        [np.concatenate([uniform(0.2, 14.0, 4), -1.5 + uniform(-0.3, 0.3, 2)])],
    ),
    "zeta": (lambda q: tt.math.zeta(ZETA_S, q), [uniform(0.3, 12.0, 4)]),
    "polygamma": (lambda x: tt.math.polygamma(POLYGAMMA_N, x), [uniform(0.4, 12.0, 3, 4)]),
    "ndtri": (tt.math.ndtri, [np.concatenate([uniform(0.02, 0.98, 4), [0.003, 0.6]])]),
    "bessel_i0": (tt.math.bessel_i0, BESSEL_X),
    "bessel_i0e": (tt.math.bessel_i0e, BESSEL_X),
    "bessel_i1": (tt.math.bessel_i1, BESSEL_X),
    "bessel_i1e": (tt.math.bessel_i1e, BESSEL_X),
    # x on both sides of a + 1: the series below, the continued fraction above
    "igamma": (lambda x: tt.math.igamma(IGAMMA_A, x), [uniform(0.2, 9.0, 2, 3)]),
    "igammac": (lambda x: tt.math.igammac(IGAMMA_A, x), [uniform(0.2, 9.0, 2, 3)]),
}

# igamma's derivative in a, through which no gradient flows (TensorFlow's IgammaGradA has none)
NO_GRADIENT = {
    "igamma_grad_a": lambda x: apply_binary(IGAMMA_GRAD_A, tt.constant(2.5, tt.float64), x * x),
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
    # ndtri((x + 1) / 2) / sqrt(2), into both tails
    "erfinv": (tt.math.erfinv, [np.concatenate([uniform(-0.9, 0.9, 4), [-0.99, 0.995]])]),
    "lbeta": (tt.math.lbeta, [uniform(0.3, 5.0, 2, 3)]),
}
