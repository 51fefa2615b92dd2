"""tt.strings.ngrams against the values TensorFlow 2.21 printed for the same calls (each
case's expected list below is its output), eagerly and in a traced function."""

import pytest

import tracer as tt

TOKENS = [["a", "b", "c", "d"], ["e", "f"], ["g"]]

CASES = [
    ({"ngram_width": 2}, [[b"a b", b"b c", b"c d"], [b"e f"], []]),
    (
        {"ngram_width": (1, 3), "separator": "_"},
        [[b"a", b"b", b"c", b"d", b"a_b_c", b"b_c_d"], [b"e", b"f"], [b"g"]],
    ),
    (
        {"ngram_width": 3, "pad_values": ("<s>", "</s>")},
        [
            [b"<s> <s> a", b"<s> a b", b"a b c", b"b c d", b"c d </s>", b"d </s> </s>"],
            [b"<s> <s> e", b"<s> e f", b"e f </s>", b"f </s> </s>"],
            [b"<s> <s> g", b"<s> g </s>", b"g </s> </s>"],
        ],
    ),
    (
        {"ngram_width": 3, "pad_values": "#", "padding_width": 1},
        [[b"# a b", b"a b c", b"b c d", b"c d #"], [b"# e f", b"e f #"], [b"# g #"]],
    ),
    (
        {"ngram_width": 3, "preserve_short_sequences": True},
        [[b"a b c", b"b c d"], [b"e f"], [b"g"]],
    ),
    (
        {"ngram_width": 3, "pad_values": "#", "padding_width": 3},  # (cut to width - 1)
        [
            [b"# # a", b"# a b", b"a b c", b"b c d", b"c d #", b"d # #"],
            [b"# # e", b"# e f", b"e f #", b"f # #"],
            [b"# # g", b"# g #", b"g # #"],
        ],
    ),
]


@pytest.mark.parametrize("kwargs, expected", CASES)
def test_ngrams_of_ragged_rows(kwargs, expected):
    rows = tt.ragged.constant(TOKENS)
    assert tt.strings.ngrams(rows, **kwargs).to_list() == expected
    traced = tt.function(lambda: tt.strings.ngrams(tt.ragged.constant(TOKENS), **kwargs))
    assert traced().to_list() == expected


def test_ngrams_of_dense_sequences_and_nested_rows():
    """TF 2.21: a vector's bigrams are a vector, a matrix's rows' a matrix; a vector too
    short gives an empty vector; an empty ragged row keeps its place; rows of rows."""
    vector = tt.strings.ngrams(tt.constant(["a", "b", "c"]), 2)
    assert vector.numpy().tolist() == [b"a b", b"b c"]
    assert tt.strings.ngrams(tt.constant(["a", "b"]), 3).shape == (0,)
    matrix = tt.strings.ngrams(tt.constant([["a", "b", "c"], ["d", "e", "f"]]), 2)
    assert matrix.numpy().tolist() == [[b"a b", b"b c"], [b"d e", b"e f"]]
    short = tt.ragged.constant([["a", "b"], [], ["c"]])
    kept = tt.strings.ngrams(short, 2, preserve_short_sequences=True)
    assert kept.to_list() == [[b"a b"], [], [b"c"]]
    nested = tt.ragged.constant([[["a", "b", "c"]], [["d"], ["e", "f"]]])
    assert tt.strings.ngrams(nested, 2).to_list() == [[[b"a b", b"b c"]], [[], [b"e f"]]]
    with pytest.raises(ValueError, match="greater than 0"):
        tt.strings.ngrams(short, 0)
