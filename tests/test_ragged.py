"""tt.RaggedTensor and tt.ragged: values against TensorFlow 2.21's, their printing, ragged
tensors through compiled functions, gradients reaching the flat values, and the errors of
what tracer refuses. Their derivatives in every backend are the catalogue's
(tests/catalogue/ragged.py)."""

import json
import pathlib

import numpy as np
import pytest

import tracer as tt

# What TensorFlow 2.21 gave for the computations of `_computed`: data/ragged/tensorflow.json
# holds `_shown` of each result of `_computed(tensorflow)` (a ragged tensor as its to_list(),
# shape and dtype; a dense one as its list and dtype), NaN as JSON's NaN.
TENSORFLOW = json.loads(
    (pathlib.Path(__file__).parent / "data" / "ragged" / "tensorflow.json").read_text()
)


def _computed(m):
    """The computations, on `m` (tensorflow or tracer): name -> a function of none."""
    rt = m.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])
    deep = m.ragged.constant([[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]]])
    floats = m.ragged.constant([[1.5, -2.0], [3.0], [], [0.25, 4.0, 1.0]])
    wide = m.ragged.constant([[[1, 2], [3, 4], [5, 6]], [[7, 8]]], ragged_rank=1)
    values = [3, 1, 4, 1, 5, 9, 2]
    R = m.RaggedTensor
    return {
        "constant": lambda: rt,
        "constant_strings": lambda: m.ragged.constant([["So", "long"], ["thanks", "for", "all"]]),
        "constant_deep": lambda: deep,
        "constant_wide": lambda: wide,
        "from_value_rowids": lambda: R.from_value_rowids(values, [0, 0, 0, 0, 2, 2, 3]),
        "from_value_rowids_nrows": lambda: R.from_value_rowids(
            values, [0, 0, 0, 0, 2, 2, 3], nrows=6
        ),
        "from_row_lengths": lambda: R.from_row_lengths(values, [4, 0, 2, 1]),
        "from_row_splits": lambda: R.from_row_splits(values, [0, 4, 4, 6, 7]),
        "from_row_starts": lambda: R.from_row_starts(values, [0, 4, 4, 6]),
        "from_row_limits": lambda: R.from_row_limits(values, [4, 4, 6, 7]),
        "from_nested_row_splits": lambda: R.from_nested_row_splits(
            list(range(10, 20)), ([0, 1, 1, 5], [0, 3, 3, 5, 9, 10])
        ),
        "from_nested_row_lengths": lambda: R.from_nested_row_lengths(
            list(range(10, 20)), ([1, 0, 4], [3, 0, 2, 4, 1])
        ),
        "from_tensor": lambda: R.from_tensor([[1, 2], [3, 4]]),
        "from_tensor_padding": lambda: R.from_tensor(
            [[1, 3, -1, -1], [2, -1, -1, -1], [4, 5, 8, 9]], padding=-1
        ),
        "from_tensor_lengths": lambda: R.from_tensor([[1, 2, 3], [4, 5, 6]], lengths=[1, 3]),
        "from_tensor_rank_2": lambda: R.from_tensor(
            [[[1, 2], [3, 4]], [[5, 6], [7, 8]]], ragged_rank=2
        ),
        "row_lengths": lambda: rt.row_lengths(),
        "value_rowids": lambda: rt.value_rowids(),
        "nrows": lambda: rt.nrows(),
        "row_starts": lambda: rt.row_starts(),
        "deep_row_lengths_2": lambda: deep.row_lengths(axis=2),
        "bounding_shape": lambda: deep.bounding_shape(),
        "to_tensor": lambda: rt.to_tensor(),
        "to_tensor_default": lambda: rt.to_tensor(default_value=-1),
        "to_tensor_shape": lambda: rt.to_tensor(shape=[3, 2]),
        "to_tensor_wider": lambda: rt.to_tensor(default_value=7, shape=[None, 6]),
        "deep_to_tensor": lambda: deep.to_tensor(),
        "wide_to_tensor": lambda: wide.to_tensor(),
        "strings_to_tensor": lambda: m.ragged.constant([["Hi"], ["Welcome", "to"]]).to_tensor(),
        "add": lambda: m.add(rt, 3),
        "plus_ragged": lambda: rt + rt,
        "minus_reflected": lambda: 10 - rt,
        "times_column": lambda: floats * [[1.0], [2.0], [3.0], [4.0]],
        "wide_plus_row": lambda: wide + m.constant([[10, 20]]),
        "deep_plus_column": lambda: deep + m.constant([[[100]], [[200]], [[300]], [[400]]]),
        "square": lambda: m.math.square(floats),
        "less": lambda: rt < 4,
        "cast": lambda: m.cast(rt, m.float32),
        "reduce_mean_1": lambda: m.reduce_mean(floats, axis=1),
        "reduce_sum_1": lambda: m.reduce_sum(rt, axis=1),
        "reduce_sum_keepdims": lambda: m.reduce_sum(rt, axis=1, keepdims=True),
        "reduce_max_1": lambda: m.reduce_max(rt, axis=1),
        "reduce_min_minus_1": lambda: m.math.reduce_min(rt, axis=-1),
        "reduce_sum_0": lambda: m.reduce_sum(rt, axis=0),
        "reduce_max_0": lambda: m.reduce_max(floats, axis=0),
        "reduce_sum_all": lambda: m.reduce_sum(rt),
        "reduce_sum_deep": lambda: m.reduce_sum(deep, axis=2),
        "reduce_mean_wide": lambda: m.reduce_mean(wide, axis=2),
        "reduce_prod_1": lambda: m.reduce_prod(rt, axis=1),
        "reduce_mean_int": lambda: m.reduce_mean(rt, axis=1),
        "concat_0": lambda: m.concat([rt, [[5, 3]]], axis=0),
        "concat_1": lambda: m.concat([rt, rt[:, :1]], axis=1),
        "concat_dense_1": lambda: m.concat([m.fill([5, 1], 0), rt], axis=1),
        "concat_deep_0": lambda: m.concat([deep, deep[:1]], axis=0),
        "stack": lambda: m.stack([rt[:2], rt[3:]], axis=0),
        "ragged_stack": lambda: m.ragged.stack([[1, 2], [3], [4, 5, 6]]),
        "ragged_stack_1": lambda: m.ragged.stack([rt[:2], rt[3:]], axis=1),
        "reverse_1": lambda: m.reverse(rt, [1]),
        "reverse_deep_0": lambda: m.reverse(deep, [0]),
        "reverse_deep_1": lambda: m.reverse(deep, [-2]),
        "reverse_deep_2": lambda: m.reverse(deep, [2]),
        "concat_three_1": lambda: m.concat([floats, floats[:, :1] * 2.0, floats[:, -1:]], axis=1),
        "where": lambda: m.where(floats > 0, floats, 0.0),
        "where_ragged": lambda: m.where(floats > 0, floats, floats * 10.0),
        "where_column": lambda: m.where(floats > 0, 1.0, m.constant([[7.0], [8.0], [9.0], [10.0]])),
        "reduce_join_rows": lambda: m.strings.reduce_join(
            m.ragged.constant([["a", "b"], [], ["c"]]), axis=-1, separator="+"
        ),
        "reduce_join_all": lambda: m.strings.reduce_join(
            m.ragged.constant([["a", "b"], [], ["c"]])
        ),
        "reduce_join_deep": lambda: m.strings.reduce_join(
            m.ragged.constant([[["a", "b"], ["c"]], [["d"]]]), axis=2
        ),
        "tile": lambda: m.tile(rt, [1, 2]),
        "tile_rows": lambda: m.tile(rt[:3], [2, 1]),
        "getitem_row": lambda: rt[0],
        "getitem_rows": lambda: rt[1:3],
        "getitem_cut": lambda: rt[:, :2],
        "getitem_last": lambda: rt[:, -2:],
        "getitem_item": lambda: rt[2, 1],
        "deep_row": lambda: deep[1],
        "deep_item": lambda: deep[3, 0],
        "deep_cut": lambda: deep[:, 1:3],
        "deep_last": lambda: deep[:, -1:],
        "wide_row": lambda: wide[1],
        "range": lambda: m.ragged.range([3, 0, 2]),
        "range_bounds": lambda: m.ragged.range([1, 5], [4, 9], 2),
        "map_flat_values": lambda: m.ragged.map_flat_values(lambda x: x * 2 + 1, rt),
        "map_fn": lambda: m.map_fn(m.math.square, rt),
        "split": lambda: m.strings.split(m.constant(["a b c", "de", ""])),
        "unicode_decode": lambda: m.strings.unicode_decode(m.constant(["hé", "", "x"]), "UTF-8"),
        "substr": lambda: m.strings.substr(m.ragged.constant([["So", "long"], ["thanks"]]), 0, 2),
        "join": lambda: m.strings.join(
            [
                rt[:, :2].with_flat_values(m.as_string(rt[:, :2].flat_values)),
                m.as_string(rt[:, :2]),
            ],
            separator="+",
        ),
        "to_sparse_dense": lambda: m.sparse.to_dense(
            m.ragged.constant([[1], [2, 3]]).to_sparse(), -1
        ),
        "from_uniform_row_length": lambda: R.from_uniform_row_length(
            R.from_row_splits(list(range(10, 20)), [0, 3, 5, 9, 10]), 2
        ),
        "from_sparse": lambda: R.from_sparse(
            m.SparseTensor([[0, 0], [2, 0], [2, 1]], ["a", "b", "c"], [3, 3])
        ),
    }


