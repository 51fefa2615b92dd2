"""Keras's utilities for sequences: `pad_sequences` (lists of ids to one array) and
`timeseries_dataset_from_array` (windows of a series, as a `tt.data.Dataset`), as Keras 3.15
defines them."""

import numpy as np

from tracer.data import experimental
from tracer.data.dataset import Dataset
from tracer.dtypes import as_dtype
from tracer.signature import TensorSpec
from tracer.tensor import Tensor


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre",
                  value=0.0):  # fmt: skip
    """A numpy array [len(sequences), maxlen] of the sequences, each cut to `maxlen` (its
    first items dropped with truncating="pre", its last with "post") and filled with `value`
    before it ("pre") or after it ("post"); `maxlen` defaults to the longest. Items may be
    arrays: the first non-empty sequence's items give the trailing shape."""
    for name, given in (("padding", padding), ("truncating", truncating)):
        if given not in ("pre", "post"):
            raise ValueError(f'pad_sequences: {name} type "{given}" not understood')
    sequences = [np.asarray(s) for s in sequences]
    lengths = [len(s) for s in sequences]
    if maxlen is None:
        maxlen = max(lengths, default=0)
    sample_shape = next((s.shape[1:] for s in sequences if len(s)), ())
    text = np.issubdtype(np.dtype(dtype), np.str_) or np.dtype(dtype) == object
    if text and not isinstance(value, str) and np.dtype(dtype) != object:
        raise ValueError(
            f"pad_sequences: dtype {dtype} holds text, so value must be text too, not {value!r}"
        )
    out = np.full((len(sequences), maxlen) + tuple(sample_shape), value, dtype=dtype)
    for row, sequence in enumerate(sequences):
        if not len(sequence) or not maxlen:
            continue
        kept = sequence[-maxlen:] if truncating == "pre" else sequence[:maxlen]
        if kept.shape[1:] != tuple(sample_shape):
            raise ValueError(
                f"pad_sequences: sequence {row} has items of shape {kept.shape[1:]}, the "
                f"others {tuple(sample_shape)}"
            )
        if padding == "post":
            out[row, : len(kept)] = kept
        else:
            out[row, -len(kept) :] = kept
    return out


def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1,
                                  sampling_rate=1, batch_size=128, shuffle=False, seed=None,
                                  start_index=None, end_index=None):  # fmt: skip
    """A dataset of windows of `data[start_index:end_index]`: window i holds
    `sequence_length` rows, `sampling_rate` apart, starting at row `sequence_stride * i`;
    with `targets`, each window comes with `targets[start_index + its start]`. Batched by
    `batch_size` (None: one window an element); `shuffle` orders the windows by a numpy
    RandomState of `seed`, then shuffles within 8 batches, as Keras does."""
    data = _array(data)
    length = len(data)
    start_index = 0 if start_index is None else int(start_index)
    end_index = length if end_index is None else int(end_index)
    _check_window_arguments(length, start_index, end_index, sampling_rate, sequence_stride)
    count = end_index - start_index - (sequence_length - 1) * sampling_rate
    if targets is not None:
        targets = _array(targets)
        count = min(count, len(targets))
    starts = np.arange(0, max(count, 0), sequence_stride)
    if shuffle:
        if seed is None:
            seed = np.random.randint(10**6)
        np.random.RandomState(seed).shuffle(starts)
    offsets = np.arange(sequence_length) * sampling_rate
    window_spec = TensorSpec((sequence_length,) + data.shape[1:], as_dtype(data.dtype))

    def windows():
        for start in starts:
            window = data[start_index + start + offsets]
            yield window if targets is None else (window, targets[start_index + start])

    if targets is None:
        signature = window_spec
    else:
        signature = (window_spec, TensorSpec(targets.shape[1:], as_dtype(targets.dtype)))
    dataset = Dataset.from_generator(windows, output_signature=signature)
    dataset = dataset.apply(experimental.assert_cardinality(len(starts)))
    if batch_size is None:
        return dataset.shuffle(1024, seed=seed) if shuffle else dataset
    if shuffle:
        dataset = dataset.shuffle(batch_size * 8, seed=seed)
    return dataset.batch(batch_size)


def _array(values):
    return values.numpy() if isinstance(values, Tensor) else np.asarray(values)


def _check_window_arguments(length, start_index, end_index, sampling_rate, sequence_stride):
    """Keras's checks of the window arguments, as ValueErrors naming the argument."""
    if not 0 <= start_index < length:
        raise ValueError(
            f"timeseries_dataset_from_array: start_index must be in [0, {length}) (the data's "
            f"length), not {start_index}"
        )
    if not start_index < end_index <= length:
        raise ValueError(
            f"timeseries_dataset_from_array: end_index must be in ({start_index}, {length}], "
            f"not {end_index}"
        )
    for name, given in (("sampling_rate", sampling_rate), ("sequence_stride", sequence_stride)):
        if not 0 < given < length:
            raise ValueError(
                f"timeseries_dataset_from_array: {name} must be in (0, {length}) (the data's "
                f"length), not {given}"
            )
