"""Special functions, as TensorFlow's `tf.math`: lgamma, digamma, polygamma, the Hurwitz zeta,
ndtri and erfinv, the modified Bessel functions of orders 0 and 1 (bessel_i0, i0e, i1, i1e),
lbeta, and the regularized incomplete gamma functions igamma and igammac.

numpy has none of them and scipy is no dependency: each primitive's eager kernel is vectorized
numpy written here, and its C form a helper function in C written beside it with the same
algorithm, operation for operation, so that eager, interpreter and compiled values agree to an
ulp or two. Both compute in double: float32 and float16 values are widened, computed and
rounded once (float16 through float, as the C stores it). TensorFlow computes float32 in float
(Eigen's float versions), so its float32 values differ from these by a few of its ulps.

The methods are the textbooks' (Abramowitz and Stegun, the DLMF), in code of our own; every
series coefficient is derived below from the Bernoulli numbers, as exact fractions:

    lgamma      glibc's, re-entrant (`lgamma_r`: the threads of a loop share no `signgam`),
                eagerly through cffi's ABI mode, element by element
    digamma     the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then Stirling's
                series in 1/x^2 (DLMF 5.11.2); reflection psi(1 - x) - pi / tan(pi x) below 0
    zeta(s, q)  Euler-Maclaurin summation (DLMF 2.10): terms (q + k)^-s up to w = q + n past
                max(10, 2 (s + 24) / pi), then the integral, half the last term and twelve
                Bernoulli corrections; the sum ends early where the terms left are below an
                ulp of it
    polygamma   (-1)^(n+1) n! zeta(n + 1, x), n! as exp(lgamma(n + 1)) (TensorFlow's); digamma
                at n = 0
    ndtri       Halley's iteration on Phi(x) = p from Hastings' rational first guess
                (A&S 26.2.23, within 4.5e-4), three steps; the residual through erf near the
                middle (relative accuracy for p near 1/2) and erfc in the tails
    erfinv      ndtri((x + 1) / 2) / sqrt(2), TensorFlow's own composition (a composition)
    i0e, i1e    the power series of I0 and I1 (all terms positive) times exp(-|x|) up to
                |x| = 20, then Hankel's asymptotic expansion (DLMF 10.40.1) in 1/|x|, forty
                terms, all smaller than e^-40 of the sum at |x| = 20
    i0, i1      exp(|x|) times i0e or i1e, as TensorFlow computes them (inf past 709.78)
    igamma      the series of P(a, x) (DLMF 8.7) where x <= 1 or x <= a (TensorFlow's choice),
    igammac     Legendre's continued fraction of Q(a, x) (DLMF 8.9) elsewhere, by its
                convergents' three-term recurrences, rescaled; the prefactor
                x^a e^-x / Gamma(a) from lgamma; d/da by the same sums differentiated term
                by term (igamma_grad_a)
    lbeta       sum(lgamma(x)) - lgamma(sum(x)) over the last axis (a composition)

Gradients are TensorFlow's: lgamma' = digamma, digamma' = polygamma(1, x) = zeta(2, x),
d zeta / dq = -s zeta(s + 1, q) (none for s, as TensorFlow's), polygamma's d/dx is
polygamma(n + 1, x) (none for n), ndtri' = sqrt(2 pi) exp(ndtri^2 / 2); i0' = i1,
i1' = i0 - i1 / x (1/2 at 0), i0e' = i1e - sign(x) i0e, i1e' = i0e - i1e (sign(x) + 1/x)
(1/2 at 0); d igamma / dx = x^(a-1) e^-x / Gamma(a). All are written with tracer's ops, so
every order follows.
"""

import functools
import math
from fractions import Fraction

import cffi
import numpy as np

from codegen import forms
from codegen.ctypes import compute
from runtime.kernels import KERNELS, quiet
from tracer.ops import array_ops, math_ops, shapes
from tracer.ops.broadcast_ops import broadcast_to, reduce_sum, unbroadcast
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply_binary, apply_unary, op_function
from tracer.ops.op_names import tf_op
from tracer.ops.registry import OUT, primitive
from tracer.ops.tangent_rules import DIAGONAL

# --- derived constants ----------------------------------------------------------------------


def _bernoulli_even(count):
    """[B_2, B_4, ..., B_2count] as exact fractions, from sum_{j<=m} C(m+1, j) B_j = 0."""
    numbers = [Fraction(1)]
    for m in range(1, 2 * count + 1):
        total = sum(math.comb(m + 1, j) * numbers[j] for j in range(m))
        numbers.append(-total / (m + 1))
    return [numbers[2 * k] for k in range(1, count + 1)]


