"""tt.audio.decode_wav and encode_wav against TensorFlow 2.21's bytes and values
(tests/data/signal/signal_cases.json), their errors on files that are not 16-bit PCM, and
tt.keras.utils.audio_dataset_from_directory against what Keras 3.15 gave for the same
directory (the subsets a seed picks, padded batches, cut files, label modes)."""

import json
import os
import struct
import wave

import numpy as np
import pytest

import tracer as tt

CASES = json.load(
    open(os.path.join(os.path.dirname(__file__), "data", "signal", "signal_cases.json"))
)
AUDIO = np.array(CASES["inputs"]["audio"], np.float32)


def _wav(samples, channels=1, rate=8000):
    header = struct.pack("<4sI4s4sIHHIIHH4sI", b"RIFF", 36 + 2 * len(samples), b"WAVE",
                         b"fmt ", 16, 1, channels, rate, rate * 2 * channels, 2 * channels, 16,
                         b"data", 2 * len(samples))  # fmt: skip
    return header + np.asarray(samples, "<i2").tobytes()


def test_encode_wav_writes_tensorflow_bytes():
    assert tt.audio.encode_wav(AUDIO, 16000).numpy().hex() == CASES["encode_wav"]
    halves = [[0.5], [-0.5], [1.0], [-1.0], [1.5], [-1.5], [0.75], [1 / 65536], [3 / 65536], [-3 / 65536]]  # fmt: skip
    assert (
        tt.audio.encode_wav(np.float32(halves), 8000).numpy().hex() == CASES["encode_wav/rounding"]
    )


def test_decode_wav_gives_tensorflow_values():
    contents = bytes.fromhex(CASES["encode_wav"])
    audio, rate = tt.audio.decode_wav(contents)
    np.testing.assert_array_equal(audio.numpy(), np.float32(CASES["decode_wav"]["audio"]))
    assert int(rate) == 16000 and rate.dtype == tt.int32
    for channels, samples in ((1, -1), (3, 50), (-1, 10)):
        got = tt.audio.decode_wav(contents, desired_channels=channels, desired_samples=samples)
        np.testing.assert_array_equal(
            got.audio.numpy(), np.float32(CASES[f"decode_wav/{channels}/{samples}"])
        )


def test_decode_wav_in_a_traced_function_compiles_with_both_sizes():
    """With desired_samples and desired_channels the audio's shape is known when tracing;
    without them a function given the file runs as Python (TF's graph takes the file's
    shape), with the file's values."""
    contents = tt.constant(bytes.fromhex(CASES["encode_wav"]))
    decode = tt.function(lambda c: tt.audio.decode_wav(c, desired_channels=1, desired_samples=30))
    audio, rate = decode(contents)
    np.testing.assert_array_equal(audio.numpy(), np.float32(CASES["decode_wav"]["audio"])[:30, :1])
    assert int(rate) == 16000
    whole = tt.function(lambda c: tt.audio.decode_wav(c, desired_samples=30))(contents)
    np.testing.assert_array_equal(
        whole.audio.numpy(), np.float32(CASES["decode_wav"]["audio"])[:30]
    )


def test_encode_then_decode_inside_a_compiled_function():
    roundtrip = tt.function(lambda a: tt.audio.decode_wav(tt.audio.encode_wav(a, 8000), 2, 40)[0])
    expected = np.clip(np.round(AUDIO.astype(np.float64) * 32768), -32768, 32767) / 32768
    np.testing.assert_array_equal(roundtrip(AUDIO).numpy(), expected.astype(np.float32))


@pytest.mark.parametrize(
    ("contents", "message"),
    [
        (b"RIFF", "Data too short"),
        (b"RIFX" + bytes(40), "Header mismatch: Expected RIFF"),
        (_wav([1, 2])[:20] + struct.pack("<H", 3) + _wav([1, 2])[22:], "Expected 1 \\(PCM\\)"),
        (_wav([1, 2])[:34] + struct.pack("<H", 8) + _wav([1, 2])[36:], "Can only read 16-bit"),
        (_wav([1, 2])[:32] + struct.pack("<H", 4) + _wav([1, 2])[34:], "Bad bytes per sample"),
        (_wav([1, 2])[:36], "No data chunk"),
        (_wav([1, 2, 3])[:-2], "Data too short"),
        (_wav([1]) + b"data" + struct.pack("<I", 2) + b"\0\0", "More than one data chunk"),
        (_wav([1])[:40] + struct.pack("<I", 2**31) + _wav([1])[44:], "too large"),
    ],
)
def test_decode_wav_refuses_files_tensorflow_refuses(contents, message):
    with pytest.raises(tt.errors.InvalidArgumentError, match=message):
        tt.audio.decode_wav(contents)


