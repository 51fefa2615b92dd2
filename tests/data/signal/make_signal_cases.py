"""Writes signal_cases.json: what TensorFlow's `tf.signal` and `tf.audio` functions give for
fixed inputs, for tests/test_signal.py: windows, frames, transforms, spectrograms, mel
matrices, MFCCs, DCTs and WAV files (bytes as hex).

Made with TensorFlow 2.21 (`python make_signal_cases.py` in an environment with it); tracer
must give every value to float32's rounding of its own arithmetic."""

import json
import os
import sys

import numpy as np

try:
    import tensorflow as tf
except ImportError:
    sys.exit("make_signal_cases.py runs where TensorFlow 2.21 is installed")

rng = np.random.default_rng(20261206)
SIGNAL = rng.standard_normal((2, 300)).astype(np.float32)
SPECTRUM = (rng.standard_normal((2, 9)) + 1j * rng.standard_normal((2, 9))).astype(np.complex64)
MEL_INPUT = rng.uniform(0.1, 4.0, (3, 7, 20)).astype(np.float32)
AUDIO = np.clip(rng.standard_normal((40, 2)) * 0.4, -1.2, 1.2).astype(np.float32)


def _plain(value):
    value = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
    if np.iscomplexobj(value):
        return {"real": value.real.tolist(), "imag": value.imag.tolist()}
    return value.tolist()


def _cases():
    out = {"inputs": {
        "signal": SIGNAL.tolist(),
        "spectrum": _plain(SPECTRUM),
        "mel_input": MEL_INPUT.tolist(),
        "audio": AUDIO.tolist(),
    }}  # fmt: skip
    for name in ("hann_window", "hamming_window"):
        for length in (1, 2, 7, 8, 255):
            for periodic in (True, False):
                window = getattr(tf.signal, name)(length, periodic=periodic)
                out[f"{name}/{length}/{periodic}"] = _plain(window)
    out["vorbis_window/9"] = _plain(tf.signal.vorbis_window(9))
    out["kaiser_window/9"] = _plain(tf.signal.kaiser_window(9, beta=5.0))
    for length, step, pad_end in ((16, 8, False), (16, 8, True), (25, 10, True), (300, 1, False)):
        framed = tf.signal.frame(SIGNAL, length, step, pad_end=pad_end, pad_value=-1.0)
        out[f"frame/{length}/{step}/{pad_end}"] = {
            "shape": list(framed.shape),
            "sum": float(tf.reduce_sum(framed * tf.range(framed.shape[-1], dtype=tf.float32))),
        }
    out["frame/axis0"] = _plain(tf.signal.frame(SIGNAL[:, :5].T, 3, 2, axis=0))
    out["rfft/16"] = _plain(tf.signal.rfft(SIGNAL[:, :16]))
    out["rfft/pad"] = _plain(tf.signal.rfft(SIGNAL[:, :10], fft_length=[16]))
    out["rfft/crop"] = _plain(tf.signal.rfft(SIGNAL[:, :20], fft_length=[15]))
    out["irfft/default"] = _plain(tf.signal.irfft(SPECTRUM))
    out["irfft/odd"] = _plain(tf.signal.irfft(SPECTRUM, fft_length=[17]))
    out["irfft/short"] = _plain(tf.signal.irfft(SPECTRUM, fft_length=[10]))
    out["fft"] = _plain(tf.signal.fft(SPECTRUM))
    out["ifft"] = _plain(tf.signal.ifft(SPECTRUM))
    out["fft2d"] = _plain(tf.signal.fft2d(SPECTRUM))
    out["rfft2d"] = _plain(tf.signal.rfft2d(SIGNAL[:, :12]))
    out["irfft2d"] = _plain(tf.signal.irfft2d(SPECTRUM))
    stft = tf.signal.stft(SIGNAL, frame_length=64, frame_step=32)
    out["stft/64/32"] = _plain(stft)
    out["stft/pad_end"] = _plain(tf.signal.stft(SIGNAL, 50, 20, fft_length=64, pad_end=True))
    out["stft/no_window"] = _plain(tf.signal.stft(SIGNAL, 40, 40, window_fn=None))
    inverse = tf.signal.inverse_stft(stft, 64, 32, window_fn=tf.signal.inverse_stft_window_fn(32))
    out["inverse_stft"] = _plain(inverse)
    out["inverse_stft/hann"] = _plain(tf.signal.inverse_stft(stft, 64, 32))
    out["overlap_and_add"] = _plain(
        tf.signal.overlap_and_add(tf.reshape(SIGNAL[:, :60], [2, 4, 15]), 6)
    )
    out["mel/default"] = _plain(tf.signal.linear_to_mel_weight_matrix())
    out["mel/audio"] = _plain(tf.signal.linear_to_mel_weight_matrix(20, 129, 16000, 80.0, 7600.0))
    out["mfccs"] = _plain(tf.signal.mfccs_from_log_mel_spectrograms(MEL_INPUT))
    for kind in (1, 2, 3, 4):
        out[f"dct/{kind}"] = _plain(tf.signal.dct(MEL_INPUT[0], type=kind))
        if kind != 1:
            out[f"dct/{kind}/ortho"] = _plain(tf.signal.dct(MEL_INPUT[0], type=kind, norm="ortho"))
        out[f"idct/{kind}"] = _plain(tf.signal.idct(MEL_INPUT[0], type=kind))
    out["dct/2/n"] = _plain(tf.signal.dct(MEL_INPUT[0], type=2, n=12))
    out["dct/2/n_pad"] = _plain(tf.signal.dct(MEL_INPUT[0], type=2, n=25))
    wav = tf.audio.encode_wav(AUDIO, 16000)
    out["encode_wav"] = wav.numpy().hex()
    out["encode_wav/rounding"] = tf.audio.encode_wav(
        tf.constant([[0.5], [-0.5], [1.0], [-1.0], [1.5], [-1.5], [0.75], [1 / 65536], [3 / 65536], [-3 / 65536]]), 8000
    ).numpy().hex()  # fmt: skip
    decoded, rate = tf.audio.decode_wav(wav)
    out["decode_wav"] = {"audio": _plain(decoded), "sample_rate": int(rate)}
    for channels, samples in ((1, -1), (3, 50), (-1, 10)):
        audio, _ = tf.audio.decode_wav(wav, desired_channels=channels, desired_samples=samples)
        out[f"decode_wav/{channels}/{samples}"] = _plain(audio)
    return out


def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "signal_cases.json")
    with open(path, "w") as file:
        json.dump(_cases(), file)
    print("wrote", path)


if __name__ == "__main__":
    main()
