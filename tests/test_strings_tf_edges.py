"""tt.strings where TensorFlow's kernels (RE2, absl's number parsing, ReduceJoin's axis
order) differ from what Python's own functions would do, and tt.py_function and padded_batch
with strings: each expected value is what TensorFlow 2.21 printed for the same call."""

import numpy as np
import pytest

import tracer as tt

S = tt.strings


def _values(tensor):
    value = tensor.numpy()
    return value.tolist() if isinstance(value, np.ndarray) else value


BACKENDS = ("eager", "interpreter", "c")


def _run(backend, function, *args):
    if backend == "eager":
        return function(*args)
    return tt.function(function, backend=backend)(*args)


# --- reduce_join ------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_reduce_join_joins_with_the_first_listed_axis_varying_fastest(backend):
    x = tt.constant([["a", "b"], ["c", "d"]])
    y = tt.reshape(tt.constant([str(i) for i in range(8)]), [2, 2, 2])
    join = S.reduce_join
    # TensorFlow: b'a|c|b|d', b'a|b|c|d', [b'0|4|1|5', b'2|6|3|7'], b'0|1|2|3|4|5|6|7'
    assert _run(backend, lambda t: join(t, axis=[0, 1], separator="|"), x).numpy() == b"a|c|b|d"
    assert _run(backend, lambda t: join(t, axis=[1, 0], separator="|"), x).numpy() == b"a|b|c|d"
    assert _values(_run(backend, lambda t: join(t, axis=[0, 2], separator="|"), y)) == [
        b"0|4|1|5",
        b"2|6|3|7",
    ]
    assert _run(backend, lambda t: join(t, separator="|"), y).numpy() == b"0|1|2|3|4|5|6|7"
    # keepdims, axis=[2, 0]: [[[b'0|1|4|5'], [b'2|3|6|7']]]
    kept = _run(backend, lambda t: join(t, axis=[2, 0], keepdims=True, separator="|"), y)
    assert _values(kept) == [[[b"0|1|4|5"], [b"2|3|6|7"]]]


def test_reduce_join_takes_an_axis_tensor_and_refuses_bad_axes_as_tensorflow():
    x = tt.constant([["a", "b"], ["c", "d"]])
    y = tt.reshape(tt.constant([str(i) for i in range(8)]), [2, 2, 2])
    # TensorFlow: axis=tf.constant([0, 1]) -> b'a|c|b|d'; tf.constant(1) -> [b'a|b', b'c|d']
    assert S.reduce_join(x, axis=tt.constant([0, 1]), separator="|").numpy() == b"a|c|b|d"
    assert _values(S.reduce_join(x, axis=tt.constant(1), separator="|")) == [b"a|b", b"c|d"]
    assert _values(S.reduce_join(x, axis=[], separator="|")) == [[b"a", b"b"], [b"c", b"d"]]
    # InvalidArgumentError "Duplicate reduction dimension 0" (also for [0, -3])
    for axis in ([0, 0], [0, -3]):
        with pytest.raises(tt.errors.InvalidArgumentError, match="Duplicate reduction dimension"):
            S.reduce_join(y, axis=axis)
    # OutOfRangeError "Invalid reduction dimension 3 for input with 3 dimension(s)"
    for axis in (3, [0, 3], -4):
        with pytest.raises(tt.errors.OutOfRangeError, match="Invalid reduction dimension"):
            S.reduce_join(y, axis=axis)
    with pytest.raises(tt.errors.OutOfRangeError):
        S.reduce_join(tt.constant("a"), axis=0)
    # in tf.function: InvalidArgumentError for the duplicate
    with pytest.raises(tt.errors.InvalidArgumentError):
        tt.function(lambda t: S.reduce_join(t, axis=[0, 0]))(x)


# --- to_number --------------------------------------------------------------------------

