"""`tt.keras.utils.text_dataset_from_directory`: a tt.data pipeline of the `.txt` files of a
directory, labelled by their subdirectories, as Keras's text tutorials load their data.

Keras's index of the files, and so which files train and which validate: the class
subdirectories (not hidden) in sorted order (or `class_names`' order), each walked with its
folders and files sorted, the files' paths then shuffled with numpy's `RandomState(seed)`
(the labels by a second one of the same seed), and `validation_split` taking the last
files for validation. The dataset reads each file when its element is made
(`tt.io.read_file`), cut to `max_length` bytes; with `shuffle` the (path, label) pairs pass
through `Dataset.shuffle(8 * batch_size, seed)` first, whose order is tracer's own, not
TensorFlow's.
"""

import os

import numpy as np

from tracer import data
from tracer.ops import array_ops, index_ops, string_ops

LABEL_MODES = ("int", "categorical", "binary", None)


def text_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                class_names=None, batch_size=32, max_length=None,
                                shuffle=True, seed=None, validation_split=None, subset=None,
                                follow_links=False, format="tf", verbose=True):  # fmt: skip
    """A dataset of (text, label) batches from the `.txt` files under `directory`, its
    `class_names` attribute the labels' names (a list of two datasets with
    `subset="both"`)."""
    if label_mode not in LABEL_MODES:
        raise ValueError(f"label_mode must be one of {LABEL_MODES}, not {label_mode!r}")
    if format != "tf":
        raise ValueError(f"format={format!r}: tracer makes tt.data datasets (format='tf')")
    if labels not in ("inferred", None) and not isinstance(labels, (list, tuple)):
        raise ValueError(
            "labels must be 'inferred', None or a list of integer labels, one per text file, "
            f"not {labels!r}"
        )
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    _check_split(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = _index(
        directory, labels, class_names, shuffle, seed, follow_links, verbose
    )
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(
            f"label_mode='binary' needs exactly 2 classes, the directory has {class_names}"
        )
    buffer = 8 * batch_size if batch_size is not None else 1024
    subsets = ["training", "validation"] if subset == "both" else [subset]
    made = []
    for part in subsets:
        part_paths, part_labels = _split(paths, labels, validation_split, part)
        if not part_paths:
            raise ValueError(f"no text files found in directory {directory!r} (looked for .txt)")
        dataset = _dataset(
            part_paths, part_labels, label_mode, len(class_names or ()), max_length,
            shuffle and part != "validation", buffer, seed,
        )  # fmt: skip
        if batch_size is not None:
            dataset = dataset.batch(batch_size)
        dataset = dataset.prefetch(data.AUTOTUNE)
        dataset.class_names = class_names
        made.append(dataset)
    return made if subset == "both" else made[0]


def _check_split(validation_split, subset, shuffle, seed):
    if validation_split is not None and not 0 < validation_split < 1:
        raise ValueError(f"validation_split must be between 0 and 1, not {validation_split}")
    if (validation_split is None) != (subset is None):
        raise ValueError("give validation_split and subset together, or neither")
    if subset not in ("training", "validation", "both", None):
        raise ValueError(f"subset must be 'training', 'validation' or 'both', not {subset!r}")
    if validation_split and shuffle and seed is None:
        raise ValueError(
            "with validation_split and shuffle, give a seed, so that the training and "
            "validation subsets do not overlap"
        )


def _index(directory, labels, class_names, shuffle, seed, follow_links, verbose):
    """(paths, labels, class names) of the text files, in Keras's order."""
    if labels == "inferred":
        found = sorted(
            name
            for name in os.listdir(directory)
            if os.path.isdir(os.path.join(directory, name)) and not name.startswith(".")
        )
        if class_names is not None and not set(class_names) <= set(found):
            raise ValueError(
                f"class_names {class_names} are not among the subdirectories of "
                f"{directory!r}: {found}"
            )
        folders = list(class_names) if class_names is not None else found
    else:
        if class_names is not None:
            raise ValueError("class_names is for labels='inferred' only")
        folders = [""]
    paths, inferred = [], []
    for index, folder in enumerate(folders):
        for path in _text_files(os.path.join(directory, folder), follow_links):
            paths.append(path)
            inferred.append(index)
    if labels == "inferred":
        labels = np.array(inferred, np.int32)
        names = folders
    elif labels is not None:
        if len(labels) != len(paths):
            raise ValueError(
                f"labels holds {len(labels)} labels for {len(paths)} text files in {directory!r}"
            )
        names = [str(label) for label in sorted(set(labels))]
        labels = np.array(labels)
    else:
        names = None
    if verbose:
        classes = "" if labels is None else f" belonging to {len(names)} classes"
        print(f"Found {len(paths)} files{classes}.")
    if shuffle:
        np.random.RandomState(seed).shuffle(paths)
        if labels is not None:
            np.random.RandomState(seed).shuffle(labels)
    return paths, labels, names


def _text_files(folder, follow_links):
    """The `.txt` files under `folder`, its folders walked in sorted order, files sorted."""
    for root, _, files in sorted(os.walk(folder, followlinks=follow_links), key=lambda w: w[0]):
        for name in sorted(files):
            if name.lower().endswith(".txt"):
                yield os.path.join(root, name)


def _split(paths, labels, validation_split, subset):
    if not validation_split or subset is None:
        return paths, labels
    count = int(validation_split * len(paths))
    if subset == "training":
        print(f"Using {len(paths) - count} files for training.")
        return paths[: len(paths) - count], None if labels is None else labels[: len(paths) - count]
    print(f"Using {count} files for validation.")
    return paths[len(paths) - count :], None if labels is None else labels[len(paths) - count :]


def _dataset(paths, labels, label_mode, classes, max_length, shuffle, buffer, seed):
    def read(path):
        text = string_ops.read_file(path)
        return text if max_length is None else string_ops.substr(text, 0, max_length)

    if label_mode is None:
        dataset = data.Dataset.from_tensor_slices(paths)
        if shuffle:
            dataset = dataset.shuffle(buffer, seed=seed)
        return dataset.map(read)
    dataset = data.Dataset.from_tensor_slices((paths, np.asarray(labels)))
    if shuffle:
        dataset = dataset.shuffle(buffer, seed=seed)
    return dataset.map(lambda path, label: (read(path), _label(label, label_mode, classes)))


def _label(label, label_mode, classes):
    if label_mode == "binary":
        return array_ops.expand_dims(array_ops.cast(label, "float32"), -1)
    if label_mode == "categorical":
        return index_ops.one_hot(label, classes)
    return label
