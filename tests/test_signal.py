"""tt.signal against TensorFlow 2.21's outputs for the same inputs
(tests/data/signal/signal_cases.json, made by make_signal_cases.py beside it), against numpy's
FFT in float64, and its errors. Their gradients, forward mode and compiled C are the
catalogue's (tests/catalogue/signal.py)."""

import json
import os

import numpy as np
import pytest

import tracer as tt

CASES = json.load(
    open(os.path.join(os.path.dirname(__file__), "data", "signal", "signal_cases.json"))
)


def _array(value, dtype=np.float32):
    if isinstance(value, dict):
        return (np.array(value["real"]) + 1j * np.array(value["imag"])).astype(np.complex64)
    return np.array(value, dtype)


SIGNAL = _array(CASES["inputs"]["signal"])
SPECTRUM = _array(CASES["inputs"]["spectrum"])
MEL_INPUT = _array(CASES["inputs"]["mel_input"])


def _close(got, key, tolerance=1e-6):
    want = _array(CASES[key])
    got = got.numpy()
    assert got.shape == want.shape and got.dtype == want.dtype, key
    np.testing.assert_allclose(got, want, rtol=0, atol=tolerance * np.abs(want).max(), err_msg=key)


@pytest.mark.parametrize("name", ["hann_window", "hamming_window"])
@pytest.mark.parametrize("length", [1, 2, 7, 8, 255])
@pytest.mark.parametrize("periodic", [True, False])
def test_raised_cosine_windows(name, length, periodic):
    _close(getattr(tt.signal, name)(length, periodic=periodic), f"{name}/{length}/{periodic}")


def test_other_windows():
    _close(tt.signal.vorbis_window(9), "vorbis_window/9")
    _close(tt.signal.kaiser_window(9, beta=5.0), "kaiser_window/9")
    assert tt.signal.hann_window(4, dtype=tt.float64).dtype == tt.float64


@pytest.mark.parametrize(("length", "step", "pad_end"), [(16, 8, False), (16, 8, True), (25, 10, True), (300, 1, False)])  # fmt: skip
def test_frames(length, step, pad_end):
    framed = tt.signal.frame(SIGNAL, length, step, pad_end=pad_end, pad_value=-1.0)
    want = CASES[f"frame/{length}/{step}/{pad_end}"]
    assert list(framed.shape) == want["shape"]
    weighted = np.sum(framed.numpy().astype(np.float64) * np.arange(framed.shape[-1]))
    np.testing.assert_allclose(weighted, want["sum"], rtol=1e-5)
    _close(tt.signal.frame(SIGNAL[:, :5].T, 3, 2, axis=0), "frame/axis0")


def test_kaiser_window_of_a_tensor_beta_differentiates_in_it():
    """TensorFlow's kaiser_window is ops of beta; a tensor beta gives numpy's window and
    its derivative in beta (central differences of np.kaiser), eagerly and traced."""
    weights = np.arange(9.0)
    beta = tt.constant(3.0, tt.float64)
    with tt.GradientTape() as tape:
        tape.watch(beta)
        window = tt.signal.kaiser_window(9, beta=beta, dtype=tt.float64)
        total = tt.reduce_sum(window * weights)
    np.testing.assert_allclose(window.numpy(), np.kaiser(9, 3.0), rtol=1e-14)
    step = 1e-6
    numeric = (np.kaiser(9, 3.0 + step) - np.kaiser(9, 3.0 - step)) @ weights / (2 * step)
    np.testing.assert_allclose(tape.gradient(total, beta).numpy(), numeric, rtol=1e-7)
    traced = tt.function(lambda b: tt.signal.kaiser_window(5, beta=b))(tt.constant(2.0))
    np.testing.assert_allclose(traced.numpy(), np.kaiser(5, 2.0), rtol=1e-6)


def test_transforms():
    _close(tt.signal.rfft(SIGNAL[:, :16]), "rfft/16")
    _close(tt.signal.rfft(SIGNAL[:, :10], fft_length=[16]), "rfft/pad")
    _close(tt.signal.rfft(SIGNAL[:, :20], fft_length=[15]), "rfft/crop")
    _close(tt.signal.irfft(SPECTRUM), "irfft/default")
    _close(tt.signal.irfft(SPECTRUM, fft_length=[17]), "irfft/odd")
    _close(tt.signal.irfft(SPECTRUM, fft_length=[10]), "irfft/short")
    _close(tt.signal.fft(SPECTRUM), "fft")
    _close(tt.signal.ifft(SPECTRUM), "ifft")
    _close(tt.signal.fft2d(SPECTRUM), "fft2d")
    _close(tt.signal.rfft2d(SIGNAL[:, :12]), "rfft2d")
    _close(tt.signal.irfft2d(SPECTRUM), "irfft2d")