# TensorFlow's value for float32, float64, int32, int64 (None: InvalidArgumentError)
NUMBERS = [
    ("1_000", None, None, None, None),
    ("2_5.5", None, None, None, None),
    ("0x1A", 26.0, 26.0, None, None),
    ("-0x1a", -26.0, -26.0, None, None),
    ("0x1p3", 8.0, 8.0, None, None),
    ("0x1.8p1", 3.0, 3.0, None, None),
    ("0x.8", 0.5, 0.5, None, None),
    ("0x", None, None, None, None),
    ("+1", 1.0, 1.0, 1, 1),
    (" \t5\n", 5.0, 5.0, 5, 5),
    ("\x0b1\x0c", 1.0, 1.0, 1, 1),
    ("", None, None, None, None),
    ("  ", None, None, None, None),
    ("+-1", None, None, None, None),
    ("- 1", None, None, None, None),
    ("5.", 5.0, 5.0, None, None),
    (".", None, None, None, None),
    ("1e", None, None, None, None),
    ("1e5", 1e5, 1e5, None, None),
    ("Infinity", np.inf, np.inf, None, None),
    ("-INF", -np.inf, -np.inf, None, None),
    ("infx", None, None, None, None),
    ("0b101", None, None, None, None),
    ("0o7", None, None, None, None),
    ("\u0661", None, None, None, None),  # an Arabic-Indic digit: Python's float() takes it
    ("1e-50", 0.0, 1e-50, None, None),
    ("3.5e38", np.inf, 3.5e38, None, None),
    ("2147483648", 2147483648.0, 2147483648.0, None, 2147483648),
    ("-2147483648", -2147483648.0, -2147483648.0, -2147483648, -2147483648),
    ("9223372036854775808", 9.223372036854776e18, 9.223372036854776e18, None, None),
    # rounded once to float32, not through float64: 1.0000001 (np.float32(float(s)) is 1.0)
    ("1.00000005960464477539062500001", 1.0000001192092896, 1.0000000596046448, None, None),
]


def _parsed(text, dtype):
    try:
        return S.to_number(tt.constant(text), dtype).numpy()
    except tt.errors.InvalidArgumentError as error:
        assert "could not correctly convert string" in str(error)
        return None


def test_to_number_parses_as_tensorflow():
    wrong = []
    for text, *expected in NUMBERS:
        for dtype, want in zip((tt.float32, tt.float64, tt.int32, tt.int64), expected):
            got = _parsed(text, dtype)
            if got is None or want is None:
                if got is not want:
                    wrong.append((text, dtype.name, got, want))
            elif got != want or got.dtype != dtype.as_numpy_dtype:
                wrong.append((text, dtype.name, got, want))
    assert wrong == []


def test_to_number_takes_nan_spellings_as_tensorflow():
    for text in ("nan", "-NaN", "nan(abc_1)", "NAN()"):  # TensorFlow: nan
        assert np.isnan(S.to_number(tt.constant(text)).numpy())
    for text in ("nan(a-b)", "nan("):  # InvalidArgumentError
        with pytest.raises(tt.errors.InvalidArgumentError):
            S.to_number(tt.constant(text))


@pytest.mark.parametrize("backend", ("interpreter", "c"))
def test_to_number_parses_as_tensorflow_in_a_function(backend):
    f = tt.function(lambda t: S.to_number(t), backend=backend)
    assert _values(f(tt.constant(["0x1p3", "7"]))) == [8.0, 7.0]  # TensorFlow: [8. 7.]
    with pytest.raises(tt.errors.InvalidArgumentError):  # TensorFlow: InvalidArgumentError
        f(tt.constant(["1_000", "7"]))


# --- regular expressions ----------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_regex_works_on_utf8_characters_as_re2(backend):
    s = tt.constant(["é", "ü!"])
    # TensorFlow: [True], [b'X', b'XX'], [b'X', b'\xc3\xbc!'], [b'X', b'X!']
    assert _values(_run(backend, lambda t: S.regex_full_match(t, "."), s[:1])) == [True]
    assert _values(_run(backend, lambda t: S.regex_replace(t, ".", "X"), s)) == [b"X", b"XX"]
    assert _values(_run(backend, lambda t: S.regex_replace(t, "[é]", "X"), s)) == [
        b"X",
        "ü!".encode(),
    ]
    assert _values(_run(backend, lambda t: S.regex_replace(t, "[à-ÿ]", "X"), s)) == [b"X", b"X!"]


