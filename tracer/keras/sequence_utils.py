"""Keras's utilities for sequences: `pad_sequences` (lists of ids to one array),
`timeseries_dataset_from_array` (windows of a series, as a `tt.data.Dataset`), and word2vec's
`skipgrams` and `make_sampling_table` (`tt.keras.preprocessing.sequence`), as Keras 3.15
defines them."""

import random

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


def make_sampling_table(size, sampling_factor=1e-5):
    """A numpy array [size]: entry i is word2vec's probability of keeping the i-th most
    frequent word, min(1, sqrt(f / sampling_factor) / (f / sampling_factor)), with Zipf's law
    (s=1) for the frequency f of rank i (rank 0 is taken as rank 1), as Keras computes it.

    >>> tt.keras.preprocessing.sequence.make_sampling_table(3).round(5).tolist()
    [0.00315, 0.00315, 0.00548]
    """
    gamma = 0.577  # Euler-Mascheroni, to Keras's three digits
    rank = np.arange(size)
    rank[0] = 1
    inv_fq = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inv_fq
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence, vocabulary_size, window_size=4, negative_samples=1.0, shuffle=True,
              categorical=False, sampling_table=None, seed=None):  # fmt: skip
    """Skip-gram pairs of a sequence of word ids and their labels, as two lists: each
    (word, neighbour within `window_size`) with label 1, then `negative_samples` times as
    many (word, random id in [1, vocabulary_size)) with label 0 ([0, 1] and [1, 0] with
    `categorical`). Id 0 is no word and is skipped; with `sampling_table`, word i is kept
    with probability sampling_table[i].

    NOTE: the draws are Python's `random` module's, made in Keras's order (keep-or-drop per
    word, shuffle of the negatives' words, their ids, then `shuffle` under `seed`), so that
    after `random.seed(s)` the pairs are those Keras gives.

    >>> tt.keras.preprocessing.sequence.skipgrams([1, 2, 3], 4, window_size=1,
    ...                                           negative_samples=0, shuffle=False)
    ([[1, 2], [2, 1], [2, 3], [3, 2]], [1, 1, 1, 1])
    """
    couples, labels = [], []
    for i, wi in enumerate(sequence):
        if not wi:
            continue
        if sampling_table is not None and sampling_table[wi] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j != i and sequence[j]:
                couples.append([wi, sequence[j]])
                labels.append([0, 1] if categorical else 1)
    if negative_samples > 0:
        num_negative_samples = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [
            [words[i % len(words)], random.randint(1, vocabulary_size - 1)]
            for i in range(num_negative_samples)
        ]
        labels += [[1, 0] if categorical else 0 for _ in range(num_negative_samples)]
    if shuffle:
        if seed is None:
            seed = random.randint(0, 10e6)
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels


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