def _shown(value):
    if isinstance(value, tt.RaggedTensor):
        return {
            "ragged": _decoded(value.to_list()),
            "shape": list(value.shape),
            "dtype": value.dtype.name,
        }
    return {"dense": _decoded(np.asarray(value.numpy()).tolist()), "dtype": value.dtype.name}


def _decoded(x):
    if isinstance(x, list):
        return [_decoded(v) for v in x]
    return x.decode() if isinstance(x, bytes) else x


def test_values_are_tensorflows():
    computed = _computed(tt)
    assert sorted(computed) == sorted(TENSORFLOW)
    for name, make in computed.items():  # (compared as JSON text: NaN is NaN there)
        assert json.dumps(_shown(make())) == json.dumps(TENSORFLOW[name]), name


def test_a_ragged_tensor_prints_as_tensorflows():
    """As TensorFlow 2.21 printed them (tracer in TensorFlow's place)."""
    digits = tt.ragged.constant([[3, 1, 4, 1], [], [5, 9, 2], [6], []])
    assert str(digits) == "<tracer.RaggedTensor [[3, 1, 4, 1], [], [5, 9, 2], [6], []]>"
    assert repr(digits) == str(digits)
    words = tt.ragged.constant([["So", "long"], ["thanks", "for"]])
    assert str(words) == "<tracer.RaggedTensor [[b'So', b'long'],\n [b'thanks', b'for']]>"
    assert repr(digits.numpy()) == (
        "array([array([3, 1, 4, 1], dtype=int32), array([], dtype=int32),\n"
        "       array([5, 9, 2], dtype=int32), array([6], dtype=int32),\n"
        "       array([], dtype=int32)], dtype=object)"
    )
    pairs = tt.RaggedTensor.from_row_splits(
        [[1, 3], [0, 0], [1, 3], [5, 3], [3, 3], [1, 2]], row_splits=[0, 3, 4, 6]
    )
    assert str(pairs) == (
        "<tracer.RaggedTensor [[[1, 3],\n  [0, 0],\n  [1, 3]], [[5, 3]], [[3, 3],\n"
        "                      [1, 2]]]>"
    )
    assert (
        repr(tt.ragged.constant([[1, 2], [3, 4]]).numpy())
        == "array([[1, 2],\n       [3, 4]], dtype=int32)"
    )
    assert digits.shape == tt.TensorShape([5, None]) and digits.dtype == tt.int32
    assert repr(digits.shape) == "TensorShape([5, None])"
    assert digits.ragged_rank == 1 and digits.row_splits.dtype == tt.int64
    assert repr(tt.RaggedTensorSpec([None, None], tt.int32)) == (
        "RaggedTensorSpec(TensorShape([None, None]), tt.int32, 1, tt.int64)"
    )


