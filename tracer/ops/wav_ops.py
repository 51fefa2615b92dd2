"""`tt.audio.decode_wav` and `encode_wav`: 16-bit PCM WAV files to float32 audio and back,
as TensorFlow's DecodeWav and EncodeWav read and write them.

A WAV file is bytes in a tt.string tensor, so these are string ops: they run in Python
(eagerly, in the interpreter, and as a compiled module's calls back to Python), and have no
gradient, as in TensorFlow. The bytes are never trusted: every length is checked before it
is read, and a file that is not one TensorFlow reads is its InvalidArgumentError, with its
message.

What the file holds decides the audio's shape. The op is for `desired_samples` and
`desired_channels` both given, which fix it, so that a traced function may decode; without
them the audio is decoded where the file is known (eagerly, or a constant of a traced
function) as a constant.
"""

import collections
import struct

import numpy as np

from tracer import dtypes
from tracer.errors import InvalidArgumentError
from tracer.ops.convert import as_tensor, length_value
from tracer.ops.core import apply
from tracer.ops.string_ops import expect_strings, string_op
from tracer.tensor import convert_to_tensor

_INT32_MAX = 2**31 - 1


class _Reader:
    """The bytes of a WAV file read from the start, every read checked against their end."""

    def __init__(self, data):
        self.data, self.offset = data, 0

    def take(self, count):
        end = self.offset + count
        if end > len(self.data):
            raise _invalid("Data too short when trying to read string")
        part = self.data[self.offset : end]
        self.offset = end
        return part

    def expect(self, text):
        found = self.take(len(text))
        if found != text:
            raise _invalid(f"Header mismatch: Expected {text.decode()} but found {found!r}")

    def number(self, code):
        return struct.unpack("<" + code, self.take(struct.calcsize(code)))[0]


def _invalid(message):
    return InvalidArgumentError(None, None, f"decode_wav: {message}")


def parse_wav(data):
    """(samples as int16 of shape [frames, channels], sample rate) of a WAV file's bytes, by
    TensorFlow's rules: PCM, 16 bits, a format chunk of 16 or 18 bytes, one data chunk,
    other chunks skipped."""
    if not isinstance(data, bytes):
        raise _invalid(f"contents must be the bytes of a WAV file, not {type(data).__name__}")
    reader = _Reader(data)
    reader.expect(b"RIFF")
    reader.number("I")
    reader.expect(b"WAVE")
    reader.expect(b"fmt ")
    format_size = reader.number("I")
    if format_size not in (16, 18):
        raise _invalid(f"Bad file size for WAV: Expected 16 or 18, but got {format_size}")
    audio_format, channels, rate, bytes_per_second, block, bits = struct.unpack(
        "<HHIIHH", reader.take(16)
    )
    if audio_format != 1:
        raise _invalid(f"Bad audio format for WAV: Expected 1 (PCM), but got {audio_format}")
    if channels < 1:
        raise _invalid(f"Bad number of channels for WAV: Expected at least 1, but got {channels}")
    if bits != 16:
        raise _invalid(f"Can only read 16-bit WAV files, but received {bits}")
    if block != 2 * channels:
        raise _invalid(
            f"Bad bytes per sample in WAV header: Expected {2 * channels} but got {block}"
        )
    if bytes_per_second != block * rate:
        raise _invalid(
            f"Bad bytes per second in WAV header: Expected {block * rate} but got "
            f"{bytes_per_second} (sample_rate={rate}, bytes_per_sample={block})"
        )
    if format_size == 18:
        reader.take(2)
    samples = None
    while reader.offset < len(data):
        chunk = reader.take(4)
        size = reader.number("I")
        if size > _INT32_MAX:
            raise _invalid(
                f"WAV data chunk {chunk!r} is too large: {size} bytes, but the limit is "
                f"{_INT32_MAX}"
            )
        if chunk != b"data":
            reader.offset += size
            continue
        if samples is not None:
            raise _invalid("More than one data chunk found in WAV")
        frames = size // block
        samples = np.frombuffer(reader.take(frames * block), dtype="<i2").reshape(frames, channels)
    if samples is None:
        raise _invalid("No data chunk found in WAV")
    return samples, rate


def _decoded(data, desired_channels, desired_samples):
    samples, _ = parse_wav(data)
    frames, channels = samples.shape
    if desired_channels > 0:
        # fewer channels keep the first ones; more repeat the last, as TensorFlow does
        samples = samples[:, np.minimum(np.arange(desired_channels), channels - 1)]
    if desired_samples >= 0:
        kept = samples[:desired_samples]
        samples = np.zeros((desired_samples, samples.shape[1]), np.int16)
        samples[: len(kept)] = kept
    return samples.astype(np.float32) * np.float32(1 / 32768)


def _one_file(value, what):
    value = np.asarray(value)
    if value.ndim != 0:
        raise _invalid(f"{what}: contents must be a scalar (one file), not of shape {value.shape}")
    return value[()]