_BERNOULLI = _bernoulli_even(12)
# Stirling's series of digamma: psi(x) ~ log x - 1/(2x) - sum_k B_2k / (2k x^2k)
_DIGAMMA_SERIES = [float(b / (2 * k)) for k, b in enumerate(_BERNOULLI[:8], 1)]
# Euler-Maclaurin's corrections of the zeta sum: B_2j / (2j)!
_ZETA_SERIES = [float(b / math.factorial(2 * j)) for j, b in enumerate(_BERNOULLI, 1)]
_ZETA_SHIFT = (10.0, 1000.0)  # the least and the most w = q + n where the terms give way
_EPSILON = 2.0**-53  # half an ulp of 1: where the terms left are below it, the sum ends
_PI = math.pi
_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT_HALF = math.sqrt(0.5)
# Hastings' first guess of the normal quantile (A&S 26.2.23): within 4.5e-4
_HASTINGS = (2.515517, 0.802853, 0.010328, 1.432788, 0.189269, 0.001308)
_HALLEY_STEPS = 3
_BESSEL_SERIES_UP_TO = 20.0  # |x| of the power series; the asymptotic expansion past it
_BESSEL_TERMS = 40  # terms of each (the series' last at |x| = 20 is 1e-24 of its sum)
_IGAMMA_TERMS = 2000  # the most terms of igamma's series and continued fraction
_RESCALE_ABOVE = 2.0**500  # where the fraction's convergents are scaled down (exactly)


def _c(value):
    """A double as a C literal that reads back as the same double."""
    return repr(float(value))


def _horner_c(coefficients, z):
    """C text of sum_k coefficients[k] z^k by Horner's rule, the highest first."""
    text = _c(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        text = f"({text} * {z} + {_c(c)})"
    return text


def _horner(coefficients, z):
    """numpy's Horner sum in the order of `_horner_c`'s C (the same roundings)."""
    value = np.full_like(z, coefficients[-1])
    for c in reversed(coefficients[:-1]):
        value = value * z + c
    return value


# --- kernels: numpy, in double ----------------------------------------------------------------


def _in_double(function):
    """The eager kernel of `function` (float64 vectors of one length to a float64 vector):
    its inputs widened to float64, broadcast and flattened (copies it may write), and the
    result shaped and rounded to their dtype (float16 through float32, as the C form stores
    a float)."""

    @quiet
    def run(*arrays):
        arrays = [np.asarray(a) for a in arrays]
        dtype = np.result_type(*arrays)
        wide = np.broadcast_arrays(*(a.astype(np.float64) for a in arrays))
        result = function(*(w.flatten() for w in wide)).reshape(wide[0].shape)
        if dtype == np.float16:
            result = result.astype(np.float32)
        return result.astype(dtype, copy=False)

    run.__name__ = f"_{function.__name__.strip('_')}_kernel"
    return run


@functools.cache
def _libm_lgamma():
    """glibc's lgamma_r, the function the C form calls, through cffi's ABI mode (no build):
    Python's math.lgamma is CPython's own, 1e-3 off near 1 and 2 where lgamma is tiny. None
    where no libm gives it."""
    try:
        ffi = cffi.FFI()
        ffi.cdef("double lgamma_r(double, int *);")
        library = ffi.dlopen("m")
        sign = ffi.new("int *")  # (the sign it writes is not read)
        call = library.lgamma_r
        return lambda x: call(x, sign)
    except (OSError, AttributeError, cffi.CDefError):
        return None


def _lgamma_of_one(x):
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):  # a pole (0, a negative integer), or past 2.5e305
        return math.inf


def _lgamma(x):
    """libm's lgamma, element by element."""
    return np.asarray(np.frompyfunc(_libm_lgamma() or _lgamma_of_one, 1, 1)(x), np.float64)


def _digamma(x):
    pole = (x <= 0) & (x == np.floor(x))
    negative = x < 0
    # reflection: psi(x) = psi(1 - x) - pi / tan(pi r), r = x less its nearest integer (exact)
    nearest = np.floor(x)
    nearest = np.where(x - nearest > 0.5, nearest + 1, nearest)
    r = x - nearest
    cotangent = np.where(negative & (np.abs(r) != 0.5), _PI / np.tan(_PI * r), 0.0)
    y = np.where(negative, 1 - x, x)
    shift = np.zeros_like(y)
    small = np.flatnonzero(y < 10)
    while small.size:
        shift[small] += 1 / y[small]
        y[small] += 1
        small = small[y[small] < 10]
    z = 1 / (y * y)
    series = _horner(_DIGAMMA_SERIES, z) * z
    value = np.log(y) - 0.5 / y - series - shift - cotangent
    return np.where(pole, np.nan, value)


def _zeta(s, q):
    """Hurwitz's zeta(s, q), TensorFlow's domain: inf at s = 1, NaN for s < 1; for q <= 0 an
    integer, inf where s is an even integer and NaN otherwise; NaN for q < 0 and s not an
    integer (the sum of (q + k)^-s is real only for integer s there)."""
    value = np.full(s.shape, np.nan)
    value[s == 1] = np.inf
    integer_s = s == np.floor(s)
    q_pole = (q <= 0) & (q == np.floor(q))
    even = integer_s & (np.fmod(s, 2) == 0)
    value[(s > 1) & q_pole & even] = np.inf
    run = np.flatnonzero(~(s == 1) & ~(s < 1) & ~q_pole & ~((q <= 0) & ~integer_s))
    s, q = s[run], q[run]
    bound = np.clip((s + 24) * (2 / _PI), *_ZETA_SHIFT)
    total = np.zeros_like(s)
    w = q.copy()
    ended = np.zeros(s.shape, bool)
    active = np.flatnonzero(w < bound)
    while active.size:
        wa, sa = w[active], s[active]
        term = np.power(wa, -sa)
        total[active] += term
        left = np.abs(term) * np.fmax(1, wa / (sa - 1))
        early = (wa > 0) & (left <= _EPSILON * np.abs(total[active]))
        ended[active[early]] = True
        w[active] = wa + 1
        active = active[~early & (w[active] < bound[active])]
    # the corrections in units of the last term w^-s (its multiples w^(-s-2j+1) would fall
    # below the normal range where it is 1e-300)
    corrections = np.zeros_like(s)
    factor = s / w
    for j, c in enumerate(_ZETA_SERIES, 1):
        corrections = corrections + c * factor
        factor = factor * ((s + (2 * j - 1)) * (s + 2 * j) / (w * w))
    tail = np.power(w, 1 - s) / (s - 1) + np.power(w, -s) * (0.5 + corrections)
    value[run] = np.where(ended, total, total + tail)
    return value