def _finite_differences(loss, values, step=1e-6):
    grads = []
    for k in range(values.size):
        bump = np.zeros(values.size)
        bump[k] = step
        bump = bump.reshape(values.shape)
        grads.append((loss(values + bump).numpy() - loss(values - bump).numpy()) / (2 * step))
    return np.array(grads).reshape(values.shape)


def test_gradients_reach_the_flat_values():
    splits = np.array([0, 2, 2, 5, 6])
    column = np.array([[1.0], [-2.0], [0.5], [3.0]])

    def loss(values):
        rt = tt.RaggedTensor.from_row_splits(values, splits)
        joined = tt.concat([rt * column, tt.math.square(rt[:, -2:])], axis=1)
        means = tt.reduce_sum(tt.sin(joined), axis=1) + tt.reduce_max(rt[:, :1], axis=1)[:1]
        dense = joined.to_tensor(default_value=0.5)
        return tt.reduce_sum(means**2) + tt.reduce_sum(tt.exp(dense) * dense)

    values = tt.constant([0.3, -1.2, 0.8, 2.0, -0.4, 1.1], dtype=tt.float64)
    with tt.GradientTape() as tape:
        tape.watch(values)
        y = loss(values)
    np.testing.assert_allclose(
        tape.gradient(y, values).numpy(), _finite_differences(loss, values.numpy()), rtol=1e-6
    )


