"""tt.string tensors and tt.strings, against TensorFlow 2.21's outputs: each expected value
below is what TensorFlow printed for the same call, run for this file (issue 46)."""

import io
import logging

import numpy as np
import pytest

import tracer as tt


def _values(tensor):
    return tensor.numpy().tolist() if len(tensor.shape) else tensor.numpy()


# --- constants --------------------------------------------------------------------------


def test_strings_are_bytes_as_in_tensorflow():
    s = tt.constant(["ab", "c"])
    assert s.dtype == tt.string and s.dtype is tt.dtypes.string and s.shape == (2,)
    assert str(s) == "tracer.Tensor([b'ab' b'c'], shape=(2,), dtype=string)"
    assert repr(s) == (
        "<tracer.Tensor: shape=(2,), dtype=string, numpy=array([b'ab', b'c'], dtype=object)>"
    )
    assert tt.constant("a").numpy() == b"a"  # a scalar's value is its bytes
    assert tt.constant("é").numpy() == b"\xc3\xa9"  # str is encoded as UTF-8
    assert tt.convert_to_tensor(b"\x00\xff").numpy() == b"\x00\xff"
    assert tt.constant(np.array(["x", "yz"])).numpy().tolist() == [b"x", b"yz"]
    assert repr(tt.constant([["a"], ["b"]])).splitlines() == [
        "<tracer.Tensor: shape=(2, 1), dtype=string, numpy=",
        "array([[b'a'],",
        "       [b'b']], dtype=object)>",
    ]
    assert str(tt.string) == "<dtype: 'string'>" and tt.as_dtype("string") is tt.string


def test_converting_strings_and_numbers_into_each_other_is_refused():
    with pytest.raises(ValueError, match="mixes strings"):
        tt.constant(["a", 1])  # TensorFlow: ValueError, mixed types
    with pytest.raises(TypeError, match="not a string"):
        tt.constant(1, tt.string)
    with pytest.raises(TypeError, match="holds strings"):
        tt.constant("a", tt.float32)
    with pytest.raises(TypeError, match="not a string"):
        tt.constant("a") * 2


def test_creation_and_structure_ops_take_strings():
    abc = tt.constant(["a", "b", "c"])
    assert _values(tt.zeros([2], tt.string)) == [b"", b""]
    assert _values(tt.zeros_like(tt.constant(["a"]))) == [b""]
    assert _values(tt.fill([2], "x")) == [b"x", b"x"]
    assert _values(tt.reshape(tt.constant(["a", "b"]), [2, 1])) == [[b"a"], [b"b"]]
    assert _values(tt.concat([tt.constant(["a"]), tt.constant(["b", "c"])], 0)) == [
        b"a",
        b"b",
        b"c",
    ]
    assert _values(tt.stack([tt.constant("a"), tt.constant("b")])) == [b"a", b"b"]
    assert [t.numpy() for t in tt.unstack(tt.constant(["a", "b"]))] == [b"a", b"b"]
    assert _values(tt.gather(abc, [2, 0])) == [b"c", b"a"]
    assert abc[1].numpy() == b"b" and _values(abc[1:]) == [b"b", b"c"]
    assert _values(abc[::-1]) == _values(tt.reverse(abc, [0])) == [b"c", b"b", b"a"]
    assert _values(tt.transpose(tt.constant([["a", "b"]]))) == [[b"a"], [b"b"]]
    assert _values(tt.tile(tt.constant(["a", "b"]), [2])) == [b"a", b"b", b"a", b"b"]
    assert _values(tt.broadcast_to(tt.constant("a"), [2])) == [b"a", b"a"]
    assert _values(tt.expand_dims(tt.constant("a"), 0)) == [b"a"]
    assert tt.squeeze(tt.constant([["a"]])).numpy() == b"a"
    chosen = tt.where(tt.constant([True, False]), tt.constant(["a", "b"]), tt.constant(["c", "d"]))
    assert _values(chosen) == [b"a", b"d"]
    assert _values(tt.shape(tt.constant([["a", "b"]]))) == [1, 2]
    assert tt.Variable("abc").numpy() == b"abc"
    with pytest.raises(TypeError, match="no string value"):
        tt.ones_like(tt.constant(["a"]))  # TensorFlow has no 1 of strings either