def _polygamma(n, x):
    """(-1)^(n+1) n! zeta(n + 1, x) (n! as exp(lgamma(n + 1)), TensorFlow's), digamma at n = 0,
    NaN where n is not a whole number."""
    order = n + 1
    sign = np.where(np.fmod(n, 2) == 0, -1.0, 1.0)
    value = sign * np.exp(_lgamma(order)) * _zeta(order, x)
    value = np.where(n == np.floor(n), value, np.nan)
    return np.where(n == 0, _digamma(x), value)


def _igamma_series(a, x, derivative):
    """S = sum_n x^n / ((a + 1) ... (a + n)), P(a, x) = x^a e^-x S / (a Gamma(a)), and with
    `derivative` dS/da: each term t_n has the derivative -t_n h_n, h_n = sum_k<=n 1/(a + k).
    The sums end where their terms fall below an ulp of them (the C's loop, element by
    element)."""
    term, total = np.ones_like(a), np.ones_like(a)
    h, slope = np.zeros_like(a), np.zeros_like(a)
    active = np.arange(a.size)
    for k in range(1, _IGAMMA_TERMS):
        if not active.size:
            break
        ak, xk = a[active], x[active]
        step = term[active] * (xk / (ak + k))
        term[active] = step
        total[active] += step
        done = step <= _EPSILON * total[active]
        if derivative:
            h[active] += 1 / (ak + k)
            change = -step * h[active]
            slope[active] += change
            done &= np.abs(change) <= _EPSILON * np.abs(slope[active])
        active = active[~done]
    return total, slope


def _igamma_fraction(a, x, derivative):
    """Legendre's continued fraction F = b0 + a1 / (b1 + a2 / (b2 + ...)), b_n = x + 2n + 1 -
    a, a_n = n (a - n), with Q(a, x) = x^a e^-x / (Gamma(a) F), by its convergents A_n / B_n
    (the three-term recurrences; their derivatives in a with `derivative`), rescaled by a
    power of two where they grow past _RESCALE_ABOVE. It ends where a convergent (and its
    derivative) moves by less than an ulp."""
    zero = np.zeros_like(a)
    # A and B of the last two convergents, and their derivatives in a
    num0, den0, num1, den1 = zero + 1, zero.copy(), x + 1 - a, zero + 1
    dnum0, dden0, dnum1, dden1 = zero.copy(), zero.copy(), zero - 1, zero.copy()
    value, slope = num1.copy(), zero - 1
    active = np.arange(a.size)
    for n in range(1, _IGAMMA_TERMS):
        if not active.size:
            break
        ak, xk = a[active], x[active]
        an, bn = n * (ak - n), xk + (2 * n + 1) - ak
        p0, q0, p1, q1 = num0[active], den0[active], num1[active], den1[active]
        dp0, dq0, dp1, dq1 = dnum0[active], dden0[active], dnum1[active], dden1[active]
        p2, q2 = bn * p1 + an * p0, bn * q1 + an * q0
        dp2 = bn * dp1 - p1 + an * dp0 + n * p0
        dq2 = bn * dq1 - q1 + an * dq0 + n * q0
        big = (np.abs(p2) > _RESCALE_ABOVE) | (np.abs(q2) > _RESCALE_ABOVE)
        scale = np.where(big, 1 / _RESCALE_ABOVE, 1.0)
        p1, q1, p2, q2 = p1 * scale, q1 * scale, p2 * scale, q2 * scale
        dp1, dq1, dp2, dq2 = dp1 * scale, dq1 * scale, dp2 * scale, dq2 * scale
        num0[active], den0[active], num1[active], den1[active] = p1, q1, p2, q2
        dnum0[active], dden0[active], dnum1[active], dden1[active] = dp1, dq1, dp2, dq2
        known = q2 != 0
        with np.errstate(all="ignore"):
            convergent = p2 / q2
            change = (dp2 - convergent * dq2) / q2
        done = known & (np.abs(convergent - value[active]) <= _EPSILON * np.abs(convergent))
        if derivative:
            done &= np.abs(change - slope[active]) <= _EPSILON * np.abs(change)
        value[active] = np.where(known, convergent, value[active])
        slope[active] = np.where(known, change, slope[active])
        active = active[~done]
    return value, slope