def test_compiled_functions_take_and_give_ragged_tensors():
    traces = []

    @tt.function
    def scaled(rt, factor):
        traces.append(rt.shape)
        doubled = rt * factor + 1.0
        return doubled, tt.reduce_sum(doubled, axis=1)

    rt = tt.ragged.constant([[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]])
    result, sums = scaled(rt, tt.constant(2.0))
    assert isinstance(result, tt.RaggedTensor)
    assert result.to_list() == [[3.0, 5.0], [7.0], [9.0, 11.0, 13.0]]
    assert sums.numpy().tolist() == [8.0, 7.0, 33.0]
    again, _ = scaled(tt.ragged.constant([[1.0], [2.0, 3.0], []]), tt.constant(3.0))
    assert again.to_list() == [[4.0], [7.0, 10.0], []]
    assert scaled.experimental_get_tracing_count() == 2  # the second shape: sizes unknown
    scaled(tt.ragged.constant([[5.0, 5.0, 5.0], [], [1.0]]), tt.constant(1.0))
    assert scaled.experimental_get_tracing_count() == 2

    @tt.function(input_signature=[tt.RaggedTensorSpec([3, None], tt.float32)])
    def row_max(rt):
        return tt.math.reduce_max(rt, axis=-1), rt + 1.0

    largest, plus = row_max(rt)
    assert largest.numpy().tolist() == [2.0, 3.0, 6.0]
    assert plus.to_list() == [[2.0, 3.0], [4.0], [5.0, 6.0, 7.0]]
    other, _ = row_max(tt.ragged.constant([[9.0], [1.0, 8.0], [7.0]]))
    assert other.numpy().tolist() == [9.0, 8.0, 7.0]
    assert row_max.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError, match="the input_signature says RaggedTensorSpec"):
        row_max(tt.ragged.constant([[1, 2]]))

    @tt.function
    def make_palindrome(x, axis):  # the ragged_tensor guide's: TensorFlow 2.21 printed these
        return tt.concat([x, tt.reverse(x, [axis])], axis)

    palindromes = make_palindrome(tt.ragged.constant([[1, 2], [3], [4, 5, 6]]), axis=1)
    assert palindromes.to_list() == [[1, 2, 2, 1], [3, 3], [4, 5, 6, 6, 5, 4]]
    again = make_palindrome(tt.ragged.constant([[1, 2], [], [4, 5, 6, 7]]), axis=1)
    assert again.to_list() == [[1, 2, 2, 1], [], [4, 5, 6, 7, 7, 6, 5, 4]]