def test_regex_never_matches_an_invalid_utf8_byte_as_re2():
    bad = tt.constant([b"a\xffb", b"\xe6\x97", b"\xc3\xa9"])
    # TensorFlow: [False False False], [b'X\xffX', b'\xe6\x97', b'X'], [b'a\xffX', ...],
    # .* -> [False False True]
    assert _values(S.regex_full_match(bad, "a.b")) == [False, False, False]
    assert _values(S.regex_replace(bad, ".", "X")) == [b"X\xffX", b"\xe6\x97", b"X"]
    assert _values(S.regex_replace(bad, "[^a]", "X")) == [b"a\xffX", b"\xe6\x97", b"X"]
    assert _values(S.regex_full_match(bad, ".*")) == [False, False, True]


WORDS = ["A", "a", "a.b", "\n", "aa", "É", "é", "a{,3}", "7", "α", "K", "\x0b", "_"]

# pattern -> which of WORDS TensorFlow's regex_full_match matched
RE2_SYNTAX = {
    "[[:alpha:]]": ["A", "a", "K"],
    "[[:^alpha:]]": ["\n", "É", "é", "7", "α", "\x0b", "_"],
    "[[:word:]]": ["A", "a", "7", "K", "_"],
    "a{,3}": ["a{,3}"],  # a literal in RE2 (Python: up to 3 a's)
    "a{2}": ["aa"],
    r"\s": ["\n"],  # no vertical tab in RE2's \s
    r"\w": ["A", "a", "7", "K", "_"],  # ASCII only
    r"\d": ["7"],
    r"[^\D]": ["7"],
    r"\pL": ["A", "a", "É", "é", "α", "K"],
    r"\p{Lu}": ["A", "É", "K"],
    r"\PL": ["\n", "7", "\x0b", "_"],
    r"\pN": ["7"],
    r"a\z": ["a"],
    r"\Qa.b\E": ["a.b"],
    r"\x{41}": ["A"],
    "(?U)a+": ["a", "aa"],
    "(?i)É": ["É", "é"],
    "(?s).": ["A", "a", "\n", "É", "é", "7", "α", "K", "\x0b", "_"],
    "(?m)a$": ["a"],
    "[]a]": ["a"],
    "a??": ["a"],
    "x{1": [],
}


def test_regex_reads_re2_syntax():
    found = {}
    for pattern in RE2_SYNTAX:
        try:
            matched = S.regex_full_match(tt.constant(WORDS), pattern).numpy()
            found[pattern] = [w for w, m in zip(WORDS, matched) if m]
        except ValueError as error:
            found[pattern] = error
    assert found == RE2_SYNTAX


def test_regex_dollar_and_empty_matches_as_re2():
    # TensorFlow: b'a\nX' ($ only at the end), b'aX\nbX\nX' with (?m), b'-b-c-', b'-a-b-c-'
    assert S.regex_replace(tt.constant("a\n"), "$", "X").numpy() == b"a\nX"
    assert S.regex_replace(tt.constant("a\nb\n"), "(?m)$", "X").numpy() == b"aX\nbX\nX"
    assert S.regex_replace(tt.constant("baaac"), "a*", "-").numpy() == b"-b-c-"
    assert S.regex_replace(tt.constant("abc"), "x*", "-").numpy() == b"-a-b-c-"
    assert S.regex_replace(tt.constant("éa b"), r"\b", "|").numpy() == "é|a| |b|".encode()
    assert S.regex_full_match(tt.constant(["a"]), tt.constant("a")).numpy().tolist() == [True]


def test_regex_rewrites_as_re2():
    s = tt.constant("abc")
    # TensorFlow, pattern (b)(x)?: \n -> b'ac', \\ -> b'a\\c', a\ -> b'aac', \2 -> b'ac',
    # \10 -> b'ab0c', $1 -> b'a$1c', [\0] -> b'a[b]c'
    cases = {"\\n": b"ac", "\\\\": b"a\\c", "a\\": b"aac", "\\2": b"ac", "\\10": b"ab0c"}
    cases.update({"$1": b"a$1c", "[\\0]": b"a[b]c", "\\g<0>": b"ac"})
    for rewrite, want in cases.items():
        assert S.regex_replace(s, "(b)(x)?", rewrite).numpy() == want, rewrite
    # a group the pattern lacks: the string as it is (TensorFlow: [b'abc'])
    assert _values(S.regex_replace(tt.constant(["abc"]), "b", r"\3")) == [b"abc"]