def _igamma_parts(a, x, derivative=False, upper=False):
    """(P, Q, dP/da) of the elements where the series or the fraction applies: TensorFlow's
    choice, the fraction where x > 1 and x > a (for Q, `upper`: where x >= 1 and x >= a),
    the series elsewhere; NaN outside the domain (fixed by the callers)."""
    valid = (x > 0) & (a > 0) & np.isfinite(x) & np.isfinite(a)
    lower, slope = np.full(a.shape, np.nan), np.full(a.shape, np.nan)
    complement = np.full(a.shape, np.nan)
    # x^a e^-x / Gamma(a), in logarithms, as TensorFlow writes it
    log_x = np.log(np.where(valid, x, 1.0))
    exponent = a * log_x - x - _lgamma(np.where(valid, a, 1.0))
    prefactor = np.exp(exponent)
    fraction = valid & ((x >= 1) & (x >= a) if upper else (x > 1) & (x > a))
    series = valid & ~fraction
    # where x^a e^-x / Gamma(a) is 0 (x past 745 and a), Q is 0: its fraction may overflow
    vanishing = fraction & (prefactor == 0)
    lower[vanishing], complement[vanishing], slope[vanishing] = 1.0, 0.0, -0.0
    fraction &= ~vanishing
    if series.any():
        total, d_total = _igamma_series(a[series], x[series], derivative)
        scaled = prefactor[series] / a[series]
        lower[series] = total * scaled
        complement[series] = 1 - lower[series]
        if derivative:
            # psi(a) + 1/a as psi(a + 1): no cancellation for tiny a
            scale = log_x[series] - _digamma(a[series] + 1)
            slope[series] = lower[series] * scale + scaled * d_total
    if fraction.any():
        value, d_value = _igamma_fraction(a[fraction], x[fraction], derivative)
        complement[fraction] = prefactor[fraction] / value
        lower[fraction] = 1 - complement[fraction]
        if derivative:
            scale = log_x[fraction] - _digamma(a[fraction])
            q = complement[fraction]
            slope[fraction] = -(q * scale - q * (d_value / value))
    return lower, complement, slope, valid


def _igamma(a, x):
    """P(a, x), TensorFlow's domain: 0 at x = 0 (whatever a), NaN for x < 0 or a <= 0 or a
    NaN, 1 at x = inf, 0 at a = inf."""
    lower, _, _, valid = _igamma_parts(a, x)
    known = (x >= 0) & (a > 0)
    lower = np.where(~valid & known & (x == np.inf), 1.0, lower)
    lower = np.where(~valid & known & (a == np.inf), 0.0, lower)
    return np.where(x == 0, 0.0, lower)


def _igammac(a, x):
    """Q(a, x) = 1 - P(a, x), TensorFlow's domain: NaN for x < 0 or a <= 0 (at x = 0 too) or
    a NaN, 0 at x = inf, 1 at a = inf (x finite)."""
    _, upper, _, valid = _igamma_parts(a, x, upper=True)
    known = (x >= 0) & (a > 0)
    upper = np.where(~valid & known & (x == 0), 1.0, upper)
    upper = np.where(~valid & known & (a == np.inf), 1.0, upper)
    return np.where(~valid & known & (x == np.inf), 0.0, upper)


def _igamma_grad_a(a, x):
    """dP(a, x)/da: 0 at x = 0 and where x or a is inf, NaN outside P's domain."""
    _, _, slope, valid = _igamma_parts(a, x, derivative=True)
    known = (x >= 0) & (a > 0)
    slope = np.where(~valid & known, 0.0, slope)
    return np.where(x == 0, 0.0, slope)


def _ndtri(p):
    q = p - 0.5
    tail = np.where(q > 0, 1 - p, p)  # the smaller tail, exact
    t = np.sqrt(-2 * np.log(tail))
    c0, c1, c2, d1, d2, d3 = _HASTINGS
    x = -(t - (c0 + t * (c1 + t * c2)) / (1 + t * (d1 + t * (d2 + t * d3))))
    central = np.abs(q) <= 0.25
    erf, erfc = KERNELS["erf"], KERNELS["erfc"]
    for _ in range(_HALLEY_STEPS):
        residual = np.where(
            central, 0.5 * erf(x * _SQRT_HALF) + np.abs(q), 0.5 * erfc(-x * _SQRT_HALF) - tail
        )
        u = residual / (np.exp(-0.5 * (x * x)) * (1 / _SQRT_2PI))
        x = x - u / (1 + 0.5 * (x * u))
    x = np.where(q > 0, -x, x)
    x = np.where(q == 0, 0.0, x)
    x = np.where(p == 0, -np.inf, x)
    x = np.where(p == 1, np.inf, x)
    return np.where((p > 0) & (p < 1) | (p == 0) | (p == 1), x, np.nan)


def _bessel_scaled(x, order):
    """exp(-|x|) I_order(|x|) for order 0 or 1."""
    a = np.abs(x)
    value = np.empty_like(a)
    near = a <= _BESSEL_SERIES_UP_TO
    # the power series, sum_k (a/2)^(2k + order) / (k! (k + order)!), each term from the last
    an = a[near]
    y = 0.25 * (an * an)
    term = np.ones_like(an)
    total = np.ones_like(an)
    for k in range(1, _BESSEL_TERMS):
        term = term * y / (k * (k + order))
        total = total + term
    if order:
        total = total * (0.5 * an)
    value[near] = total * np.exp(-an)
    # Hankel's expansion: e^-a I(a) ~ sum_k prod_{m<=k} ((2m - 1)^2 - 4 order^2) / (8 m a)
    # / sqrt(2 pi a)
    af = a[~near]
    term = np.ones_like(af)
    total = np.ones_like(af)
    for k in range(1, _BESSEL_TERMS):
        term = term * (((2 * k - 1) ** 2 - 4 * order * order) / (8 * k)) / af
        total = total + term
    value[~near] = total / np.sqrt((2 * _PI) * af)
    return value