def test_what_is_refused_says_why():
    rt = tt.ragged.constant([[1, 2], [3]])
    with pytest.raises(ValueError, match="constructor is private"):
        tt.RaggedTensor(tt.constant([1, 2]), tt.constant([0, 2], tt.int64))
    with pytest.raises(tt.errors.InvalidArgumentError, match="must end at the count of values"):
        tt.RaggedTensor.from_row_splits([1, 2, 3], [0, 2])
    with pytest.raises(tt.errors.InvalidArgumentError, match="must not decrease"):
        tt.RaggedTensor.from_row_splits([1, 2, 3], [0, 2, 1, 3])
    with pytest.raises(tt.errors.InvalidArgumentError, match="value_rowids must not decrease"):
        tt.RaggedTensor.from_value_rowids([1, 2, 3], [0, 2, 1])
    with pytest.raises(tt.errors.InvalidArgumentError, match="rows 0 to 1"):
        tt.RaggedTensor.from_value_rowids([1, 2, 3], [0, 1, 2], nrows=2)
    with pytest.raises(NotImplementedError, match="row_splits_dtype int32"):
        tt.ragged.constant([[1]], row_splits_dtype=tt.int32)
    with pytest.raises(ValueError, match="one nesting depth"):
        tt.ragged.constant(["A", ["B", "C"]])
    with pytest.raises(ValueError, match="mix strings and numbers"):
        tt.ragged.constant([["one", "two"], [3, 4]])
    with pytest.raises(tt.errors.InvalidArgumentError, match="row lengths .* differ"):
        rt + tt.ragged.constant([[1], [2, 3]])
    with pytest.raises(tt.errors.InvalidArgumentError, match="sizes on the ragged dimensions"):
        rt + tt.constant([[1, 2, 3], [4, 5, 6]])
    with pytest.raises(TypeError, match="has no dense value.*to_tensor"):
        tt.convert_to_tensor(rt)
    with pytest.raises(IndexError, match="row 2 of 2 rows"):
        rt[2]
    # (a reduction over axis 1 of ragged rank 2 works now: tests/test_ragged_sparse_more.py)

    @tt.function
    def first_rows(splits):
        return tt.RaggedTensor.from_row_splits(tt.constant([1.0, 2.0, 3.0]), splits)[:, :1]

    with pytest.raises(TypeError, match="row splits must be known when the function is traced"):
        first_rows(tt.constant([0, 1, 3], tt.int64))


def _dataset_prints(m):
    """What a program of ragged datasets prints, on `m` (tensorflow or tracer)."""
    lines = []
    rt = m.ragged.constant([[1, 2], [3], [], [4, 5, 6], [7]])
    rows = m.data.Dataset.from_tensor_slices(rt)
    batches = rows.batch(2)
    lines += [repr(rows.element_spec), *map(str, rows), repr(batches.element_spec)]
    lines += [*map(str, batches), *map(str, batches.unbatch())]
    deep = m.ragged.constant([[[1, 2], [3]], [[4]], [[], [5, 6, 7]]])
    pairs = m.data.Dataset.from_tensor_slices({"a": deep, "n": m.range(3)})
    lines += [repr(pairs.element_spec), *map(str, pairs.batch(2))]
    lines.append(repr(list(rows.take(2).as_numpy_iterator())))
    ranges = m.data.Dataset.from_tensor_slices([1, 5, 3, 2, 8]).map(m.range)
    lines += [repr(ranges.ragged_batch(2).element_spec), *map(str, ranges.ragged_batch(2))]
    lines += map(str, ranges.apply(m.data.experimental.dense_to_ragged_batch(2)))
    fixed = m.data.Dataset.from_tensor_slices(m.ones([3, 2]))
    lines += [repr(fixed.ragged_batch(2).element_spec), *map(str, fixed.ragged_batch(2))]
    lines.append(repr(rows.ragged_batch(2).element_spec))
    return "\n".join(lines) + "\n"


def test_datasets_slice_batch_and_unbatch_ragged_elements():
    """As TensorFlow 2.21 printed `_dataset_prints(tensorflow)` (data/ragged/datasets.txt):
    a row of a ragged matrix is a dense tensor of a RaggedTensorSpec of ragged rank 0, a
    batch of them a RaggedTensor, ragged_batch makes dense elements of unknown shapes
    ragged."""
    printed = _dataset_prints(tt).replace("tracer.", "tf.").replace("tt.", "tf.")
    assert (
        printed == (pathlib.Path(__file__).parent / "data" / "ragged" / "datasets.txt").read_text()
    )


