"""Keras's TextVectorization, StringLookup and IntegerLookup: the vocabularies and outputs
Keras 3.15 gives on TensorFlow 2.21 for 26 settings (tests/data/keras/text_lookup_cases.json,
made by make_text_lookup_cases.py beside it), eagerly and in compiled functions on both
backends; adapt from datasets and generators; a string model end to end; clear errors."""

import json
import os

import numpy as np
import pytest

import tracer as tt

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data", "keras")
with open(os.path.join(DATA, "text_lookup_cases.json")) as f:
    CASES = json.load(f)
(SAVED,) = [c for c in CASES if c["layer"] == "Sequential"]
CASES = [c for c in CASES if c is not SAVED]
layers = tt.keras.layers


def _layer(case):
    layer = getattr(layers, case["layer"])(**case["arguments"])
    if case["adapt"] is not None:
        layer.adapt(case["adapt"])
    return layer


def _plain(array):
    if array.dtype == object:
        return np.vectorize(bytes.decode, otypes=[object])(array).tolist()
    return array.tolist()


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['layer']}: {c['name']}")
def test_kerass_vocabulary_and_outputs(case):
    layer = _layer(case)
    assert layer.get_vocabulary() == case["vocabulary"]
    assert layer.vocabulary_size() == case["vocabulary_size"]
    runs = [lambda x: layer(x)]
    if not (case["layer"] == "TextVectorization" and "longest" in case["name"]):
        runs += [tt.function(lambda x: layer(x), backend=b) for b in ("c", "interpreter")]
    for run in runs:
        out = run(tt.constant(case["inputs"]))
        assert out.dtype.name == case["dtype"]
        if case["dtype"] == "float32":
            np.testing.assert_allclose(out.numpy(), case["output"], rtol=1e-6)
        else:
            assert _plain(out.numpy()) == case["output"]


def test_the_longest_row_needs_a_length_when_traced():
    layer = layers.TextVectorization()
    layer.adapt(["a b c", "b c"])
    assert layer(tt.constant(["a b c d", "c"])).shape == (2, 4)
    with pytest.raises(TypeError, match="give output_sequence_length to call it in a tt.function"):
        tt.function(lambda x: layer(x))(tt.constant(["a b"]))


def test_adapt_reads_datasets_generators_and_steps():
    corpus = ["b a", "a c", "a", "d d d d"]
    want = ["", "[UNK]", "d", "a", "c", "b"]
    for data in (
        tt.data.Dataset.from_tensor_slices(corpus).batch(2),
        tt.data.Dataset.from_tensor_slices((corpus, [0, 1, 0, 1])).batch(3),
        (np.array(corpus[k : k + 2]) for k in (0, 2)),
    ):
        layer = layers.TextVectorization()
        layer.adapt(data)
        assert layer.get_vocabulary() == want
    layer = layers.TextVectorization()
    layer.adapt(tt.data.Dataset.from_tensor_slices(corpus).batch(2), steps=1)
    assert layer.get_vocabulary() == ["", "[UNK]", "a", "c", "b"]
    numbers = layers.IntegerLookup()
    numbers.adapt(tt.data.Dataset.from_tensor_slices([5, 5, 9, 1, 9, 9]).batch(4))
    assert numbers.get_vocabulary() == [-1, 9, 5, 1]


def test_a_model_of_strings_predicts_what_its_parts_compute():
    """Sequential([TextVectorization, Embedding, GlobalAveragePooling1D, Dense]) on strings,
    against the same arithmetic in numpy from the layers' weights and vocabulary."""
    vectorize = layers.TextVectorization(max_tokens=8, output_sequence_length=4)
    vectorize.adapt(["a b c", "a b", "a d e f g"])
    model = tt.keras.Sequential(
        [vectorize, layers.Embedding(8, 3), layers.GlobalAveragePooling1D(), layers.Dense(1)]
    )
    texts = ["A b!", "g f e d c b a", "zzz"]
    got = model.predict(tt.constant(texts), verbose=0)
    vocabulary = vectorize.get_vocabulary()
    table, kernel, bias = (w.numpy() for w in model.weights)
    rows = []
    for text in texts:
        words = text.lower().replace("!", "").split()[:4]
        ids = [vocabulary.index(w) if w in vocabulary else 1 for w in words]
        rows.append(ids + [0] * (4 - len(ids)))
    want = table[np.array(rows)].mean(axis=1) @ kernel + bias
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_a_keras_file_with_the_vocabulary_in_its_assets(tmp_path):
    """text_model.keras, saved by Keras 3.15 (TextVectorization adapted, the vocabulary in
    the file's assets): tracer predicts what Keras predicted; saved again by tracer (the
    vocabulary in the config), it loads with the same vocabulary and predictions."""
    model = tt.keras.models.load_model(os.path.join(DATA, "text_model.keras"))
    got = model.predict(tt.constant(SAVED["inputs"]), verbose=0)
    np.testing.assert_allclose(got, SAVED["output"], rtol=1e-5)
    vocabulary = model.layers[0].get_vocabulary()
    assert vocabulary[:4] == ["", "[UNK]", "the", "dog"] and len(vocabulary) == 12
    model.save(tmp_path / "again.keras")
    again = tt.keras.models.load_model(tmp_path / "again.keras")
    assert again.layers[0].get_vocabulary() == vocabulary
    np.testing.assert_allclose(again.predict(tt.constant(SAVED["inputs"]), verbose=0), got)


