"""`tt.keras.utils.text_dataset_from_directory`: a tt.data pipeline of the `.txt` files of a
directory, labelled by their subdirectories, as Keras's text tutorials load their data.

The files are indexed and read as Keras does (directory_index.py); each file's text is
its bytes (`tt.io.read_file`), cut to `max_length` bytes.
"""

from tracer.keras import directory_index
from tracer.ops import string_ops


def text_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                class_names=None, batch_size=32, max_length=None,
                                shuffle=True, seed=None, validation_split=None, subset=None,
                                follow_links=False, format="tf", verbose=True):  # fmt: skip
    """A dataset of (text, label) batches from the `.txt` files under `directory`, its
    `class_names` attribute the labels' names (a list of two datasets with
    `subset="both"`)."""
    if format != "tf":
        raise ValueError(f"format={format!r}: tracer makes tt.data datasets (format='tf')")

    def read(path):
        text = string_ops.read_file(path)
        return text if max_length is None else string_ops.substr(text, 0, max_length)

    files = directory_index.Files((".txt",), "text", read, lambda d, size: d.batch(size))
    return directory_index.datasets(
        files, directory, labels, label_mode, class_names, batch_size, shuffle, seed,
        validation_split, subset, follow_links, verbose,
    )  # fmt: skip
