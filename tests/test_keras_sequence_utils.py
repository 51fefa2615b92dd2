"""tt.keras.utils's sequence utilities against the outputs of Keras 3.15 on TensorFlow 2.21
(printed by `tf.keras.utils.pad_sequences(...).tolist()` and the like on the same inputs)."""

import random

import numpy as np
import pytest

import tracer as tt

utils = tt.keras.utils


def test_pad_sequences_pads_and_cuts_as_keras():
    ragged = [[1, 2, 3], [4], [], [5, 6, 7, 8, 9]]
    padded = utils.pad_sequences(ragged, maxlen=4)
    assert padded.dtype == np.int32
    assert padded.tolist() == [[0, 1, 2, 3], [0, 0, 0, 4], [0, 0, 0, 0], [6, 7, 8, 9]]
    post = utils.pad_sequences(
        [[1, 2, 3], [4], [5, 6, 7, 8, 9]], maxlen=4, padding="post", truncating="post", value=-1
    )
    assert post.tolist() == [[1, 2, 3, -1], [4, -1, -1, -1], [5, 6, 7, 8]]
    floats = utils.pad_sequences([[1.5, 2.5], [3.5]], dtype="float32")
    assert floats.tolist() == [[1.5, 2.5], [0.0, 3.5]]
    vectors = utils.pad_sequences([np.ones((2, 3)), np.zeros((1, 3))], dtype="float32")
    assert vectors.shape == (2, 2, 3) and vectors[1, 0].tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match='padding type "middle" not understood'):
        utils.pad_sequences(ragged, padding="middle")


def test_windows_of_a_series_with_their_targets_as_keras_makes_them():
    data = np.arange(30).reshape(15, 2).astype("float32")
    dataset = utils.timeseries_dataset_from_array(
        data, np.arange(100, 115), sequence_length=4, sequence_stride=2, sampling_rate=2,
        batch_size=3, start_index=1, end_index=14,
    )  # fmt: skip
    batches = [(x.numpy().tolist(), y.numpy().tolist()) for x, y in dataset]
    assert batches == [
        (
            [
                [[2.0, 3.0], [6.0, 7.0], [10.0, 11.0], [14.0, 15.0]],
                [[6.0, 7.0], [10.0, 11.0], [14.0, 15.0], [18.0, 19.0]],
                [[10.0, 11.0], [14.0, 15.0], [18.0, 19.0], [22.0, 23.0]],
            ],
            [101, 103, 105],
        ),
        ([[[14.0, 15.0], [18.0, 19.0], [22.0, 23.0], [26.0, 27.0]]], [107]),
    ]
    single = utils.timeseries_dataset_from_array(
        data[:, 0], None, sequence_length=5, batch_size=None
    )
    assert [x.numpy().tolist() for x in single] == [
        [float(v) for v in range(start, start + 10, 2)] for start in range(0, 21, 2)
    ]