def test_plus_joins_and_equality_compares_elementwise():
    s = tt.constant(["ab", "c"])
    assert _values(s + s) == [b"abab", b"cc"]
    assert _values(s + "b") == [b"abb", b"cb"]
    assert (tt.constant("a") + tt.constant("a")).numpy() == b"aa"
    assert _values(s == "c") == [False, True] and _values(s != "c") == [True, False]
    assert bool(tt.math.equal(tt.constant("a"), "a"))


@pytest.mark.parametrize(
    "compute",
    [
        lambda s: s * s,
        lambda s: s < "b",
        lambda s: tt.reduce_sum(s),
        lambda s: tt.cast(s, tt.float32),
        lambda s: s + tt.constant([1]),
    ],
)
def test_ops_on_numbers_refuse_strings_naming_the_op(compute):
    with pytest.raises(TypeError, match="string") as error:
        compute(tt.constant(["a"]))
    assert "test_strings.py" in str(error.value)  # the user's line


# --- tt.strings -------------------------------------------------------------------------

S = tt.strings
AS_STRING = [
    (lambda: S.as_string(tt.constant([1.5, -2.25e10, np.nan, np.inf])), [
        b"1.500000", b"-22499999744.000000", b"nan", b"inf"]),
    (lambda: S.as_string(tt.constant([1, -2])), [b"1", b"-2"]),
    (lambda: S.as_string(tt.constant([True, False])), [b"true", b"false"]),
    (lambda: S.as_string(tt.constant([1.5, 2.0], tt.float64), precision=2), [b"1.50", b"2.00"]),
    (lambda: S.as_string(tt.constant([1.5, 2.0]), shortest=True), [b"1.5", b"2"]),
    (lambda: S.as_string(tt.constant([1.5, 2.0]), scientific=True), [
        b"1.500000e+00", b"2.000000e+00"]),
    (lambda: S.as_string(tt.constant([1, 22]), width=4, fill="0"), [b"0001", b"0022"]),
    (lambda: S.as_string(tt.constant([1 + 2j], tt.complex64)), [b"(1.000000,2.000000)"]),
    (lambda: tt.as_string(tt.constant(3.25)), b"3.250000"),
]  # fmt: skip
TEXT = [
    (lambda: S.length(tt.constant(["é", "ab"])), [2, 2]),
    (lambda: S.length(tt.constant(["é", "ab"]), unit="UTF8_CHAR"), [1, 2]),
    (lambda: S.length(tt.constant("héllo"), unit="UTF8_CHAR"), 5),
    (lambda: S.reduce_join(tt.constant([["a", "b"], ["c", "d"]]), axis=1, separator="-"), [
        b"a-b", b"c-d"]),
    (lambda: S.reduce_join(tt.constant([["a", "b"], ["c", "d"]]), axis=0, keepdims=True), [
        [b"ac", b"bd"]]),
    (lambda: S.reduce_join(tt.constant([["a", "b"], ["c", "d"]])), b"abcd"),
    (lambda: S.substr(tt.constant(["hello", "hi"]), 1, 3), [b"ell", b"i"]),
    (lambda: S.substr(tt.constant("héllo"), 1, 2, unit="UTF8_CHAR"), b"\xc3\xa9l"),
    (lambda: S.substr(tt.constant("hello"), -3, 2), b"ll"),
    (lambda: S.regex_full_match(tt.constant(["abc", "xbc"]), "a.*"), [True, False]),
    (lambda: S.regex_replace(tt.constant(["aaa", "bab"]), "a", "x"), [b"xxx", b"bxb"]),
    (lambda: S.regex_replace(tt.constant(["aaa"]), "a", "x", replace_global=False), [b"xaa"]),
    (lambda: S.regex_replace(tt.constant(["ab12"]), r"([a-z]+)(\d+)", r"\2\1"), [b"12ab"]),
    (lambda: S.upper(tt.constant("é a")), b"\xc3\xa9 A"),  # ASCII letters only
    (lambda: S.lower(tt.constant(["AbC"])), [b"abc"]),
    (lambda: S.strip(tt.constant("  a b \n")), b"a b"),
    (lambda: S.join([tt.constant(["a", "b"]), "x"], separator="+"), [b"a+x", b"b+x"]),
    (lambda: S.to_number(tt.constant(["1.5", " 2", "1e3"])), [1.5, 2.0, 1000.0]),
    (lambda: S.to_number(tt.constant(["7", "-2"]), out_type=tt.int32), [7, -2]),
]  # fmt: skip
FORMAT = [
    (lambda: S.format("{} and {}", (tt.constant("x"), tt.constant([1.5, 2.0]))), b'"x" and [1.5 2]'),
    (lambda: S.format("{}", tt.constant(["a"] * 10), summarize=2), b'["a" "a" ... "a" "a"]'),
    (lambda: S.format("x: {}", tt.constant(3)), b"x: 3"),
    (lambda: S.format("{} {}", ("a", tt.constant(2))), b'"a" 2'),
    (lambda: S.format("{}", tt.constant([[1, 2], [3, 4]])), b"[[1 2]\n [3 4]]"),
]  # fmt: skip