def _bessel_i0e(x):
    return _bessel_scaled(x, 0)


def _bessel_i1e(x):
    value = _bessel_scaled(x, 1)
    return np.where(x < 0, -value, value)


def _bessel_i0(x):
    return np.exp(np.abs(x)) * _bessel_i0e(x)


def _bessel_i1(x):
    return np.exp(np.abs(x)) * _bessel_i1e(x)


# --- C: the same algorithms -----------------------------------------------------------------

_C_FUNCTIONS = {
    # NOTE: lgamma_r is glibc's (POSIX), not in codegen/libc.py's table: declared here
    "lgamma": (
        "double lgamma_r(double, int *);\n"
        "static inline double tr_lgamma(double x) { int sign; return lgamma_r(x, &sign); }"
    ),
    "digamma": f"""\
static TR_NOINLINE double tr_digamma(double x) {{
    if (x <= 0 && x == floor(x)) return NAN;
    double cotangent = 0;
    if (x < 0) {{
        double nearest = floor(x);
        if (x - nearest > 0.5) nearest += 1;
        const double r = x - nearest;
        if (fabs(r) != 0.5) cotangent = {_c(_PI)} / tan({_c(_PI)} * r);
        x = 1 - x;
    }}
    double shift = 0;
    while (x < 10) {{
        shift += 1 / x;
        x += 1;
    }}
    const double z = 1 / (x * x);
    const double series = {_horner_c(_DIGAMMA_SERIES, "z")} * z;
    return log(x) - 0.5 / x - series - shift - cotangent;
}}""",
    "zeta": f"""\
static TR_NOINLINE double tr_zeta(double s, double q) {{
    if (s == 1) return INFINITY;
    if (s < 1) return NAN;
    if (q <= 0) {{
        if (q == floor(q)) return s == floor(s) && fmod(s, 2) == 0 ? INFINITY : NAN;
        if (s != floor(s)) return NAN;
    }}
    double bound = (s + 24) * {_c(2 / _PI)};
    bound = bound < {_c(_ZETA_SHIFT[0])} ? {_c(_ZETA_SHIFT[0])} : bound;
    bound = bound > {_c(_ZETA_SHIFT[1])} ? {_c(_ZETA_SHIFT[1])} : bound;
    double total = 0, w = q;
    while (w < bound) {{
        const double term = pow(w, -s);
        total += term;
        /* the terms left sum to less than term * w / (s - 1) where w > 0 */
        const double left = fabs(term) * fmax(1, w / (s - 1));
        if (w > 0 && left <= {_c(_EPSILON)} * fabs(total)) return total;
        w = w + 1;
    }}
    static const double series[{len(_ZETA_SERIES)}] = {{{", ".join(map(_c, _ZETA_SERIES))}}};
    double corrections = 0, factor = s / w;
    for (int j = 1; j <= {len(_ZETA_SERIES)}; j++) {{
        corrections = corrections + series[j - 1] * factor;
        factor = factor * ((s + (2 * j - 1)) * (s + 2 * j) / (w * w));
    }}
    return total + (pow(w, 1 - s) / (s - 1) + pow(w, -s) * (0.5 + corrections));
}}""",
    "ndtri": f"""\
static TR_NOINLINE double tr_ndtri(double p) {{
    if (!(p > 0 && p < 1)) return p == 0 ? -INFINITY : p == 1 ? INFINITY : NAN;
    const double q = p - 0.5;
    if (q == 0) return 0;
    const double tail = q > 0 ? 1 - p : p;
    const double t = sqrt(-2 * log(tail));
    double x = -(t - ({_c(_HASTINGS[0])} + t * ({_c(_HASTINGS[1])} + t * {_c(_HASTINGS[2])}))
        / (1 + t * ({_c(_HASTINGS[3])} + t * ({_c(_HASTINGS[4])} + t * {_c(_HASTINGS[5])}))));
    const int central = fabs(q) <= 0.25;
    for (int step = 0; step < {_HALLEY_STEPS}; step++) {{
        const double residual = central ? 0.5 * erf(x * {_c(_SQRT_HALF)}) + fabs(q)
                                        : 0.5 * erfc(-x * {_c(_SQRT_HALF)}) - tail;
        const double u = residual / (exp(-0.5 * (x * x)) * {_c(1 / _SQRT_2PI)});
        x = x - u / (1 + 0.5 * (x * u));
    }}
    return q > 0 ? -x : x;
}}""",
}