def _decode_kernel(contents, desired_channels, desired_samples):
    return _decoded(_one_file(contents, "decode_wav"), desired_channels, desired_samples)


def _infer_decode(attrs, contents):
    expect_strings(contents)
    if len(contents.shape) != 0:
        raise ValueError(
            f"contents must be a scalar string (one file), not of shape {contents.shape}"
        )
    return (attrs["desired_samples"], attrs["desired_channels"]), dtypes.float32


DECODE_WAV = string_op("decode_wav", _infer_decode, _decode_kernel)


def _rate_kernel(contents):
    return np.int32(parse_wav(_one_file(contents, "decode_wav"))[1])


def _infer_rate(attrs, contents):
    expect_strings(contents)
    return (), dtypes.int32


WAV_SAMPLE_RATE = string_op("wav_sample_rate", _infer_rate, _rate_kernel)


def _encode_kernel(audio, sample_rate):
    audio = np.asarray(audio, np.float32)
    rate = int(sample_rate)
    frames, channels = audio.shape
    if not 0 < rate < 2**32:
        raise InvalidArgumentError(
            None, None, f"encode_wav: sample_rate must be in (0, 2^32), got: {rate}"
        )
    if not 0 < channels < 2**16:
        raise InvalidArgumentError(
            None, None, f"encode_wav: num_channels must be in (0, 2^16), got: {channels}"
        )
    if frames == 0:
        raise InvalidArgumentError(None, None, "encode_wav: num_frames must be positive.")
    if np.isnan(audio).any():
        raise InvalidArgumentError(
            None, None, "encode_wav: audio holds NaN, which no 16-bit sample is"
        )
    if 44 + audio.size * 2 > 2**32 - 1:
        raise InvalidArgumentError(
            None, None, "encode_wav: Provided channels and frames cannot be encoded as a WAV."
        )
    # TensorFlow's sample: x * 2^15 rounded half away from zero (in double, where |x| + 0.5
    # is exact), then clamped
    scaled = audio.astype(np.float64) * 32768
    rounded = np.copysign(np.floor(np.abs(scaled) + 0.5), scaled)
    samples = np.clip(rounded, -32768, 32767).astype("<i2")
    block = 2 * channels
    header = b"RIFF" + struct.pack("<I", 36 + samples.nbytes) + b"WAVEfmt "
    header += struct.pack("<IHHIIHH", 16, 1, channels, rate, rate * block, block, 16)
    header += b"data" + struct.pack("<I", samples.nbytes)
    return np.array(header + samples.tobytes(), dtype=object)


def _infer_encode(attrs, audio, sample_rate):
    if audio.dtype != dtypes.float32:
        raise TypeError(f"audio must be float32, not {audio.dtype.name}")
    if len(audio.shape) != 2:
        raise ValueError(f"audio must be of rank 2 [frames, channels], not of shape {audio.shape}")
    if sample_rate.dtype != dtypes.int32 or len(sample_rate.shape) != 0:
        raise TypeError(f"sample_rate must be an int32 scalar, not {sample_rate!r}")
    return (), dtypes.string


ENCODE_WAV = string_op("encode_wav", _infer_encode, _encode_kernel)


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """(audio, sample_rate) of a 16-bit PCM WAV file's bytes: audio float32 of shape
    [samples, channels] in [-1, 1), cut or padded with zeros to `desired_samples` (when it
    is not -1), its channels the first `desired_channels` (the last repeated where the file
    has fewer); sample_rate an int32 scalar."""
    contents = as_tensor(contents)
    channels, samples = int(desired_channels), int(desired_samples)
    rate = apply(WAV_SAMPLE_RATE, (contents,), {})
    if channels > 0 and samples >= 0:
        attrs = {"desired_channels": channels, "desired_samples": samples}
        return DecodeWav(apply(DECODE_WAV, (contents,), attrs), rate)
    # the file's own counts, known from its bytes only: a value made now, as a constant (in
    # a traced function whose file is computed when it runs, the function runs as Python)
    length_value(
        contents,
        "tt.audio.decode_wav's file",
        " (desired_samples and desired_channels give the audio a shape known when tracing)",
    )
    return DecodeWav(as_tensor(_decode_kernel(contents._value, channels, samples)), rate)


def encode_wav(audio, sample_rate, name=None):
    """The bytes of a 16-bit PCM WAV file of float32 `audio` [frames, channels]: each sample
    times 2^15, rounded half away from zero, clamped to int16's range."""
    audio = as_tensor(audio)
    return apply(ENCODE_WAV, (audio, convert_to_tensor(sample_rate, dtype=dtypes.int32)), {})


# decode_wav's result, named as TensorFlow names it
DecodeWav = collections.namedtuple("DecodeWav", ["audio", "sample_rate"])