@pytest.mark.parametrize("case", range(len(AS_STRING + TEXT + FORMAT)))
def test_string_ops_give_tensorflows_values(case):
    compute, expected = (AS_STRING + TEXT + FORMAT)[case]
    eager = compute()
    assert _values(eager) == expected
    compiled = tt.function(compute)()  # strings alone: the numpy interpreter runs it
    assert compiled.dtype == eager.dtype and _values(compiled) == expected
    in_c = tt.function(compute, backend="c")  # each op a step the module hands to Python
    assert _values(in_c()) == expected and in_c.get_concrete_function().backend == "c"


def test_string_op_errors_are_tensorflows():
    with pytest.raises(
        tt.errors.InvalidArgumentError, match="could not correctly convert string: x"
    ):
        S.to_number(tt.constant(["x"]))
    with pytest.raises(tt.errors.InvalidArgumentError, match="convert string: 1.5"):
        S.to_number(tt.constant(["1.5"]), tt.int32)
    with pytest.raises(tt.errors.InvalidArgumentError, match="pos 5 out of range for string b'hi'"):
        S.substr(tt.constant("hi"), 5, 1)
    with pytest.raises(ValueError, match="2 placeholders"):
        S.format("{} {}", tt.constant(1))
    with pytest.raises(TypeError, match="expects tt.string tensors, got float32"):
        S.length(tt.constant(1.0))
    with pytest.raises(TypeError, match="number or bool tensor, got string"):
        S.as_string(tt.constant("a"))


def test_print_quotes_and_escapes_strings_as_tensorflow():
    stream = io.StringIO()
    tt.print(tt.constant("hi"), tt.constant(["a\\b\t", "q'", 'x\n"é']), output_stream=stream)
    assert stream.getvalue() == '"hi" ["a\\\\b\\t" "q\\\'" "x\\n\\"é"]\n'
    # bytes that are not UTF-8 (TensorFlow writes them raw; a text stream cannot)
    tt.print(tt.constant(b"\xff"), output_stream=stream)
    assert stream.getvalue().endswith('"\\xff"\n')


# --- in tt.function ---------------------------------------------------------------------


def test_a_string_argument_traces_per_shape_not_per_value():
    traces = []

    @tt.function
    def double(a):
        traces.append(str(a))
        return a + a

    assert double(tt.constant("a")).numpy() == b"aa"
    assert double(tt.constant("b")).numpy() == b"bb"
    assert traces == ['Tensor("a:0", shape=(), dtype=string)']
    concrete = double.get_concrete_function(tt.TensorSpec(shape=[], dtype=tt.string))
    assert concrete(tt.constant("c")).numpy() == b"cc"
    assert concrete.backend == "interpreter"  # strings alone: compiled, C would only call back
    assert str(concrete.function_type) == (
        "(a: TensorSpec(shape=(), dtype=tt.string, name=None)) -> "
        "TensorSpec(shape=(), dtype=tt.string, name=None)"
    )
    assert str(concrete).splitlines() == [
        "ConcreteFunction Input Parameters:",
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tt.string, name=None)",
        "Output Type:",
        "  TensorSpec(shape=(), dtype=tt.string, name=None)",
        "Captures:",
        "  None",
    ]
    assert concrete.inference_fn(tt.constant("a")).numpy() == b"aa"
    with pytest.raises(tt.errors.InvalidArgumentError, match="expected to be a string tensor"):
        concrete(tt.constant(1))