def test_text_vectorization_gives_ragged_rows():
    """Keras 3 on TensorFlow 2.21 printed these rows (tracer in TensorFlow's place)."""
    data = ["The cat sat on the mat", "a dog", "", "The end of it all is near now"]
    layer = tt.keras.layers.TextVectorization(ragged=True)
    layer.adapt(data)
    rows = layer(tt.constant(data))
    assert str(rows) == (
        "<tracer.RaggedTensor [[2, 13, 3, 4, 2, 8], [15, 12], [], [2, 11, 5, 9, 14, 10, 7, 6]]>"
    )
    cut = tt.keras.layers.TextVectorization(
        ragged=True, output_sequence_length=3, vocabulary=layer.get_vocabulary()
    )
    assert cut(tt.constant(data)).to_list() == [[2, 13, 3], [15, 12], [], [2, 11, 5]]
    chars = tt.keras.layers.TextVectorization(
        ragged=True, split="character", vocabulary=list("abcdt")
    )
    assert chars(tt.constant(["cab", "", "dot"])).to_list() == [[4, 2, 3], [], [5, 1, 6]]
    assert chars.get_config()["ragged"] is True
    with pytest.raises(ValueError, match="ragged=True is for output_mode='int' only"):
        tt.keras.layers.TextVectorization(ragged=True, output_mode="count")


def test_lookup_layers_map_ragged_tokens():
    """The text generation tutorial's characters to ids and back: Keras 3 on TensorFlow 2.21
    printed these."""
    chars = tt.strings.unicode_split(tt.constant(["abcdefg", "xyz"]), input_encoding="UTF-8")
    ids_from_chars = tt.keras.layers.StringLookup(vocabulary=list("abcdefgxyz"), mask_token=None)
    ids = ids_from_chars(chars)
    assert str(ids) == "<tracer.RaggedTensor [[1, 2, 3, 4, 5, 6, 7], [8, 9, 10]]>"
    chars_from_ids = tt.keras.layers.StringLookup(
        vocabulary=ids_from_chars.get_vocabulary(), invert=True, mask_token=None
    )
    back = tt.strings.reduce_join(chars_from_ids(ids), axis=-1)
    assert back.numpy().tolist() == [b"abcdefg", b"xyz"]
    numbers = tt.keras.layers.IntegerLookup(vocabulary=[3, 1, 4])
    assert numbers(tt.ragged.constant([[3, 1], [], [4, 5]])).to_list() == [[1, 2], [], [3, 0]]


def test_ragged_strings_joined_through_sparse_tensors():
    """The ragged_tensor guide's join of two ragged tensors of words as sparse ones:
    TensorFlow 2.21 printed this dense tensor."""
    ragged_x = tt.ragged.constant([["John"], ["a", "big", "dog"], ["my", "cat"]])
    ragged_y = tt.ragged.constant([["fell", "asleep"], ["barked"], ["is", "fuzzy"]])
    joined = tt.sparse.concat(sp_inputs=[ragged_x.to_sparse(), ragged_y.to_sparse()], axis=1)
    assert str(tt.sparse.to_dense(joined, "")) == (
        "tracer.Tensor(\n[[b'John' b'' b'' b'fell' b'asleep']\n [b'a' b'big' b'dog' b'barked' b'']\n"
        " [b'my' b'cat' b'' b'is' b'fuzzy']], shape=(3, 5), dtype=string)"
    )


def _shape_prints(m):
    """What a program of ragged shapes prints, on `m` (tensorflow or tracer)."""
    x = m.constant([["a", "b"], ["c", "d"], ["e", "f"]])
    rt_shape = m.shape(m.ragged.constant([[1], [2, 3, 4], [], [5, 6]]))
    lines = [str(m.shape(x)), str(rt_shape)]
    lines.append(f"tf.reshape(x, rt_shape) = {m.reshape(x, rt_shape)}")
    lines.append(f"tf.zeros(rt_shape) = {m.zeros(rt_shape)}")
    lines.append(f"tf.ones(rt_shape) = {m.ones(rt_shape)}")
    lines.append(f"tf.fill(rt_shape, 9) = {m.fill(rt_shape, 'x')}")
    lines += [repr(rt_shape[0]), repr(rt_shape[:1])]
    deep = m.shape(m.ragged.constant([[[1.0, 2.0], [3.0]], [[4.0]]]))
    lines.append(f"{deep} {m.zeros(deep)} {deep[0]!r}")
    wide = m.shape(m.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1))
    lines.append(f"{wide} {m.ones(wide, m.int32)}")
    return "\n".join(lines) + "\n"