def _bessel_c(order):
    return f"""\
static TR_NOINLINE double tr_bessel_i{order}e(double x) {{
    const double a = fabs(x);
    double term = 1, total = 1, value;
    if (a <= {_c(_BESSEL_SERIES_UP_TO)}) {{
        const double y = 0.25 * (a * a);
        for (int k = 1; k < {_BESSEL_TERMS}; k++) {{
            term = term * y / (double)(k * (k + {order}));
            total = total + term;
        }}
        {"total = total * (0.5 * a);" if order else ""}
        value = total * exp(-a);
    }} else {{
        for (int k = 1; k < {_BESSEL_TERMS}; k++) {{
            term = term * ((double)((2 * k - 1) * (2 * k - 1) - {4 * order * order})
                / (double)(8 * k)) / a;
            total = total + term;
        }}
        value = total / sqrt({_c(2 * _PI)} * a);
    }}
    return {"x < 0 ? -value : value" if order else "value"};
}}"""


_C_FUNCTIONS["bessel_i0e"] = _bessel_c(0)
_C_FUNCTIONS["bessel_i1e"] = _bessel_c(1)
_C_FUNCTIONS["bessel_i0"] = (
    "static inline double tr_bessel_i0(double x) { return exp(fabs(x)) * tr_bessel_i0e(x); }"
)
_C_FUNCTIONS["bessel_i1"] = (
    "static inline double tr_bessel_i1(double x) { return exp(fabs(x)) * tr_bessel_i1e(x); }"
)
_C_FUNCTIONS["polygamma"] = """\
static TR_NOINLINE double tr_polygamma(double n, double x) {
    if (n == 0) return tr_digamma(x);
    if (n != floor(n)) return NAN;
    const double order = n + 1;
    return (fmod(n, 2) == 0 ? -1.0 : 1.0) * exp(tr_lgamma(order)) * tr_zeta(order, x);
}"""
_C_FUNCTIONS["igamma_parts"] = f"""\
static double tr_igamma_series(double a, double x, int derivative, double *slope_out) {{
    double term = 1, total = 1, h = 0, slope = 0;
    for (int k = 1; k < {_IGAMMA_TERMS}; k++) {{
        const double step = term * (x / (a + k));
        term = step;
        total += step;
        int done = step <= {_c(_EPSILON)} * total;
        if (derivative) {{
            h += 1 / (a + k);
            const double change = -step * h;
            slope += change;
            done = done && fabs(change) <= {_c(_EPSILON)} * fabs(slope);
        }}
        if (done) break;
    }}
    *slope_out = slope;
    return total;
}}
static double tr_igamma_fraction(double a, double x, int derivative, double *slope_out) {{
    /* A and B of the last two convergents, and their derivatives in a */
    double num0 = 1, den0 = 0, num1 = x + 1 - a, den1 = 1;
    double dnum0 = 0, dden0 = 0, dnum1 = -1, dden1 = 0;
    double value = num1, slope = -1;
    for (int n = 1; n < {_IGAMMA_TERMS}; n++) {{
        const double an = n * (a - n), bn = x + (2 * n + 1) - a;
        double p2 = bn * num1 + an * num0, q2 = bn * den1 + an * den0;
        double dp2 = bn * dnum1 - num1 + an * dnum0 + n * num0;
        double dq2 = bn * dden1 - den1 + an * dden0 + n * den0;
        const double big = {_c(_RESCALE_ABOVE)};
        const double scale = fabs(p2) > big || fabs(q2) > big ? 1 / big : 1.0;
        num0 = num1 * scale, den0 = den1 * scale, num1 = p2 * scale, den1 = q2 * scale;
        dnum0 = dnum1 * scale, dden0 = dden1 * scale, dnum1 = dp2 * scale, dden1 = dq2 * scale;
        if (den1 != 0) {{
            const double convergent = num1 / den1;
            const double change = (dnum1 - convergent * dden1) / den1;
            int done = fabs(convergent - value) <= {_c(_EPSILON)} * fabs(convergent);
            if (derivative) done = done && fabs(change - slope) <= {_c(_EPSILON)} * fabs(change);
            value = convergent, slope = change;
            if (done) break;
        }}
    }}
    *slope_out = slope;
    return value;
}}
/* P(a, x), Q(a, x) and dP/da for 0 < x, a < inf: the fraction where x > 1 and x > a (for
   Q, `upper`: x >= 1 and x >= a) */
static TR_NOINLINE void tr_igamma_parts(
    double a, double x, int derivative, int upper, double *parts) {{
    const double log_x = log(x);
    const double prefactor = exp(a * log_x - x - tr_lgamma(a));
    double d;
    if (upper ? x >= 1 && x >= a : x > 1 && x > a) {{
        if (prefactor == 0) {{ /* Q is 0, where its fraction may overflow */
            parts[0] = 1, parts[1] = 0, parts[2] = -0.0;
            return;
        }}
        const double value = tr_igamma_fraction(a, x, derivative, &d);
        parts[1] = prefactor / value;
        parts[0] = 1 - parts[1];
        if (derivative) {{
            const double scale = log_x - tr_digamma(a), q = parts[1];
            parts[2] = -(q * scale - q * (d / value));
        }}
    }} else {{
        const double total = tr_igamma_series(a, x, derivative, &d), scaled = prefactor / a;
        parts[0] = total * scaled;
        parts[1] = 1 - parts[0];
        if (derivative) parts[2] = parts[0] * (log_x - tr_digamma(a + 1)) + scaled * d;
    }}
}}"""
_C_FUNCTIONS["igamma"] = """\
static inline double tr_igamma(double a, double x) {
    if (x == 0) return 0;
    if (!(x >= 0 && a > 0)) return NAN;
    if (a == INFINITY) return 0;
    if (x == INFINITY) return 1;
    double parts[3];
    tr_igamma_parts(a, x, 0, 0, parts);
    return parts[0];
}"""
_C_FUNCTIONS["igammac"] = """\
static inline double tr_igammac(double a, double x) {
    if (!(x >= 0 && a > 0)) return NAN;
    if (x == INFINITY) return 0;
    if (x == 0 || a == INFINITY) return 1;
    double parts[3];
    tr_igamma_parts(a, x, 0, 1, parts);
    return parts[1];
}"""
_C_FUNCTIONS["igamma_grad_a"] = """\
static inline double tr_igamma_grad_a(double a, double x) {
    if (x == 0) return 0;
    if (!(x >= 0 && a > 0)) return NAN;
    if (x == INFINITY || a == INFINITY) return 0;
    double parts[3];
    tr_igamma_parts(a, x, 1, 0, parts);
    return parts[2];
}"""
_CALLS = {  # the helpers each one calls
    "bessel_i0": ("bessel_i0e",),
    "bessel_i1": ("bessel_i1e",),
    "polygamma": ("digamma", "lgamma", "zeta"),
    "igamma_parts": ("digamma", "lgamma"),
    "igamma": ("igamma_parts",),
    "igammac": ("igamma_parts",),
    "igamma_grad_a": ("igamma_parts",),
}
_HELPERS = {}
for _name, _text in _C_FUNCTIONS.items():
    _requires = tuple(_HELPERS[called] for called in _CALLS.get(_name, ()))
    _HELPERS[_name] = forms.Helper(f"special_{_name}", float=_text, typed=False, requires=_requires)


