"""tt.keras.utils.text_dataset_from_directory against what Keras 3.15 on TensorFlow 2.21 gave
for the same directory: the files' order and labels, class names, the training and
validation subsets a seed picks, label modes, max_length, labels=None (which indexes the
parent folder, hidden folders included, as Keras does), and the errors; tt.io.read_file."""

import numpy as np
import pytest

import tracer as tt

utils = tt.keras.utils


@pytest.fixture
def reviews(tmp_path):
    """pos/p0..p6.txt, neg/n0..n4.txt and neg/sub/deep.txt, a .md file and a hidden folder."""
    for folder in ("pos", "neg/sub", ".hidden"):
        (tmp_path / folder).mkdir(parents=True)
    for k in range(7):
        (tmp_path / "pos" / f"p{k}.txt").write_text(f"good movie number {k} " * (k + 1))
    for k in range(5):
        (tmp_path / "neg" / f"n{k}.txt").write_text(f"bad film {k}")
    (tmp_path / "neg" / "sub" / "deep.txt").write_text("deeply bad")
    (tmp_path / "neg" / "notes.md").write_text("not text")
    (tmp_path / ".hidden" / "h.txt").write_text("hidden")
    return str(tmp_path)


def _texts(batch, width=20):
    return [v.decode()[:width] for v in batch.numpy().tolist()]


def test_the_files_in_order_with_their_labels(reviews, capsys):
    dataset = utils.text_dataset_from_directory(reviews, batch_size=4, shuffle=False)
    assert capsys.readouterr().out == "Found 13 files belonging to 2 classes.\n"
    assert dataset.class_names == ["neg", "pos"]
    batches = [(_texts(x), y.numpy().tolist(), y.dtype) for x, y in dataset]
    assert batches[1] == (
        ["bad film 4", "deeply bad", "good movie number 0 ", "good movie number 1 "],
        [0, 0, 1, 1],
        tt.int32,
    )
    assert [len(b[0]) for b in batches] == [4, 4, 4, 1]


def test_a_seed_picks_keras_training_and_validation_files(reviews):
    kwargs = dict(batch_size=32, validation_split=0.25, seed=42)
    train = utils.text_dataset_from_directory(reviews, subset="training", **kwargs)
    validation = utils.text_dataset_from_directory(reviews, subset="validation", **kwargs)
    assert sorted(t for x, _ in validation for t in _texts(x)) == [
        "bad film 3",
        "good movie number 0 ",
        "good movie number 4 ",
    ]
    pairs = sorted((t, int(y)) for x, labels in train for t, y in zip(_texts(x), labels.numpy()))
    assert [t for t, _ in pairs] == [
        "bad film 0", "bad film 1", "bad film 2", "bad film 4", "deeply bad",
        "good movie number 1 ", "good movie number 2 ", "good movie number 3 ",
        "good movie number 5 ", "good movie number 6 ",
    ]  # fmt: skip
    assert [y for _, y in pairs] == [0] * 5 + [1] * 5


def test_both_subsets_categorical_labels_and_max_length(reviews):
    train, validation = utils.text_dataset_from_directory(
        reviews, batch_size=2, validation_split=0.5, subset="both", seed=7,
        label_mode="categorical", max_length=8,
    )  # fmt: skip
    parts = [
        sorted(
            (t, tuple(y)) for x, labels in part for t, y in zip(_texts(x), labels.numpy().tolist())
        )
        for part in (train, validation)
    ]
    assert [len(p) for p in parts] == [7, 6]
    assert parts[1] == [("bad film", (1.0, 0.0))] * 2 + [("good mov", (0.0, 1.0))] * 4
    assert validation.class_names == ["neg", "pos"]


def test_no_labels_and_binary_labels(reviews):
    texts = utils.text_dataset_from_directory(reviews, labels=None, batch_size=20, shuffle=False)
    first = [t for x in texts for t in _texts(x, 12)]
    assert first[:3] == ["hidden", "bad film 0", "bad film 1"] and len(first) == 14
    binary = utils.text_dataset_from_directory(
        reviews, label_mode="binary", batch_size=20, shuffle=False
    )
    (labels,) = [y for _, y in binary]
    assert labels.dtype == tt.float32 and labels.shape == (13, 1)
    np.testing.assert_array_equal(labels.numpy()[:, 0], [0.0] * 6 + [1.0] * 7)


def test_clear_errors(reviews, tmp_path):
    with pytest.raises(ValueError, match="give a seed"):
        utils.text_dataset_from_directory(reviews, validation_split=0.2, subset="training")
    with pytest.raises(ValueError, match="label_mode must be one of"):
        utils.text_dataset_from_directory(reviews, label_mode="sparse")
    with pytest.raises(ValueError, match="are not among the subdirectories"):
        utils.text_dataset_from_directory(reviews, class_names=["pos", "meh"])
    with pytest.raises(ValueError, match="labels holds 2 labels for 14 text files"):
        utils.text_dataset_from_directory(reviews, labels=[0, 1])
    with pytest.raises(tt.errors.NotFoundError, match="No such file"):
        tt.io.read_file(str(tmp_path / "missing.txt"))
    assert tt.io.read_file(str(tmp_path / "neg" / "n1.txt")).numpy() == b"bad film 1"