@pytest.mark.parametrize(
    "pattern",
    ["(", "a(?=b)b", "(?<n>a)", "(?P=n)", "a*+", "(?>a)", "(?#c)a", "a{1001}", "a{2,1}",
     r"(a)\1", r"\8", r"\Z", r"\h", r"\e", r"\cA", r"[a-\d]", "a**"],
)  # fmt: skip
def test_regex_refuses_what_re2_refuses(pattern):
    # TensorFlow: InvalidArgumentError "Invalid pattern: ..., error: ..."
    with pytest.raises(tt.errors.InvalidArgumentError):
        S.regex_full_match(tt.constant(["ab"]), pattern)
    with pytest.raises(tt.errors.InvalidArgumentError):
        S.regex_replace(tt.constant(["ab"]), pattern, "x")


# --- other ops on invalid UTF-8 ---------------------------------------------------------


def test_string_ops_on_invalid_utf8_and_negative_len_as_tensorflow():
    bad = tt.constant([b"a\xffb", b"\xe6\x97"])
    # TensorFlow: [b'A\xef\xbf\xbdB', b'\xef\xbf\xbd'] and lower: [b'a\xef\xbf\xbdb', ...]
    assert _values(S.upper(bad, encoding="utf-8")) == [b"A\xef\xbf\xbdB", b"\xef\xbf\xbd"]
    assert _values(S.lower(tt.constant([b"A\xffB"]), encoding="utf-8")) == [b"a\xef\xbf\xbdb"]
    # TensorFlow: [3 1]; [1 0 1] for b'\xe6\x97\x97\x97', b'\x80', b'\xc3\xa9'
    assert _values(S.length(bad, unit="UTF8_CHAR")) == [3, 1]
    more = tt.constant([b"\xe6\x97\x97\x97", b"\x80", b"\xc3\xa9"])
    assert _values(S.length(more, unit="UTF8_CHAR")) == [1, 0, 1]
    # TensorFlow: b'abc', b'bcdef', b'ef', and in characters b''
    assert S.substr(tt.constant("abc"), 0, -1).numpy() == b"abc"
    assert S.substr(tt.constant("abcdef"), 1, -3).numpy() == b"bcdef"
    assert S.substr(tt.constant("abcdef"), -2, -1).numpy() == b"ef"
    assert S.substr(tt.constant("aébc"), 1, -1, unit="UTF8_CHAR").numpy() == b""


# --- py_function and padded_batch -------------------------------------------------------


@pytest.mark.parametrize("backend", ("interpreter", "c"))
def test_py_function_takes_and_returns_scalar_strings_in_a_function(backend):
    def length(s):
        return tt.py_function(lambda t: tt.strings.length(t) * 2, [s], tt.int32)

    def upper(s):
        return tt.py_function(lambda t: t.numpy().upper(), [s], tt.string)

    # TensorFlow: 6 and b'ABC'
    assert tt.function(length, backend=backend)(tt.constant("abc")).numpy() == 6
    assert tt.function(upper, backend=backend)(tt.constant("abc")).numpy() == b"ABC"


def test_py_function_with_scalar_strings_in_a_dataset_map():
    ds = tt.data.Dataset.from_tensor_slices(["ab", "cd"])
    upper = ds.map(lambda s: tt.py_function(lambda t: t.numpy().upper(), [s], tt.string))
    assert [e.numpy() for e in upper] == [b"AB", b"CD"]  # TensorFlow: [b'AB', b'CD']
    length = ds.map(lambda s: tt.py_function(lambda t: tt.strings.length(t), [s], tt.int32))
    assert [e.numpy() for e in length] == [2, 2]


def test_padded_batch_pads_strings_with_empty_strings():
    ds = tt.data.Dataset.from_generator(
        lambda: iter([["a"], ["b", "c"]]), output_signature=tt.TensorSpec([None], tt.string)
    )
    # TensorFlow: [[b'a', b''], [b'b', b'c']] and, padded to 3, [[b'a', b'', b''], ...]
    assert [_values(e) for e in ds.padded_batch(2)] == [[[b"a", b""], [b"b", b"c"]]]
    ds2 = tt.data.Dataset.from_tensor_slices(tt.constant([["a"], ["b"]]))
    assert [_values(e) for e in ds2.padded_batch(2, padded_shapes=[3])] == [
        [[b"a", b"", b""], [b"b", b"", b""]]
    ]