def _c_form(name):
    """The Expression that calls the double helper tr_<name> and rounds to the op's type."""
    helper = _HELPERS[name]

    def render(t, out, *operands):
        arguments = ", ".join(f"(double)({x})" for x in operands)
        return f"(({compute(t)})tr_{name}({arguments}))"

    return forms.Expression(render, helpers=(helper,), costly=True)


# --- the ops ------------------------------------------------------------------------------


def _real_floating(attrs, x):
    if not x.dtype.is_floating:
        raise TypeError(f"expects a real floating tensor, got {x.dtype.name}")
    return x.shape, x.dtype


def _binary_real_floating(attrs, x, y):
    shape, dtype = shapes.binary(attrs, x, y)
    if not dtype.is_floating:
        raise TypeError(f"expects real floating tensors, got {dtype.name}")
    return shape, dtype


def _unary(name, grad, saves, numpy_function):
    op = primitive(
        name,
        _real_floating,
        grad=grad,
        saves=saves,
        jvp=DIAGONAL,
        fusion="elementwise",
        kernel=_in_double(numpy_function),
        c=_c_form(name),
    )

    def function(x, name=None):
        return apply_unary(op, x)

    function.__name__ = name
    return op, op_function(op, function, 1)


def _safe_reciprocal(x):
    """1/x, and 1 where x is 0 (the branch a `where` leaves out: its gradient stays finite)."""
    return 1 / math_ops.where(math_ops.equal(x, 0), 1.0, x)


LGAMMA, lgamma = _unary("lgamma", lambda node, g, x: (g * digamma(x),), (0,), _lgamma)
DIGAMMA, digamma = _unary("digamma", lambda node, g, x: (g * polygamma(1.0, x),), (0,), _digamma)
NDTRI, ndtri = _unary(
    "ndtri",
    lambda node, g, out: (g * (_SQRT_2PI * math_ops.exp(0.5 * math_ops.square(out))),),
    (OUT,),
    _ndtri,
)
BESSEL_I0E, bessel_i0e = _unary(
    "bessel_i0e",
    lambda node, g, x, out: (g * (bessel_i1e(x) - math_ops.sign(x) * out),),
    (0, OUT),
    _bessel_i0e,
)
BESSEL_I1E, bessel_i1e = _unary(
    "bessel_i1e",
    lambda node, g, x, out: (
        g
        * math_ops.where(
            math_ops.equal(x, 0),
            0.5,
            bessel_i0e(x) - out * (math_ops.sign(x) + _safe_reciprocal(x)),
        ),
    ),
    (0, OUT),
    _bessel_i1e,
)
BESSEL_I0, bessel_i0 = _unary("bessel_i0", lambda node, g, x: (g * bessel_i1(x),), (0,), _bessel_i0)
# NOTE: TensorFlow's gradient of bessel_i1 at 0 is 1 (its _BesselI1Grad imputes 1.0); the
# derivative there is 1/2, which this gives, as TensorFlow's own bessel_i1e gradient does
BESSEL_I1, bessel_i1 = _unary(
    "bessel_i1",
    lambda node, g, x, out: (
        g * math_ops.where(math_ops.equal(x, 0), 0.5, bessel_i0(x) - out * _safe_reciprocal(x)),
    ),
    (0, OUT),
    _bessel_i1,
)


def _second_only(derivative):
    """The gradient rule and JVP of a binary op differentiated in its second input alone,
    `derivative(first, second)` its partial derivative there: TensorFlow's zeta and
    polygamma give their first input (s, the order) no gradient."""

    def grad(node, g, first, second):
        return None, unbroadcast(g * derivative(first, second), node.inputs[1].shape)

    def jvp(node, tangents, inputs, out):
        if tangents[1] is None:
            return array_ops.zeros_like(out)
        return broadcast_to(derivative(*inputs) * tangents[1], out.shape)

    return grad, jvp