def test_shuffled_windows_are_the_same_windows_and_train_a_model():
    series = np.sin(np.linspace(0, 20, 200)).astype("float32")[:, None]
    kwargs = dict(sequence_length=8, batch_size=16)
    plain = utils.timeseries_dataset_from_array(series, series[8:, 0], **kwargs)
    shuffled = utils.timeseries_dataset_from_array(
        series, series[8:, 0], shuffle=True, seed=3, **kwargs
    )

    def rows(dataset):
        return sorted(
            tuple(x.ravel()) + (y,) for xs, ys in dataset for x, y in zip(xs.numpy(), ys.numpy())
        )

    assert rows(plain) == rows(shuffled) and len(rows(plain)) == 192
    assert next(iter(plain))[1].numpy().tolist() != next(iter(shuffled))[1].numpy().tolist()
    model = tt.keras.Sequential(
        [tt.keras.Input((8, 1)), tt.keras.layers.LSTM(8), tt.keras.layers.Dense(1)]
    )
    model.compile(optimizer=tt.keras.optimizers.Adam(0.01), loss="mse")
    history = model.fit(plain, epochs=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_normalize_and_set_random_seed():
    rows = np.array([[3.0, 4.0], [1.0, 0.0]])
    assert utils.normalize(rows).tolist() == [[0.6, 0.8], [1.0, 0.0]]
    assert utils.normalize(rows, axis=0, order=1).tolist() == [[0.75, 1.0], [0.25, 0.0]]
    np.testing.assert_allclose(utils.normalize(tt.constant([[3.0, 4.0], [0.0, 0.0]])).numpy(),
                               [[0.6, 0.8], [0.0, 0.0]])  # fmt: skip
    utils.set_random_seed(11)
    drawn = (np.random.rand(), tt.random.normal([3]).numpy())
    utils.set_random_seed(11)
    assert np.random.rand() == drawn[0]
    np.testing.assert_array_equal(tt.random.normal([3]).numpy(), drawn[1])


def test_the_windows_count_is_known_as_in_keras():
    """Keras's dataset of windows knows its length (TensorFlow gives 12 batches here), also
    shuffled and mapped; assert_cardinality checks what it asserts, as TensorFlow does."""
    series = np.arange(100, dtype=np.float32)[:, None]
    for shuffle in (False, True):
        windows = tt.keras.utils.timeseries_dataset_from_array(
            series, None, sequence_length=5, batch_size=8, shuffle=shuffle, seed=1
        )
        assert int(windows.cardinality()) == len(windows) == 12 == sum(1 for _ in windows)
        assert int(windows.map(lambda x: x).cardinality()) == 12
    short = tt.data.Dataset.range(3).apply(tt.data.experimental.assert_cardinality(5))
    assert int(short.cardinality()) == 5
    with pytest.raises(tt.errors.FailedPreconditionError, match="contained only 3 elements"):
        list(short)
    long = tt.data.Dataset.range(7).apply(tt.data.experimental.assert_cardinality(5))
    with pytest.raises(tt.errors.FailedPreconditionError, match="at least 6 elements"):
        list(long)


def test_make_sampling_table_is_keras_zipf_table():
    # printed by TF 2.21 (Keras 3.15): tf.keras.preprocessing.sequence.make_sampling_table
    expected = [0.03152247875194251, 0.03152247875194251, 0.054759726939176974,
                0.07415564097374219, 0.09128167456366162, 0.10684345040995183]  # fmt: skip
    table = tt.keras.preprocessing.sequence.make_sampling_table(6, sampling_factor=1e-3)
    np.testing.assert_allclose(table, expected, rtol=1e-12)


def test_skipgrams_draws_with_pythons_random_as_keras_does():
    """After random.seed, skipgrams gives Keras's pairs and labels: positives in a window,
    negatives, the shuffle, categorical labels and a sampling table (printed by TF 2.21)."""
    sequence = tt.keras.preprocessing.sequence
    random.seed(7)
    assert sequence.skipgrams([3, 0, 1, 4, 2], 5, window_size=1) == (
        [[2, 4], [1, 1], [2, 1], [4, 1], [1, 4], [4, 3], [4, 2], [4, 1]],
        [1, 0, 0, 1, 1, 0, 1, 0],
    )
    random.seed(7)
    couples, labels = sequence.skipgrams(
        [3, 1, 4, 2, 1], 5, window_size=2, negative_samples=0.5, categorical=True, seed=3
    )
    assert couples[:6] == [[1, 3], [1, 4], [4, 1], [4, 1], [1, 1], [4, 3]]
    assert len(couples) == 21 and labels[:3] == [[0, 1], [1, 0], [0, 1]]
    assert sum(label == [1, 0] for label in labels) == 7
    random.seed(7)
    assert sequence.skipgrams(
        [3, 1, 4, 2, 1], 5, window_size=1, negative_samples=0, shuffle=False,
        sampling_table=[0, 0.9, 0.1, 0.5, 0.3],
    ) == ([[3, 1], [1, 3], [1, 4], [2, 4], [2, 1], [1, 2]], [1] * 6)  # fmt: skip


def test_keras_preprocessing_names_the_same_utilities():
    # TF 2.21 printed [[0, 71, 32, 11], [8, 15, 55, 27], [1, 45, 53, 27]] for
    # tf.keras.preprocessing.sequence.pad_sequences(raw, maxlen=4).tolist()
    raw = [[71, 32, 11], [7, 8, 15, 55, 27], [83, 91, 1, 45, 53, 27]]
    preprocessing = tt.keras.preprocessing
    padded = preprocessing.sequence.pad_sequences(raw, maxlen=4)
    assert padded.tolist() == [[0, 71, 32, 11], [8, 15, 55, 27], [1, 45, 53, 27]]
    assert preprocessing.sequence.pad_sequences is utils.pad_sequences
    assert preprocessing.timeseries_dataset_from_array is utils.timeseries_dataset_from_array
    assert preprocessing.text_dataset_from_directory is utils.text_dataset_from_directory
    with pytest.raises(AttributeError, match="legacy preprocessing module is not in tracer"):
        _ = preprocessing.text.Tokenizer