def test_the_shape_of_a_ragged_tensor_makes_ragged_tensors():
    """As TensorFlow 2.21 printed `_shape_prints(tensorflow)` (data/ragged/shapes.txt): the
    ragged_tensor guide's DynamicRaggedShape cells, and deeper shapes."""
    printed = _shape_prints(tt).replace("tracer.", "tf.")
    assert printed == (pathlib.Path(__file__).parent / "data" / "ragged" / "shapes.txt").read_text()
    with pytest.raises(ValueError, match="dimension 1 is ragged"):
        tt.shape(tt.ragged.constant([[1], [2, 3]]))[1]
    # the guide's shapes built by hand, as TensorFlow 2.21 printed them
    partition = tt.experimental.RowPartition.from_row_lengths([5, 3, 2])
    built = tt.experimental.DynamicRaggedShape(row_partitions=[partition], inner_shape=[10, 8])
    assert repr(built) == "<DynamicRaggedShape lengths=[3, (5, 3, 2), 8] num_row_partitions=1>"
    lengths = tt.experimental.DynamicRaggedShape.from_lengths([4, (2, 1, 0, 8), 12])
    assert repr(lengths) == (
        "<DynamicRaggedShape lengths=[4, (2, 1, 0, 8), 12] num_row_partitions=1>"
    )


def test_reductions_of_empty_rows_and_means_over_several_axes():
    """TF 2.21: reduce_any over axis 1 of [[1, 2, 3], [], [4, 5]] > 3 is [False False True]
    and reduce_all [False True True] (tracer's any was True for the empty row); reduce_mean
    of [[[1, 2], [3]], [], [[4, 5, 6], [], [7]]] over axes [1, 2] is [2 nan 5.5], the mean
    of each row's values (tracer averaged the inner means: [2.25 nan nan])."""
    rt = tt.ragged.constant([[1.0, 2.0, 3.0], [], [4.0, 5.0]])
    assert tt.reduce_any(rt > 3.0, axis=1).numpy().tolist() == [False, False, True]
    assert tt.reduce_all(rt > 3.0, axis=1).numpy().tolist() == [False, True, True]
    r3 = tt.ragged.constant([[[1.0, 2.0], [3.0]], [], [[4.0, 5.0, 6.0], [], [7.0]]])
    np.testing.assert_array_equal(tt.reduce_mean(r3, axis=[1, 2]).numpy(), [2.0, np.nan, 5.5])


def test_from_tensor_with_two_ragged_dimensions_drops_padding_and_cuts_lengths():
    """TF 2.21: from_tensor(padding=0, ragged_rank=2) drops the innermost rows' padding
    and keeps the outer rows' length; lengths=([1, 2], [2, 1, 3]) cuts each dimension in
    turn (tracer ignored both)."""
    t = tt.constant([[[1, 2, 0], [0, 0, 0]], [[3, 0, 0], [4, 5, 6]]])
    padded = tt.RaggedTensor.from_tensor(t, padding=0, ragged_rank=2)
    assert padded.to_list() == [[[1, 2], []], [[3], [4, 5, 6]]]
    empty = tt.constant([[[0, 0, 0], [0, 0, 0]], [[3, 0, 0], [0, 0, 0]]])
    assert tt.RaggedTensor.from_tensor(empty, padding=0, ragged_rank=2).to_list() == [
        [[], []],
        [[3], []],
    ]
    cut = tt.RaggedTensor.from_tensor(t, lengths=([1, 2], [2, 1, 3]), ragged_rank=2)
    assert cut.to_list() == [[[1, 2]], [[3], [4, 5, 6]]]
