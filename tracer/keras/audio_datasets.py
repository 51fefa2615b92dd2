"""`tt.keras.utils.audio_dataset_from_directory`: a tt.data pipeline of the `.wav` files of a
directory, labelled by their subdirectories, as Keras's audio tutorials load their data.

The files are indexed and read as Keras does (directory_index.py). Each file is decoded by
`tt.audio.decode_wav` into float32 [samples, channels], cut or padded with zeros to
`output_sequence_length`; without it, a batch is padded with zeros to its longest file
(`padded_batch`). Keras resamples to `sampling_rate` with tensorflow-io, and its `ragged`
gives RaggedTensors: tracer has neither, and refuses both with a message.
"""

from tracer.keras import directory_index
from tracer.ops import string_ops, wav_ops


def audio_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                 class_names=None, batch_size=32, sampling_rate=None,
                                 output_sequence_length=None, ragged=False, shuffle=True,
                                 seed=None, validation_split=None, subset=None,
                                 follow_links=False, verbose=True):  # fmt: skip
    """A dataset of (audio, label) batches from the `.wav` files under `directory` (audio
    [batch, samples, channels]), its `class_names` attribute the labels' names (two datasets,
    training and validation, with `subset="both"`)."""
    if ragged:
        raise NotImplementedError(
            "audio_dataset_from_directory: ragged=True gives RaggedTensors, which tracer does "
            "not have; give output_sequence_length, or leave it None to pad each batch"
        )
    if sampling_rate is not None:
        raise NotImplementedError(
            "audio_dataset_from_directory: sampling_rate resamples with tensorflow-io in "
            "Keras, which tracer does not do; resample the files beforehand"
        )
    samples = -1 if output_sequence_length is None else int(output_sequence_length)

    def read(path):
        return wav_ops.decode_wav(string_ops.read_file(path), desired_samples=samples)[0]

    def batch(dataset, size):
        if output_sequence_length is None:
            return dataset.padded_batch(size)
        return dataset.batch(size)

    files = directory_index.Files((".wav",), "audio", read, batch)
    return directory_index.datasets(
        files, directory, labels, label_mode, class_names, batch_size, shuffle, seed,
        validation_split, subset, follow_links, verbose,
    )  # fmt: skip
