"""Catalogue cases of tt.signal and tt.audio: the transforms, spectrograms and cosine
transforms are compositions of matmul, complex, real, imag, gather and pads
(tracer/ops/fourier_ops.py, frame_ops.py), so they are COMPOSITES whose derivatives the
catalogue checks in every backend; the WAV ops (tracer/ops/wav_ops.py) are string ops with
no gradient. Their values against TensorFlow's are tests/test_signal.py's and
tests/test_audio.py's."""

import numpy as np

import tracer as tt

rng = np.random.default_rng(20261206)


def normal(*shape):
    return rng.standard_normal(shape)


def _spectral_product(x):
    """The real signal whose spectrum is the square of x's: a circular self-convolution."""
    spectrum = tt.signal.rfft(x)
    return tt.signal.irfft(spectrum * spectrum, [x.shape[-1]])


def _complex_transforms(x, y):
    z = tt.complex(x, y)
    return tt.math.real(tt.signal.fft(z) * tt.signal.ifft(z)) + tt.math.imag(tt.signal.fft2d(z))


def _spectrogram_roundtrip(x):
    stft = tt.signal.stft(x * x, frame_length=12, frame_step=5, fft_length=16, pad_end=True)
    magnitudes = tt.math.real(stft * tt.math.conj(stft))
    return tt.signal.inverse_stft(stft, 12, 5, fft_length=16)[..., :30] + magnitudes[..., 0, :1]


MEL = tt.signal.linear_to_mel_weight_matrix(4, 9, 8000, 100.0, 3000.0, dtype=tt.float64)


def _cepstra(x):
    log_mel = tt.math.log(tt.matmul(x * x + 1.0, MEL) + 0.5)
    mfccs = tt.signal.mfccs_from_log_mel_spectrograms(log_mel)
    others = tt.signal.dct(x, type=1) + tt.signal.idct(x * x, type=3, norm="ortho")
    return tt.concat([mfccs, others[..., :4] + tt.signal.dct(x, type=4)[..., :4]], axis=-1)


def _frames_added(x):
    framed = tt.signal.frame(x * x, 4, 3, pad_end=True, pad_value=0.5, axis=0)
    return tt.signal.overlap_and_add(tt.transpose(framed, [1, 0, 2]), 2)


COMPOSITES = {
    "signal_rfft_irfft": (_spectral_product, [normal(2, 7)]),
    "signal_fft_ifft_fft2d": (_complex_transforms, [normal(2, 3, 4), normal(2, 3, 4)]),
    "signal_stft_inverse": (_spectrogram_roundtrip, [normal(2, 30)]),
    "signal_mel_dct": (_cepstra, [normal(2, 3, 9)]),
    "signal_frame_overlap_and_add": (_frames_added, [normal(10, 2)]),
}


def _wav(x):
    """x as a WAV file of one channel (x / 4, so that no sample is clamped)."""
    return tt.audio.encode_wav(tt.cast(x[:, None] * 0.25, tt.float32), 8000)


NO_GRADIENT = {
    "encode_wav": lambda x: tt.cast(tt.strings.length(_wav(x)), tt.float64),
    "decode_wav": lambda x: tt.cast(tt.audio.decode_wav(_wav(x), 2, 5).audio, tt.float64),
    "wav_sample_rate": lambda x: tt.cast(
        tt.audio.decode_wav(_wav(x), 1, 3).sample_rate, tt.float64
    ),
}
