"""TensorFlow's spectrograms: `tf.signal.stft`, `inverse_stft` and its window, the mel
filterbank and MFCCs, composed of frames (frame_ops.py), windows (window_functions.py) and
the transforms (fourier_ops.py)."""

import numpy as np

from tracer import dtypes
from tracer.ops import fourier_ops, frame_ops, math_ops
from tracer.ops.convert import as_tensor, known_value, static_int
from tracer.ops.window_functions import hann_window


def _enclosing_power_of_two(value):
    return int(2 ** np.ceil(np.log2(value))) if value > 0 else 1


def stft(signals, frame_length, frame_step, fft_length=None, window_fn=hann_window, pad_end=False, name=None):  # fmt: skip
    """The short-time Fourier transform of real `signals` along their last axis: frames of
    frame_length samples every frame_step, each times `window_fn(frame_length)` (none where
    it is None), transformed by rfft of `fft_length` (by default the smallest power of two
    at least frame_length). Shape [..., frames, fft_length // 2 + 1], complex."""
    signals = as_tensor(signals)
    if not signals.dtype.is_floating:
        raise TypeError(
            f"tt.signal.stft: signals must be float32 or float64, not {signals.dtype.name}"
        )
    frame_length = static_int(frame_length)
    if fft_length is None:
        fft_length = _enclosing_power_of_two(frame_length)
    framed = frame_ops.frame(signals, frame_length, frame_step, pad_end=pad_end)
    if window_fn is not None:
        framed = framed * window_fn(frame_length, dtype=signals.dtype)
    return fourier_ops.rfft(framed, [static_int(fft_length)])


def inverse_stft(stfts, frame_length, frame_step, fft_length=None, window_fn=hann_window, name=None):  # fmt: skip
    """The signal whose stft is `stfts`: each frame's irfft cut or padded to frame_length,
    times `window_fn(frame_length)`, the frames overlapped and added. With
    `inverse_stft_window_fn(frame_step)` as window_fn it inverts stft where the frames
    overlap enough."""
    stfts = as_tensor(stfts)
    if not stfts.dtype.is_complex:
        raise TypeError(f"tt.signal.inverse_stft: stfts must be complex, not {stfts.dtype.name}")
    frame_length = static_int(frame_length)
    if fft_length is None:
        fft_length = _enclosing_power_of_two(frame_length)
    frames = fourier_ops.irfft(stfts, [static_int(fft_length)])
    frames = fourier_ops.fit_last_axis(frames, frame_length)
    if window_fn is not None:
        frames = frames * window_fn(frame_length, dtype=frames.dtype)
    return frame_ops.overlap_and_add(frames, frame_step)


def inverse_stft_window_fn(frame_step, forward_window_fn=hann_window, name=None):
    """The window function that makes inverse_stft invert an stft made with
    `forward_window_fn` at `frame_step`: the forward window divided by the sum of its squares
    over the frames that overlap each sample."""
    frame_step = static_int(frame_step)

    def window_fn(frame_length, dtype=dtypes.float32):
        forward = np.asarray(
            known_value(as_tensor(forward_window_fn(frame_length, dtype=dtype)), "the window"),
            np.float64,
        )
        length = forward.shape[0]
        hops = -(-length // frame_step)
        squares = np.zeros(hops * frame_step)
        squares[:length] = forward**2
        overlapped = np.tile(squares.reshape(hops, frame_step).sum(axis=0), hops)[:length]
        return as_tensor((forward / overlapped).astype(dtypes.as_dtype(dtype).as_numpy_dtype))

    return window_fn


def _hertz_to_mel(frequencies):
    return 1127.0 * np.log1p(np.asarray(frequencies, np.float64) / 700.0)


def linear_to_mel_weight_matrix(num_mel_bins=20, num_spectrogram_bins=129, sample_rate=8000, lower_edge_hertz=125.0, upper_edge_hertz=3800.0, dtype=dtypes.float32, name=None):  # fmt: skip
    """The [num_spectrogram_bins, num_mel_bins] matrix that maps a linear spectrogram's
    magnitudes to mel bands: triangles on the mel scale (1127 ln(1 + f / 700)) between
    lower_edge_hertz and upper_edge_hertz, the bin of 0 Hz left out, as TensorFlow's."""
    what = "tt.signal.linear_to_mel_weight_matrix"
    num_mel_bins, bins = static_int(num_mel_bins), static_int(num_spectrogram_bins)
    rate, low, high = float(sample_rate), float(lower_edge_hertz), float(upper_edge_hertz)
    dtype = dtypes.as_dtype(dtype)
    if num_mel_bins <= 0:
        raise ValueError(f"{what}: num_mel_bins must be positive, not {num_mel_bins}")
    if rate <= 0:
        raise ValueError(f"{what}: sample_rate must be positive, not {sample_rate}")
    if low < 0:
        raise ValueError(f"{what}: lower_edge_hertz must be non-negative, not {lower_edge_hertz}")
    if low >= high:
        raise ValueError(
            f"{what}: lower_edge_hertz {lower_edge_hertz} must be below upper_edge_hertz "
            f"{upper_edge_hertz}"
        )
    if high > rate / 2:
        raise ValueError(
            f"{what}: upper_edge_hertz {upper_edge_hertz} must not be above the Nyquist "
            f"frequency, sample_rate / 2 = {rate / 2}"
        )
    if not dtype.is_floating:
        raise ValueError(f"{what}: dtype must be a floating point type, not {dtype.name}")
    linear = np.linspace(0.0, rate / 2, bins)[1:]
    spectrogram_mel = _hertz_to_mel(linear)[:, None]
    edges = np.linspace(_hertz_to_mel(low), _hertz_to_mel(high), num_mel_bins + 2)
    lower, center, upper = edges[:-2], edges[1:-1], edges[2:]
    rising = (spectrogram_mel - lower) / (center - lower)
    falling = (upper - spectrogram_mel) / (upper - center)
    weights = np.maximum(0.0, np.minimum(rising, falling))
    weights = np.concatenate([np.zeros((1, num_mel_bins)), weights])
    return as_tensor(weights.astype(dtype.as_numpy_dtype))


def mfccs_from_log_mel_spectrograms(log_mel_spectrograms, name=None):
    """The mel-frequency cepstral coefficients of log-magnitude mel spectrograms (their last
    axis the mel bins): a DCT of type 2 scaled by 1 / sqrt(2 num_mel_bins), as
    TensorFlow's."""
    x = as_tensor(log_mel_spectrograms)
    if not x.dtype.is_floating:
        raise TypeError(
            "tt.signal.mfccs_from_log_mel_spectrograms: the input must be float32 or float64, "
            f"not {x.dtype.name}"
        )
    bins = x.shape[-1] if x.shape.rank else None
    if not isinstance(bins, int) or bins == 0:
        raise ValueError(
            "tt.signal.mfccs_from_log_mel_spectrograms: the mel bins (the last axis) must be "
            f"known and not empty, not of shape {x.shape}"
        )
    scale = np.asarray(1 / np.sqrt(2.0 * bins), x.dtype.as_numpy_dtype)
    return math_ops.multiply(fourier_ops.dct(x, type=2), scale)