def _binary(name, rules, numpy_function):
    """The primitive `name` of two real floating operands, with `rules` (grad, jvp)."""
    grad, jvp = rules
    op = primitive(
        name,
        _binary_real_floating,
        grad=grad,
        saves=(0, 1),
        jvp=jvp,
        fusion="elementwise",
        kernel=_in_double(numpy_function),
        c=_c_form(name),
    )

    def function(x, y, name=None):
        return apply_binary(op, x, y)

    function.__name__ = name
    return op, op_function(op, function, 2)


ZETA, _zeta_function = _binary(
    "zeta", _second_only(lambda s, q: math_ops.negative(s) * zeta(s + 1, q)), _zeta
)
POLYGAMMA, _polygamma_function = _binary(
    "polygamma", _second_only(lambda n, x: polygamma(n + 1, x)), _polygamma
)


def zeta(x, q, name=None):
    """Hurwitz's zeta function, sum_k (q + k)^-x, as tf.math.zeta: inf at x = 1, NaN below;
    differentiable in q alone (TensorFlow gives x no gradient).

    >>> float(tt.math.zeta(2.0, 1.0))  # pi^2 / 6
    1.6449340668482264
    """
    return _zeta_function(x, q)


def polygamma(a, x, name=None):
    """The polygamma function: digamma's `a`-th derivative, for a whole number `a` (NaN
    otherwise), as tf.math.polygamma; differentiable in x alone (TensorFlow gives a none).

    >>> float(tt.math.polygamma(1.0, 1.0))  # pi^2 / 6
    1.6449340668482264
    """
    return _polygamma_function(a, x)


# dP(a, x)/da, the a-gradient of igamma and igammac: first order only (no gradient flows
# through it; TensorFlow's IgammaGradA has none registered, and raises for a second one)
IGAMMA_GRAD_A = primitive(
    "igamma_grad_a",
    _binary_real_floating,
    fusion="elementwise",
    kernel=_in_double(_igamma_grad_a),
    c=_c_form("igamma_grad_a"),
)


def _igamma_slopes(a, x):
    """(dP/da, dP/dx); dP/dx = x^(a-1) e^-x / Gamma(a), written in logarithms as TensorFlow
    writes it."""
    from_a = apply_binary(IGAMMA_GRAD_A, a, x)
    from_x = math_ops.exp(math_ops.negative(x) + (a - 1) * math_ops.log(x) - lgamma(a))
    return from_a, from_x


def _igamma_rules(sign):
    """The gradient rule and JVP of P (`sign` 1) or Q = 1 - P (-1)."""

    def grad(node, g, a, x):
        from_a, from_x = _igamma_slopes(a, x)
        if sign < 0:
            from_a, from_x = math_ops.negative(from_a), math_ops.negative(from_x)
        return (
            unbroadcast(g * from_a, node.inputs[0].shape),
            unbroadcast(g * from_x, node.inputs[1].shape),
        )

    def jvp(node, tangents, inputs, out):
        slopes = _igamma_slopes(*inputs)
        terms = [s * t for s, t in zip(slopes, tangents) if t is not None]
        total = terms[0] if len(terms) == 1 else terms[0] + terms[1]
        return broadcast_to(total if sign > 0 else math_ops.negative(total), out.shape)

    return grad, jvp


IGAMMA, _igamma_function = _binary("igamma", _igamma_rules(1), _igamma)
IGAMMAC, _igammac_function = _binary("igammac", _igamma_rules(-1), _igammac)


def igamma(a, x, name=None):
    """The lower regularized incomplete gamma function P(a, x), as tf.math.igamma: 0 at
    x = 0, NaN for x < 0 or a <= 0; differentiable in both (in a to the first order).

    >>> round(float(tt.math.igamma(1.0, 2.0)), 6)  # 1 - exp(-2)
    0.864665
    """
    return _igamma_function(a, x)


def igammac(a, x, name=None):
    """The upper regularized incomplete gamma function Q(a, x) = 1 - P(a, x), as
    tf.math.igammac (accurate where P rounds to 1: the continued fraction's own value).

    >>> round(float(tt.math.igammac(1.0, 2.0)), 6)  # exp(-2)
    0.135335
    """
    return _igammac_function(a, x)


@tf_op("Erfinv")
def erfinv(x, name=None):
    """The inverse of erf, as TensorFlow computes it: ndtri((x + 1) / 2) / sqrt(2).

    >>> round(float(tt.math.erfinv(0.5)), 6)
    0.476936
    """
    x = as_tensor(x)
    return ndtri(x * 0.5 + 0.5) * _SQRT_HALF


@tf_op("Lbeta")
def lbeta(x, name=None):
    """log(|Beta(x)|) over the last axis: sum(lgamma(x)) - lgamma(sum(x)), as tf.math.lbeta
    (-inf for an empty last axis).

    >>> round(float(tt.math.lbeta([1.0, 2.0])), 6)  # log(1/2)
    -0.693147
    """
    x = as_tensor(x)
    return reduce_sum(lgamma(x), axis=-1) - lgamma(reduce_sum(x, axis=-1))
