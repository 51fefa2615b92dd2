"""`tt.signal`: TensorFlow's `tf.signal`: windows, frames, Fourier and cosine transforms,
spectrograms, mel filterbanks and MFCCs (docs/signal.md)."""

from tracer.ops.fourier_ops import (
    dct,
    fft,
    fft2d,
    fft3d,
    fftshift,
    idct,
    ifft,
    ifft2d,
    ifft3d,
    ifftshift,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
from tracer.ops.frame_ops import frame, overlap_and_add
from tracer.ops.spectrogram_ops import (
    inverse_stft,
    inverse_stft_window_fn,
    linear_to_mel_weight_matrix,
    mfccs_from_log_mel_spectrograms,
    stft,
)
from tracer.ops.window_functions import hamming_window, hann_window, kaiser_window, vorbis_window

__all__ = [
    "dct", "fft", "fft2d", "fft3d", "fftshift", "frame", "hamming_window", "hann_window", "idct",
    "ifft", "ifft2d", "ifft3d", "ifftshift", "inverse_stft", "inverse_stft_window_fn", "irfft",
    "irfft2d", "irfft3d", "kaiser_window", "linear_to_mel_weight_matrix",
    "mfccs_from_log_mel_spectrograms", "overlap_and_add", "rfft", "rfft2d", "rfft3d", "stft",
    "vorbis_window",
]  # fmt: skip