def test_spectrograms():
    stft = tt.signal.stft(SIGNAL, frame_length=64, frame_step=32)
    _close(stft, "stft/64/32")
    _close(tt.signal.stft(SIGNAL, 50, 20, fft_length=64, pad_end=True), "stft/pad_end")
    _close(tt.signal.stft(SIGNAL, 40, 40, window_fn=None), "stft/no_window")
    inverse_window = tt.signal.inverse_stft_window_fn(32)
    _close(tt.signal.inverse_stft(stft, 64, 32, window_fn=inverse_window), "inverse_stft")
    _close(tt.signal.inverse_stft(stft, 64, 32), "inverse_stft/hann")
    _close(tt.signal.overlap_and_add(tt.reshape(SIGNAL[:, :60], [2, 4, 15]), 6), "overlap_and_add")


def test_mel_and_cosine_transforms():
    _close(tt.signal.linear_to_mel_weight_matrix(), "mel/default", 1e-5)
    _close(tt.signal.linear_to_mel_weight_matrix(20, 129, 16000, 80.0, 7600.0), "mel/audio", 1e-5)
    _close(tt.signal.mfccs_from_log_mel_spectrograms(MEL_INPUT), "mfccs")
    rows = MEL_INPUT[0]
    for kind in (1, 2, 3, 4):
        _close(tt.signal.dct(rows, type=kind), f"dct/{kind}")
        _close(tt.signal.idct(rows, type=kind), f"idct/{kind}")
        if kind != 1:
            _close(tt.signal.dct(rows, type=kind, norm="ortho"), f"dct/{kind}/ortho")
    _close(tt.signal.dct(rows, type=2, n=12), "dct/2/n")
    _close(tt.signal.dct(rows, type=2, n=25), "dct/2/n_pad")


def test_float64_transforms_against_numpy():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 37))
    z = x + 1j * rng.standard_normal((3, 4, 37))
    np.testing.assert_allclose(tt.signal.rfft(x).numpy(), np.fft.rfft(x), atol=1e-12)
    np.testing.assert_allclose(tt.signal.irfft(np.fft.rfft(x), [37]).numpy(), x, atol=1e-12)
    np.testing.assert_allclose(tt.signal.fft(z).numpy(), np.fft.fft(z), atol=1e-12)
    np.testing.assert_allclose(tt.signal.ifft(z).numpy(), np.fft.ifft(z), atol=1e-13)
    np.testing.assert_allclose(tt.signal.fft2d(z).numpy(), np.fft.fft2(z), atol=1e-11)
    np.testing.assert_allclose(tt.signal.ifft2d(z).numpy(), np.fft.ifft2(z), atol=1e-13)
    np.testing.assert_allclose(tt.signal.rfft2d(x).numpy(), np.fft.rfft2(x), atol=1e-11)
    np.testing.assert_allclose(tt.signal.irfft2d(np.fft.rfft2(x), [4, 37]).numpy(), x, atol=1e-12)
    np.testing.assert_array_equal(tt.signal.fftshift(x).numpy(), np.fft.fftshift(x))
    np.testing.assert_array_equal(
        tt.signal.ifftshift(x, axes=-1).numpy(), np.fft.ifftshift(x, axes=-1)
    )
    assert tt.signal.rfft(x).dtype == tt.complex128


def test_an_stft_inverted_inside_a_compiled_function_of_any_batch():
    @tt.function(input_signature=[tt.TensorSpec([None, 300], tt.float64)])
    def roundtrip(signals):
        stft = tt.signal.stft(signals, 64, 16)
        window = tt.signal.inverse_stft_window_fn(16)
        return tt.signal.inverse_stft(stft, 64, 16, window_fn=window)

    signals = np.random.default_rng(4).standard_normal((5, 300))
    restored = roundtrip(signals).numpy()
    # every sample from the end of the first frame to the start of the last is covered by
    # four overlapping frames, where the inverse window makes the sum exact
    np.testing.assert_allclose(restored[:, 48:240], signals[:, 48:240], atol=1e-12)
    assert restored.shape == (5, 16 * 14 + 64)


