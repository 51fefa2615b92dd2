"""The files of a directory labelled by their subdirectories, as a tt.data pipeline in
Keras's order: what `text_dataset_from_directory` and `audio_dataset_from_directory` share.

Keras's index of the files, and so which files train and which validate: the class
subdirectories (not hidden) in sorted order (or `class_names`' order), each walked with its
folders and files sorted, the files' paths then shuffled with numpy's `RandomState(seed)`
(the labels by a second one of the same seed), and `validation_split` taking the last
files for validation. The dataset reads each file when its element is made; with `shuffle`
the (path, label) pairs pass through `Dataset.shuffle(8 * batch_size, seed)` first, whose
order is tracer's own, not TensorFlow's.
"""

import os

import numpy as np

from tracer import data
from tracer.ops import array_ops, index_ops

LABEL_MODES = ("int", "categorical", "binary", None)


class Files:
    """What a loader reads: files whose names end with one of `suffixes`, named `kind` in
    messages ("text"), each read by `read(path)` into its element, a batch made by
    `batch(dataset, batch_size)`."""

    def __init__(self, suffixes, kind, read, batch):
        self.suffixes, self.kind, self.read, self.batch = suffixes, kind, read, batch


def datasets(files, directory, labels, label_mode, class_names, batch_size, shuffle, seed, validation_split, subset, follow_links, verbose):  # fmt: skip
    """The dataset of `files` under `directory` (two, training and validation, with
    `subset="both"`), its `class_names` attribute the labels' names."""
    check_arguments(labels, label_mode, files.kind)
    if labels is None or label_mode is None:
        labels, label_mode = None, None
    check_split(validation_split, subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = index(
        directory, labels, class_names, files.suffixes, shuffle, seed, follow_links, verbose,
        files.kind,
    )  # fmt: skip
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError(
            f"label_mode='binary' needs exactly 2 classes, the directory has {class_names}"
        )
    buffer = 8 * batch_size if batch_size is not None else 1024
    made = []
    for part in ["training", "validation"] if subset == "both" else [subset]:
        part_paths, part_labels = split(paths, labels, validation_split, part)
        if not part_paths:
            raise ValueError(
                f"no {files.kind} files found in directory {directory!r} (looked for "
                f"{', '.join(files.suffixes)})"
            )
        dataset = _dataset(
            files.read, part_paths, part_labels, label_mode, len(class_names or ()),
            shuffle and part != "validation", buffer, seed,
        )  # fmt: skip
        if batch_size is not None:
            dataset = files.batch(dataset, batch_size)
        dataset = dataset.prefetch(data.AUTOTUNE)
        dataset.class_names = class_names
        made.append(dataset)
    return made if subset == "both" else made[0]


def _dataset(read, paths, labels, label_mode, classes, shuffle, buffer, seed):
    if label_mode is None:
        dataset = data.Dataset.from_tensor_slices(paths)
        if shuffle:
            dataset = dataset.shuffle(buffer, seed=seed)
        return dataset.map(read)
    dataset = data.Dataset.from_tensor_slices((paths, np.asarray(labels)))
    if shuffle:
        dataset = dataset.shuffle(buffer, seed=seed)
    return dataset.map(lambda path, label: (read(path), label_value(label, label_mode, classes)))


def check_arguments(labels, label_mode, kind):
    """Keras's checks of `labels` and `label_mode`; `kind` names the files ("text")."""
    if label_mode not in LABEL_MODES:
        raise ValueError(f"label_mode must be one of {LABEL_MODES}, not {label_mode!r}")
    if labels not in ("inferred", None) and not isinstance(labels, (list, tuple)):
        raise ValueError(
            f"labels must be 'inferred', None or a list of integer labels, one per {kind} "
            f"file, not {labels!r}"
        )


def check_split(validation_split, subset, shuffle, seed):
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


def index(directory, labels, class_names, suffixes, shuffle, seed, follow_links, verbose, kind):
    """(paths, labels, class names) of the files whose names end with one of `suffixes`, in
    Keras's order; `kind` names them in messages ("text")."""
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
    for position, folder in enumerate(folders):
        for path in _files(os.path.join(directory, folder), suffixes, follow_links):
            paths.append(path)
            inferred.append(position)
    if labels == "inferred":
        labels = np.array(inferred, np.int32)
        names = folders
    elif labels is not None:
        if len(labels) != len(paths):
            raise ValueError(
                f"labels holds {len(labels)} labels for {len(paths)} {kind} files in {directory!r}"
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


def _files(folder, suffixes, follow_links):
    """The files under `folder` with one of `suffixes`, its folders walked in sorted order,
    files sorted."""
    for root, _, files in sorted(os.walk(folder, followlinks=follow_links), key=lambda w: w[0]):
        for name in sorted(files):
            if name.lower().endswith(suffixes):
                yield os.path.join(root, name)


def split(paths, labels, validation_split, subset):
    """The paths and labels of `subset`, printing how many, as Keras does."""
    if not validation_split or subset is None:
        return paths, labels
    count = int(validation_split * len(paths))
    if subset == "training":
        print(f"Using {len(paths) - count} files for training.")
        return paths[: len(paths) - count], None if labels is None else labels[: len(paths) - count]
    print(f"Using {count} files for validation.")
    return paths[len(paths) - count :], None if labels is None else labels[len(paths) - count :]


def label_value(label, label_mode, classes):
    """A label as `label_mode` gives it: the index, a float32 [1] of 0 or 1, or one-hot."""
    if label_mode == "binary":
        return array_ops.expand_dims(array_ops.cast(label, "float32"), -1)
    if label_mode == "categorical":
        return index_ops.one_hot(label, classes)
    return label