def test_decode_wav_skips_other_chunks_and_reads_stereo():
    stereo = _wav([1, -2, 3, -4], channels=2)
    with_list = stereo[:36] + b"LIST" + struct.pack("<I", 4) + b"abcd" + stereo[36:]
    audio, _ = tt.audio.decode_wav(with_list)
    np.testing.assert_array_equal(audio.numpy() * 32768, [[1, -2], [3, -4]])


def test_encode_wav_refuses_what_no_wav_holds():
    with pytest.raises(tt.errors.InvalidArgumentError, match="NaN"):
        tt.audio.encode_wav(np.float32([[np.nan]]), 8000)
    with pytest.raises(tt.errors.InvalidArgumentError, match="sample_rate"):
        tt.audio.encode_wav(np.float32([[0.1]]), 0)
    with pytest.raises(TypeError, match="float32"):
        tt.audio.encode_wav(np.float64([[0.1]]), 8000)


@pytest.fixture
def commands(tmp_path):
    """yes/y0..y4.wav and no/n0..n3.wav: mono, 8 kHz, of 2 to 6 samples."""
    for name in ("no", "yes"):
        (tmp_path / name).mkdir()
    for k in range(5):
        _write(tmp_path / "yes" / f"y{k}.wav", np.arange(k + 2) * 100 + 1000 * (k + 1))
    for k in range(4):
        _write(tmp_path / "no" / f"n{k}.wav", -(np.arange(k + 3) * 10 + 100 * (k + 1)))
    return str(tmp_path)


def _write(path, samples):
    with wave.open(str(path), "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(8000)
        file.writeframes(np.asarray(samples, "<i2").tobytes())


def _samples(batch):
    return np.round(batch.numpy()[:, :, 0] * 32768).astype(int).tolist()


def test_audio_batches_are_padded_to_their_longest_file(commands, capsys):
    dataset = tt.keras.utils.audio_dataset_from_directory(commands, batch_size=4, shuffle=False)
    assert capsys.readouterr().out == "Found 9 files belonging to 2 classes.\n"
    assert dataset.class_names == ["no", "yes"]
    batches = [(x.shape, _samples(x), y.numpy().tolist()) for x, y in dataset]
    assert batches[1] == (
        (4, 5, 1),
        [[1000, 1100, 0, 0, 0], [2000, 2100, 2200, 0, 0], [3000, 3100, 3200, 3300, 0],
         [4000, 4100, 4200, 4300, 4400]],
        [1, 1, 1, 1],
    )  # fmt: skip
    assert batches[2] == ((1, 6, 1), [[5000, 5100, 5200, 5300, 5400, 5500]], [1])


def test_audio_cut_to_the_sequence_length_with_categorical_labels(commands):
    dataset = tt.keras.utils.audio_dataset_from_directory(
        commands, batch_size=4, shuffle=False, output_sequence_length=3,
        label_mode="categorical", verbose=False,
    )  # fmt: skip
    x, y = next(iter(dataset))
    assert _samples(x) == [[-100, -110, -120], [-200, -210, -220], [-300, -310, -320], [-400, -410, -420]]  # fmt: skip
    assert y.numpy().tolist() == [[1.0, 0.0]] * 4


def test_a_seed_picks_keras_training_and_validation_files(commands):
    train, validation = tt.keras.utils.audio_dataset_from_directory(
        commands, batch_size=32, validation_split=0.34, seed=7, subset="both", verbose=False
    )

    def firsts(dataset):
        return sorted((s[0], int(y)) for x, labels in dataset for s, y in zip(_samples(x), labels))

    assert firsts(train) == [(-400, 0), (-300, 0), (-100, 0), (2000, 1), (4000, 1), (5000, 1)]
    assert firsts(validation) == [(-200, 0), (1000, 1), (3000, 1)]


def test_audio_options_tracer_lacks_are_refused(commands):
    with pytest.raises(NotImplementedError, match="RaggedTensor"):
        tt.keras.utils.audio_dataset_from_directory(commands, ragged=True)
    with pytest.raises(NotImplementedError, match="tensorflow-io"):
        tt.keras.utils.audio_dataset_from_directory(commands, sampling_rate=16000)
