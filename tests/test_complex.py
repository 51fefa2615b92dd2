"""Complex gradients follow TensorFlow: for a real loss L of z = x + iy, the gradient is
dL/dx + i dL/dy, which every holomorphic rule gets by multiplying by the conjugate derivative."""

import numpy as np
import pytest

import tracer as tt

rng = np.random.default_rng(3)


def cplx(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


FUNCTIONS = {
    "mul": (lambda z, w: z * w, [cplx(3), cplx(2, 3)]),
    "div": (lambda z, w: z / w, [cplx(3), cplx(3) + 2]),
    "exp": (lambda z: tt.exp(z), [cplx(4)]),
    "log": (lambda z: tt.math.log(z), [cplx(4) + 3]),
    "sqrt": (lambda z: tt.sqrt(z), [cplx(4) + 3]),
    "sin_cos": (lambda z: tt.sin(z) * tt.cos(z), [cplx(3)]),
    "tanh": (lambda z: tt.tanh(z), [cplx(3) * 0.5]),
    "sigmoid": (lambda z: tt.sigmoid(z), [cplx(3) * 0.5]),
    "pow": (lambda z, w: z**w, [cplx(3) + 3, cplx(3) * 0.3]),
    "matmul": (tt.matmul, [cplx(2, 3), cplx(3, 2)]),
    "conj": (lambda z: tt.math.conj(z) * z * z, [cplx(3)]),
    "abs": (lambda z: tt.complex(tt.abs(z) ** 3, tt.abs(z)), [cplx(4)]),
    "real_imag": (
        lambda z: tt.complex(tt.math.real(z) * tt.math.imag(z), tt.math.real(z)),
        [cplx(3)],
    ),
    "reductions_and_shapes": (
        lambda z: tt.reduce_sum(tt.reshape(z, (2, 2)) ** 2, axis=0),
        [cplx(4)],
    ),
}


def real_loss(function, weights):
    def loss(*zs):
        out = function(*zs)
        return tt.reduce_sum(tt.math.real(out) * weights[0] + tt.math.imag(out) * weights[1])

    return loss


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_gradient_is_dL_dx_plus_i_dL_dy(name):
    function, args = FUNCTIONS[name]
    shape = np.shape(function(*[tt.constant(a) for a in args]))
    loss = real_loss(function, [rng.standard_normal(shape), rng.standard_normal(shape)])
    zs = [tt.constant(a) for a in args]
    with tt.GradientTape() as tape:
        tape.watch(zs)
        value = loss(*zs)
    grads = tape.gradient(value, zs)
    eps = 1e-6
    for k, (arg, grad) in enumerate(zip(args, grads)):
        assert grad.dtype == tt.complex128
        direction = rng.standard_normal(np.shape(arg)) + 1j * rng.standard_normal(np.shape(arg))

        def shifted(step):
            moved = [tt.constant(a + step * direction if i == k else a) for i, a in enumerate(args)]
            return float(loss(*moved))

        numeric = (shifted(eps) - shifted(-eps)) / (2 * eps)
        # d/dt L(z + t d) = <dL/dx, Re d> + <dL/dy, Im d> = Re(sum(conj(grad) * d))
        analytic = np.real(np.sum(np.conj(grad.numpy()) * direction))
        np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


def test_tensorflow_convention_on_abs_squared():
    z = tt.constant(1 + 2j, dtype=tt.complex64)
    with tt.GradientTape() as tape:
        tape.watch(z)
        y = tt.abs(z) ** 2
    assert y.dtype == tt.float32
    np.testing.assert_allclose(tape.gradient(y, z).numpy(), 2 + 4j, rtol=1e-6)
    with tt.GradientTape() as tape:
        tape.watch(z)
        y = tt.math.real(z * tt.math.conj(z))
    np.testing.assert_allclose(tape.gradient(y, z).numpy(), 2 + 4j, rtol=1e-6)


def test_complex_second_order_through_nested_tapes():
    z = tt.constant(0.3 + 0.4j, dtype=tt.complex128)
    with tt.GradientTape() as outer:
        outer.watch(z)
        with tt.GradientTape() as inner:
            inner.watch(z)
            y = tt.math.real(z * z * z)
        g = inner.gradient(y, z)  # conj(3 z^2)
        h = tt.math.real(g)
    # Re(conj(3 z^2)) = 3 (x^2 - y^2): gradient 6x - 6y i
    np.testing.assert_allclose(outer.gradient(h, z).numpy(), 6 * 0.3 - 6j * 0.4, rtol=1e-12)


@pytest.mark.parametrize("backend", ["eager", "interpreter", "c"])
def test_complex_keeps_its_parts_as_they_are(backend):
    """tt.complex(re, im) is re + i im with each part as given: a signed zero keeps its sign
    and an infinite imaginary part leaves the real part alone (numpy's re + 1j * im makes it
    NaN), as tf.complex."""
    re = np.array([0.0, 1.0, -0.0, np.nan, 2.0])
    im = np.array([-0.0, np.inf, 0.0, 2.0, -np.inf])
    f = tt.complex if backend == "eager" else tt.function(tt.complex, backend=backend)
    z = f(tt.constant(re), tt.constant(im)).numpy()
    np.testing.assert_array_equal(z.real, re)
    np.testing.assert_array_equal(z.imag, im)
    assert np.signbit(z.real).tolist() == np.signbit(re).tolist()
    assert np.signbit(z.imag).tolist() == np.signbit(im).tolist()


@pytest.mark.parametrize("backend", ["eager", "interpreter", "c"])
def test_the_gradient_of_complex_sums_a_broadcast_part_back_to_its_shape(backend):
    def f(re, im):
        with tt.GradientTape() as tape:
            tape.watch([re, im])
            z = tt.complex(re, im)
            loss = tt.reduce_sum(tt.math.real(z * tt.math.conj(z)))  # sum of re^2 + im^2
        return tape.gradient(loss, [re, im])

    f = f if backend == "eager" else tt.function(f, backend=backend)
    re, im = tt.constant(1.5), tt.constant([0.5, -1.0, 2.0])
    d_re, d_im = f(re, im)
    np.testing.assert_allclose(d_re.numpy(), 3 * 2 * 1.5, rtol=1e-6)  # re meets 3 elements
    np.testing.assert_allclose(d_im.numpy(), 2 * im.numpy(), rtol=1e-6)


@pytest.mark.parametrize("backend", [None, "interpreter", "c"])
def test_real_and_imag_of_a_float_tensor_differentiate_as_in_tensorflow(backend):
    """TensorFlow 2.21: d real(x)/dx is ones and d imag(x)/dx is None for a float x."""

    def grads(x):
        with tt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            real, imag = tt.math.real(x), tt.math.imag(x)
        return tape.gradient(real, x), tape.gradient(imag, x)

    run = grads if backend is None else tt.function(grads, backend=backend)
    real, imag = run(tt.constant([1.0, -2.0], tt.float64))
    np.testing.assert_array_equal(real.numpy(), [1.0, 1.0])
    assert imag is None