def test_python_strings_retrace_per_value():
    traces = []

    @tt.function
    def exclaim(word):
        traces.append(word)
        return tt.constant(word) + "!"

    assert [exclaim(w).numpy() for w in ("x", "x", "y")] == [b"x!", b"x!", b"y!"]
    assert traces == ["x", "y"]


def test_strings_flow_through_branches_loops_and_prints_in_a_function():
    stream = io.StringIO()

    @tt.function
    def label(s, x):
        word = tt.cond(x > 0, lambda: tt.constant("pos"), lambda: tt.constant("neg"))
        tt.print("label", word, output_stream=stream)
        return tt.strings.join([s, word], separator=":"), x * 2

    text, doubled = label(tt.constant("a"), tt.constant(-1.0))
    assert text.numpy() == b"a:neg" and doubled.numpy() == -2.0
    assert stream.getvalue() == 'label "neg"\n'

    @tt.function
    def repeat(n):
        return tt.while_loop(lambda i, s: i < n, lambda i, s: (i + 1, s + "ab"), (0, ""))[1]

    assert repeat(tt.constant(3)).numpy() == b"ababab"

    @tt.function
    def digits(n):
        s = tt.constant("")
        for i in tt.range(n):  # autograph's loop
            s = s + tt.strings.as_string(i)
        return s

    assert digits(tt.constant(4)).numpy() == b"0123"


def test_gradients_flow_around_strings_and_never_into_them(caplog):
    x = tt.constant(2.0)
    words = tt.constant(["abc", "de"])

    @tt.function
    def weighted(x, words):
        return tt.reduce_sum(x * x * tt.cast(tt.strings.length(words), tt.float32))

    with tt.GradientTape() as tape:
        tape.watch(x)
        y = weighted(x, words)
    assert y.numpy() == 20.0 and tape.gradient(y, x).numpy() == 20.0  # 2x (3 + 2)
    with caplog.at_level(logging.WARNING, logger="tracer"):
        with tt.GradientTape() as tape:
            tape.watch(words)
            lengths = tt.strings.length(words)
    assert any("string" in record.getMessage() for record in caplog.records)  # TF logs it
    assert tape.gradient(lengths, words) is None


def test_backend_c_compiles_a_graph_of_strings_alone():
    appended = tt.function(lambda s: s + "x", backend="c")
    assert appended(tt.constant("a")).numpy() == b"ax"
    assert appended.get_concrete_function(tt.constant("b")).backend == "c"
    tiered = tt.function(lambda s: tt.reverse(s, [0]), backend="tiered")
    assert _values(tiered(tt.constant(["a", "b"]))) == [b"b", b"a"]


def test_datasets_of_strings():
    lines = tt.data.Dataset.from_tensor_slices(["a", "b"]).map(lambda s: s + "!")
    assert list(lines.as_numpy_iterator()) == [b"a!", b"b!"]

    def words():
        yield "x"
        yield "yz"

    generated = tt.data.Dataset.from_generator(words, output_signature=tt.TensorSpec([], tt.string))
    assert [batch.tolist() for batch in generated.batch(2).as_numpy_iterator()] == [[b"x", b"yz"]]


def test_a_string_variable_is_refused_by_checkpoints_before_anything_is_written(tmp_path):
    checkpoint = tt.train.Checkpoint(v=tt.Variable("abc"))
    with pytest.raises(TypeError, match="cannot save 'v': it holds strings"):
        checkpoint.save(str(tmp_path / "ckpt"))
    assert list(tmp_path.iterdir()) == []


def test_export_c_refuses_strings(tmp_path):
    with pytest.raises(tt.ExportError, match="string values"):
        tt.export_c(lambda s: s + "x", [tt.TensorSpec([], tt.string)], str(tmp_path))
    assert list(tmp_path.iterdir()) == []