def test_errors_name_what_was_wrong():
    with pytest.raises(TypeError, match="rfft: the input must be float32 or float64"):
        tt.signal.rfft(tt.constant([1, 2, 3]))
    with pytest.raises(TypeError, match="fft: the input must be complex64 or complex128"):
        tt.signal.fft(tt.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match="frame_step must be positive"):
        tt.signal.frame(SIGNAL, 4, 0)
    with pytest.raises(ValueError, match="upper_edge_hertz 9000.0 must not be above the Nyquist"):
        tt.signal.linear_to_mel_weight_matrix(sample_rate=16000, upper_edge_hertz=9000.0)
    with pytest.raises(ValueError, match="type 1 has no orthonormal form"):
        tt.signal.dct(SIGNAL, type=1, norm="ortho")
    with pytest.raises(NotImplementedError, match="axis must be -1"):
        tt.signal.dct(SIGNAL, axis=0)
    # (a signature leaving the last axis unknown: each call traced with its own length)
    rfft = tt.function(lambda x: tt.signal.rfft(x), input_signature=[tt.TensorSpec([2, None])])
    np.testing.assert_allclose(rfft(SIGNAL).numpy(), np.fft.rfft(SIGNAL), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_lengths_and_axes_computed_when_the_function_runs(backend):
    """TF 2.21 takes a window_length, an fft_length, a dct's n and a cumsum's axis that are
    tensor arguments of a tf.function; tracer raised (TypeError comparing None, or
    "symbolic"); now such a function runs as Python, with the values of the numbers."""
    x = np.arange(6.0, dtype=np.float32)
    window = tt.function(lambda n: tt.signal.hann_window(n), backend=backend)
    np.testing.assert_allclose(window(tt.constant(5)).numpy(), [0, 0.5, 1, 0.5, 0], atol=1e-7)
    spectrum = tt.function(lambda v, n: tt.abs(tt.signal.rfft(v, fft_length=n)), backend=backend)
    np.testing.assert_allclose(
        spectrum(x, tt.constant([4])).numpy(), np.abs(np.fft.rfft(x[:4])), rtol=1e-6
    )
    dct = tt.function(lambda v, n: tt.signal.dct(v, n=n), backend=backend)
    np.testing.assert_allclose(
        dct(x, tt.constant(6)).numpy(), tt.signal.dct(tt.constant(x)).numpy(), rtol=1e-6
    )
    running = tt.function(lambda v, a: tt.math.cumsum(v, axis=a), backend=backend)
    np.testing.assert_array_equal(
        running(x.reshape(2, 3), tt.constant(1)).numpy(), np.cumsum(x.reshape(2, 3), axis=1)
    )


def test_three_dimensional_transforms_and_segment_square_roots():
    """TF 2.21 for the same seeded inputs: fft3d's first values, rfft3d's shapes and first
    bins (also cut and padded by fft_length=[2, 5, 4]), irfft3d of those; the inverses give
    the inputs back; unsorted_segment_sqrt_n of [[1, 2], [3, 4], [5, 6]] by [0, 2, 0] into 4
    is [[4.242641 5.656854] [0 0] [3 4] [0 0]] (they were missing)."""
    rng = np.random.default_rng(0)
    z = (rng.normal(size=(2, 3, 4, 5)) + 1j * rng.normal(size=(2, 3, 4, 5))).astype(np.complex64)
    r = rng.normal(size=(2, 3, 4, 6)).astype(np.float32)
    spectrum = tt.signal.fft3d(tt.constant(z)).numpy()
    np.testing.assert_allclose(spectrum, np.fft.fftn(z, axes=(-3, -2, -1)), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        spectrum.ravel()[:3], [4.638 - 4.121j, -4.457 + 2.179j, -11.951 - 5.101j], atol=1e-3
    )
    back = tt.signal.ifft3d(tt.signal.fft3d(tt.constant(z))).numpy()
    np.testing.assert_allclose(back, z, atol=1e-5)
    half = tt.signal.rfft3d(tt.constant(r))
    assert half.shape == (2, 3, 4, 4)
    np.testing.assert_allclose(half.numpy().ravel()[:3], [-7.539, 15.738 - 3.63j, -0.157 - 7.832j], atol=1e-3)  # fmt: skip
    cut = tt.signal.rfft3d(tt.constant(r), fft_length=[2, 5, 4])
    assert cut.shape == (2, 2, 5, 3)
    np.testing.assert_allclose(cut.numpy().ravel()[:4], [1.601, 8.698 - 5.462j, -4.14, 3.6 - 4.801j], atol=1e-3)  # fmt: skip
    np.testing.assert_allclose(tt.signal.irfft3d(half).numpy(), r, atol=1e-5)
    small = tt.signal.irfft3d(cut, fft_length=[2, 5, 4])
    assert small.shape == (2, 2, 5, 4)
    np.testing.assert_allclose(small.numpy().ravel()[:4], [1.297, -0.346, 0.855, -0.489], atol=1e-3)
    data = tt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    roots = tt.math.unsorted_segment_sqrt_n(data, [0, 2, 0], 4).numpy()
    np.testing.assert_allclose(roots, [[4.242641, 5.656854], [0, 0], [3, 4], [0, 0]], rtol=1e-6)