def test_given_vocabularies_and_idf_weights():
    layer = layers.StringLookup(vocabulary=["[UNK]", "x", "y"])  # the OOV token in its place
    assert layer.get_vocabulary() == ["[UNK]", "x", "y"]
    weights = layers.StringLookup(
        vocabulary=["x", "y"], idf_weights=[0.5, 2.0], output_mode="tf_idf"
    )
    np.testing.assert_allclose(
        weights(tt.constant([["x", "y", "y", "q"]])).numpy(), [[1.25, 0.5, 4.0]]
    )
    config = layers.StringLookup(vocabulary=["x", "y"], mask_token="").get_config()
    assert config["vocabulary"] == ["x", "y"] and config["mask_token"] == ""
    rebuilt = layers.StringLookup.from_config(config)
    np.testing.assert_array_equal(rebuilt(tt.constant(["y", "", "z"])).numpy(), [3, 0, 1])
    vectorize = layers.TextVectorization(output_sequence_length=3, vocabulary=["p", "q"])
    again = layers.TextVectorization.from_config(vectorize.get_config())
    np.testing.assert_array_equal(again(tt.constant(["q p r"])).numpy(), [[3, 2, 1]])


def test_clear_errors():
    with pytest.raises(ValueError, match="repeats 'a'"):
        layers.StringLookup(vocabulary=["a", "b", "a"])
    with pytest.raises(ValueError, match="special token '\\[UNK\\]' at another place"):
        layers.StringLookup(vocabulary=["a", "[UNK]"])
    with pytest.raises(ValueError, match="more than max_tokens=3"):
        layers.StringLookup(vocabulary=["a", "b", "c"], max_tokens=3)
    with pytest.raises(ValueError, match="was given its vocabulary"):
        layers.StringLookup(vocabulary=["a"]).adapt(["a"])
    with pytest.raises(NotImplementedError, match="num_oov_indices=2"):
        layers.StringLookup(num_oov_indices=2)
    with pytest.raises(ValueError, match="output_mode must be one of"):
        layers.IntegerLookup(output_mode="binary")
    with pytest.raises(ValueError, match="needs idf_weights"):
        layers.StringLookup(vocabulary=["a"], output_mode="tf_idf")
    with pytest.raises(TypeError, match="inputs must be string, not float32"):
        layers.StringLookup(vocabulary=["a"])(tt.constant([1.0]))
    with pytest.raises(ValueError, match="ngrams needs split"):
        layers.TextVectorization(ngrams=2, split=None)
    with pytest.raises(ValueError, match="output_sequence_length is for output_mode='int'"):
        layers.TextVectorization(output_mode="count", output_sequence_length=3)
    with pytest.raises(ValueError, match="rank 1 or a last dimension of 1"):
        layers.TextVectorization(vocabulary=["a"])(tt.constant([["a", "b"]]))
    with pytest.raises(ValueError, match="standardize must be one of"):
        layers.TextVectorization(standardize="upper")


def test_text_vectorization_ngrams_as_keras():
    """ngrams=2 and ngrams=(2, 3): the n-grams of each width, one width after another, in
    every output mode (TensorFlow 2.21's vocabularies and outputs for the same texts)."""
    texts = tt.constant(
        ["The Brain is wider than the Sky", "For put them side by side",
         "The one the other will contain", "With ease and You beside"]
    )  # fmt: skip
    sentence = tt.constant(["the brain is deeper than the sea"])
    cases = [
        ("multi_hot", {}, ["[UNK]", "the", "side", "you beside", "you", "with ease"], [1, 1, 0, 0, 0, 0]),
        ("int", {"output_sequence_length": 8}, ["", "[UNK]", "the", "side", "you beside", "you"], [2, 38, 29, 1, 19, 2, 1, 17]),
        ("count", {"ngrams": (2, 3)}, ["[UNK]", "you beside", "with ease and", "with ease", "will contain", "wider than the"], [7, 0, 0, 0, 0, 0]),
    ]  # fmt: skip
    for mode, options, vocabulary, row in cases:
        layer = tt.keras.layers.TextVectorization(output_mode=mode, **{"ngrams": 2, **options})
        layer.adapt(texts)
        assert layer.get_vocabulary()[: len(vocabulary)] == vocabulary
        assert layer(sentence).numpy()[0, : len(row)].tolist() == row
    tf_idf = tt.keras.layers.TextVectorization(output_mode="tf_idf", ngrams=2)
    tf_idf.adapt(texts)
    np.testing.assert_allclose(tf_idf(sentence).numpy()[0, :2], [5.4616, 1.6946], rtol=1e-4)
    assert tf_idf.get_config()["ngrams"] == 2


def test_get_vocabulary_lists_tokens_as_numpy_scalars_as_keras():
    """Keras 3.15 lists a vocabulary's tokens as numpy scalars and the special tokens as
    Python's, so a printed vocabulary reads the same (printed by TF 2.21):
    ['', '[UNK]', np.str_('y'), np.str_('x')] and [-1, np.int64(4), np.int64(3)]."""
    vectorize = tt.keras.layers.TextVectorization()
    vectorize.adapt(["x y", "y"])
    assert repr(vectorize.get_vocabulary()) == "['', '[UNK]', np.str_('y'), np.str_('x')]"
    numbers = tt.keras.layers.IntegerLookup()
    numbers.adapt([3, 4, 4])
    assert repr(numbers.get_vocabulary()) == "[-1, np.int64(4), np.int64(3)]"
    given = tt.keras.layers.StringLookup(vocabulary=["a", "b"])
    assert (
        repr(given.get_vocabulary(include_special_tokens=False)) == "[np.str_('a'), np.str_('b')]"
    )
    assert given.get_config()["vocabulary"] == ["a", "b"]
