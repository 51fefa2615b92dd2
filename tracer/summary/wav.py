"""16-bit PCM WAV files, as TensorFlow's `tf.audio.encode_wav` writes them: a 44-byte RIFF
header, then each frame's samples, little-endian, each float in [-1, 1] scaled by 2^15,
rounded half away from zero and kept within int16 (NaN, which TF leaves undefined, as 0)."""

import struct

import numpy as np


def encode(clip, sample_rate):
    """The WAV bytes of `clip` [frames, channels] (floats) at `sample_rate` Hz."""
    _, channels = clip.shape
    scaled = np.asarray(clip, np.float32).astype(np.float64) * 2**15  # exact
    rounded = np.nan_to_num(np.sign(scaled) * np.floor(np.abs(scaled) + 0.5))
    data = np.clip(rounded, -(2**15), 2**15 - 1).astype("<i2").tobytes()
    header = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE"
    header += b"fmt " + struct.pack(
        "<IHHIIHH", 16, 1, channels, sample_rate, sample_rate * channels * 2, channels * 2, 16
    )
    return header + b"data" + struct.pack("<I", len(data)) + data
