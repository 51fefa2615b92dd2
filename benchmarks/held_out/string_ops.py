"""Held-out: string tensors and the tf.strings / tf.io string ops: construction from str,
bytes and unicode, length and substr in bytes and UTF-8 characters, case mapping, strip,
regular expressions, split to ragged, join and reduce_join, format, as_string, to_number,
hash buckets, unicode decode/encode/split/transcode, bytes_split, equality and tf.where,
unsorted_segment_join, decode_raw, base64, ngrams.

Each case runs eagerly and inside tf.function (tracer: once per backend, C and the numpy
interpreter), taking its tensors as arguments, and prints one line per mode:
`case [mode] dtype shape [values]` or `case [mode] ERR TypeName: message`, so the two
engines' outputs can be compared line by line. An optional second argument keeps only
the cases whose names contain it."""

import sys

import numpy as np
from engine import MODES, failure, tf, which

ONLY = sys.argv[2] if len(sys.argv) > 2 else ""

S, f32, f64, i32, i64 = tf.string, tf.float32, tf.float64, tf.int32, tf.int64
CASES = []


def case(name, *inputs):
    """Registers `fn(*tensors)`; each input is a (values, dtype) pair or a ready value."""

    def register(fn):
        CASES.append((name, fn, inputs))
        return fn

    return register


def render(v):
    if isinstance(v, (tuple, list)):
        return "(" + " ; ".join(render(x) for x in v) + ")"
    ragged = getattr(tf, "RaggedTensor", None)
    if ragged is not None and isinstance(v, ragged):
        return f"ragged {v.dtype.name} {v.to_list()}"
    a = v.numpy() if hasattr(v, "numpy") else np.asarray(v)
    name = v.dtype.name if hasattr(v, "dtype") and hasattr(v.dtype, "name") else a.dtype.name
    a = np.asarray(a)
    # strings as the repr of their bytes, numbers in their shortest exact form
    items = [repr(x) for x in a.ravel().tolist()] if a.dtype == object else map(str, a.ravel())
    return f"{name} {tuple(a.shape)} [{' '.join(items)}]"


def make(spec):
    if isinstance(spec, tuple) and len(spec) == 2 and not isinstance(spec[1], (int, float)):
        values, dtype = spec
        return tf.constant(values, dtype=dtype)
    return tf.constant(spec)


def run_case(name, fn, inputs):
    try:
        args = [make(s) for s in inputs]
    except Exception as e:  # report it and go on
        for mode, _ in MODES:
            print(f"{name} [{mode}] inputs {failure(e)}")
        return
    for mode, wrap in MODES:
        try:
            f = fn if wrap is None else wrap(fn)
            text = render(f(*args))
        except Exception as e:  # report it and go on
            text = failure(e)
        print(f"{name} [{mode}] {text}", flush=True)


U = (["h\u00e9llo", "", "\u65e5\u672c\u8a9e", "a b", "\U0001f600x"], S)
V = (["h\u00e9llo", "\u65e5\u672c\u8a9e", "a b", "\U0001f600x"], S)
W = (["  Hello World  ", "\tA,b,,C\n", "", "x"], S)
M = ([["ab", "cd", "ef"], ["gh", "ij", "kl"]], S)

# ---- construction ---------------------------------------------------------------------------
case("const_str", "abc")(lambda s: s)
case("const_bytes", b"\x00\xff\x80z")(lambda s: s)
case("const_unicode", (["\u00e9", "\u65e5", "\U0001f600"], S))(lambda s: s)
case("const_mixed_2d", ([[b"a", b"bc"], [b"", b"\xc3\xa9"]], S))(lambda s: (s, tf.shape(s)))
case("const_empty", ([], S))(lambda s: (s, tf.size(s)))
case("identity_through_fn", U)(lambda s: tf.identity(s))
case("string_in_string_out_concat", U)(lambda s: s + "!")
case("string_add_tensors", (["a", "b"], S), (["x", "yz"], S))(lambda a, b: a + b)
case("reshape_transpose", M)(lambda s: (tf.reshape(s, [3, 2]), tf.transpose(s)))
case("gather_concat_stack", M)(
    lambda s: (tf.gather(s, [1, 0], axis=1), tf.concat([s, s], 0), tf.stack([s[0], s[1]], 1))
)
case("slice_index", M)(lambda s: (s[1, 2], s[:, 1:], s[::-1]))
case("tile_expand", (["a", "b"], S))(lambda s: (tf.tile(s, [2]), tf.expand_dims(s, 0)))

# ---- length / substr ------------------------------------------------------------------------
case("length_byte", U)(lambda s: tf.strings.length(s))
case("length_utf8", U)(lambda s: tf.strings.length(s, unit="UTF8_CHAR"))
case("length_2d", M)(lambda s: tf.strings.length(s))
case("substr_byte", V)(lambda s: tf.strings.substr(s, 1, 2))
case("substr_utf8", V)(lambda s: tf.strings.substr(s, 1, 2, unit="UTF8_CHAR"))
case("substr_empty_string_zero_pos", (["", "a"], S))(lambda s: tf.strings.substr(s, 0, 1))
case("substr_len_past_end", (["abc", "de"], S))(lambda s: tf.strings.substr(s, 1, 10))
case("substr_negative_pos", (["abcdef", "xyz"], S))(lambda s: tf.strings.substr(s, -2, 2))
case("substr_negative_pos_utf8", (["h\u00e9llo", "\u65e5\u672c\u8a9e"], S))(
    lambda s: tf.strings.substr(s, -2, 1, unit="UTF8_CHAR")
)
case("substr_vector_pos", (["abcdef", "xyz"], S), ([1, 0], i32), ([3, 2], i32))(
    lambda s, p, n: tf.strings.substr(s, p, n)
)
case("substr_pos_out_of_range", (["abc"], S))(lambda s: tf.strings.substr(s, 4, 1))
case("substr_pos_at_end", (["abc"], S))(lambda s: tf.strings.substr(s, 3, 1))
case("substr_neg_out_of_range", (["abc"], S))(lambda s: tf.strings.substr(s, -4, 1))

# ---- case / strip / regex -------------------------------------------------------------------
case("upper_lower", W)(lambda s: (tf.strings.upper(s), tf.strings.lower(s)))
case("upper_non_ascii", (["\u00e9a\u00df", "\u0130i"], S))(lambda s: tf.strings.upper(s))
case("lower_utf8_encoding", (["\u00c9A\u00dc", "\u0391B"], S))(
    lambda s: tf.strings.lower(s, encoding="utf-8")
)
case("upper_utf8_encoding", (["\u00e9a\u00fc", "\u03b1b"], S))(
    lambda s: tf.strings.upper(s, encoding="utf-8")
)
case("strip", W)(lambda s: tf.strings.strip(s))
case("regex_replace_global", W)(lambda s: tf.strings.regex_replace(s, "[lo]", "_"))
case("regex_replace_first", W)(
    lambda s: tf.strings.regex_replace(s, "[lo]", "_", replace_global=False)
)
case("regex_replace_group", (["2024-01-31", "x-y-z"], S))(
    lambda s: tf.strings.regex_replace(s, r"(\w+)-(\w+)", r"\2/\1")
)
case("regex_replace_empty_match", (["abc", ""], S))(lambda s: tf.strings.regex_replace(s, "", "-"))
case("regex_replace_anchor", (["  ab  ", "cd"], S))(
    lambda s: tf.strings.regex_replace(s, r"^\s+|\s+$", "")
)
case("regex_full_match", (["abc", "ab", "abcd", "", "a1"], S))(
    lambda s: tf.strings.regex_full_match(s, "ab?c?")
)
case("regex_full_match_class", (["123", "12a", "", "-4"], S))(
    lambda s: tf.strings.regex_full_match(s, r"-?\d+")
)
case("regex_bad_pattern", (["abc"], S))(lambda s: tf.strings.regex_full_match(s, "(ab"))

case("regex_replace_whole_match_ref", (["ab12", "x"], S))(
    lambda s: tf.strings.regex_replace(s, r"\d", r"<\0>")
)
case("regex_replace_end_anchor", (["ab", ""], S))(lambda s: tf.strings.regex_replace(s, "$", "!"))
case("length_utf8_invalid_bytes", ([b"a\xffb", b"\xc3"], S))(
    lambda s: tf.strings.length(s, unit="UTF8_CHAR")
)
case("strip_nonascii_space", (["\u00a0x\u00a0", "\x0by\x0c"], S))(lambda s: tf.strings.strip(s))
case("split_empty_sep", (["abc"], S))(lambda s: tf.strings.split(s, sep=""))
case("as_string_f64_default", ([1e20, 2.5e-7, -123.456], f64))(lambda x: tf.strings.as_string(x))
case("to_number_f32_overflow", (["1e40", "-1e40", "1e-50"], S))(lambda s: tf.strings.to_number(s))
case("substr_negative_len", (["abcdef"], S))(lambda s: tf.strings.substr(s, 1, -1))

# ---- split / join ---------------------------------------------------------------------------
case("split_default", (["a  b c", " lead trail ", "", "\tx\ny"], S))(lambda s: tf.strings.split(s))
case("split_space", (["a  b c", " lead", ""], S))(lambda s: tf.strings.split(s, sep=" "))
case("split_comma", (["a,b,,c", ",", ""], S))(lambda s: tf.strings.split(s, sep=","))
case("split_multichar_sep", (["a::b::c", "::"], S))(lambda s: tf.strings.split(s, sep="::"))
case("split_maxsplit", (["a,b,c,d", "x"], S))(lambda s: tf.strings.split(s, sep=",", maxsplit=1))
case("split_maxsplit_default_sep", (["a b  c d"], S))(lambda s: tf.strings.split(s, maxsplit=2))
case("split_scalar", "p q r")(lambda s: tf.strings.split(s))
case("split_2d", ([["a b", "c"], ["", "d e f"]], S))(lambda s: tf.strings.split(s))
case("join_sep", (["a", "b"], S), (["x", "y"], S))(lambda a, b: tf.strings.join([a, b], "-"))
case("join_broadcast_scalar", (["a", "b"], S))(lambda a: tf.strings.join([a, "!", a]))
case("reduce_join_all", M)(lambda s: tf.strings.reduce_join(s))
case("reduce_join_axis0", M)(lambda s: tf.strings.reduce_join(s, axis=0))
case("reduce_join_axis1_sep", M)(lambda s: tf.strings.reduce_join(s, axis=1, separator=","))
case("reduce_join_keepdims", M)(
    lambda s: tf.strings.reduce_join(s, axis=-1, keepdims=True, separator="|")
)
case("reduce_join_empty", ([], S))(lambda s: tf.strings.reduce_join(s, separator=","))

# ---- format / as_string / to_number ---------------------------------------------------------
case("format_scalar", ([3], i32))(lambda x: tf.strings.format("x={}", x))
case("format_two", ([1.5, 2.0], f32), "hi")(lambda x, s: tf.strings.format("{} and {}", (x, s)))
case("format_matrix", ([[1, 2], [3, 4]], i32))(lambda x: tf.strings.format("m: {}", x))
case("as_string_float", ([1.5, -0.25, 3.0, 1e-7, 12345.678], f32))(
    lambda x: tf.strings.as_string(x)
)
case("as_string_precision", ([1.5, -0.25, 3.14159], f32))(
    lambda x: tf.strings.as_string(x, precision=2)
)
case("as_string_scientific", ([1.5, -0.25, 31415.9], f64))(
    lambda x: tf.strings.as_string(x, scientific=True, precision=3)
)
case("as_string_shortest", ([1.5, 1e20, 0.0001], f64))(
    lambda x: tf.strings.as_string(x, shortest=True)
)
case("as_string_width_fill", ([7, -3, 123], i32))(
    lambda x: (tf.strings.as_string(x, width=5), tf.strings.as_string(x, width=5, fill="0"))
)
case("as_string_int64_bool", ([2**40, -1], i64), ([True, False], tf.bool))(
    lambda x, b: (tf.strings.as_string(x), tf.strings.as_string(b))
)
case("as_string_nan_inf", ([float("nan"), float("inf"), -float("inf")], f32))(
    lambda x: tf.strings.as_string(x)
)
case("to_number_f32", (["1.5", "-2", "1e3", " 4", "0x10"], S))(lambda s: tf.strings.to_number(s))
case("to_number_f64", (["0.1", "1e-320"], S))(lambda s: tf.strings.to_number(s, out_type=f64))
case("to_number_i32", (["12", "-7", "+3"], S))(lambda s: tf.strings.to_number(s, out_type=i32))
case("to_number_i64", (["9007199254740993", "-1"], S))(
    lambda s: tf.strings.to_number(s, out_type=i64)
)
case("to_number_bad_f32", (["1.5", "abc"], S))(lambda s: tf.strings.to_number(s))
case("to_number_bad_i32", (["1.5"], S))(lambda s: tf.strings.to_number(s, out_type=i32))
case("to_number_empty_string", ([""], S))(lambda s: tf.strings.to_number(s))

# ---- hashing --------------------------------------------------------------------------------
H = (["", "a", "hello", "\u65e5\u672c", "The quick brown fox"], S)
case("hash_fast_10", H)(lambda s: tf.strings.to_hash_bucket_fast(s, 10))
case("hash_fast_big", H)(lambda s: tf.strings.to_hash_bucket_fast(s, 2**31 - 1))
case("hash_strong", H)(lambda s: tf.strings.to_hash_bucket_strong(s, 1000, [1, 2]))
case("hash_strong_key0", H)(lambda s: tf.strings.to_hash_bucket_strong(s, 97, [0, 0]))
case("hash_bucket_legacy", H)(lambda s: tf.strings.to_hash_bucket(s, 10))

# ---- unicode --------------------------------------------------------------------------------
case("unicode_decode", U)(lambda s: tf.strings.unicode_decode(s, "UTF-8"))
case("unicode_decode_scalar", "h\u00e9")(lambda s: tf.strings.unicode_decode(s, "UTF-8"))
case("unicode_decode_invalid_replace", ([b"a\xffb", b"\xc3"], S))(
    lambda s: tf.strings.unicode_decode(s, "UTF-8", errors="replace")
)
case("unicode_decode_invalid_strict", ([b"a\xffb"], S))(
    lambda s: tf.strings.unicode_decode(s, "UTF-8", errors="strict")
)
case("unicode_encode", ([[104, 233], [26085, 128512]], i32))(
    lambda c: tf.strings.unicode_encode(c, "UTF-8")
)
case("unicode_roundtrip", U)(
    lambda s: tf.strings.unicode_encode(tf.strings.unicode_decode(s, "UTF-8"), "UTF-8")
)
case("unicode_split", U)(lambda s: tf.strings.unicode_split(s, "UTF-8"))
case("unicode_transcode_utf16", (["h\u00e9", "\u65e5"], S))(
    lambda s: tf.strings.unicode_transcode(s, "UTF-8", "UTF-16-BE")
)
case("unicode_script", ([65, 1040, 26085, 48], i32))(lambda c: tf.strings.unicode_script(c))
case("bytes_split", (["ab", "", "\u00e9"], S))(lambda s: tf.strings.bytes_split(s))

# ---- comparison / where / segment join ------------------------------------------------------
case("equal_not_equal", (["a", "b", ""], S), (["a", "B", ""], S))(
    lambda a, b: (tf.equal(a, b), tf.not_equal(a, b), a == b)
)
case("equal_broadcast_scalar", (["a", "b", "a"], S))(lambda a: tf.equal(a, "a"))
case("where_strings", ([True, False, True], tf.bool), (["x", "y", "z"], S), (["p", "q", "r"], S))(
    lambda c, a, b: tf.where(c, a, b)
)
case("where_on_equal", (["cat", "dog", "cat"], S))(
    lambda s: tf.where(tf.equal(s, "cat"), tf.strings.upper(s), s)
)
case("unsorted_segment_join", (["a", "b", "c", "d"], S), ([1, 0, 1, 3], i32))(
    lambda s, ids: tf.strings.unsorted_segment_join(s, ids, 4, separator=":")
)
case("unique_strings", (["b", "a", "b", "c", "a"], S))(lambda s: tuple(tf.unique(s)))
case("string_reduce_via_boolean_mask", (["a", "bb", "ccc"], S))(
    lambda s: tf.boolean_mask(s, tf.strings.length(s) > 1)
)

# ---- decode_raw / base64 --------------------------------------------------------------------
case("decode_raw_uint8", ([b"\x01\x02\x03", b"\xff\x00\x10"], S))(
    lambda s: tf.io.decode_raw(s, tf.uint8)
)
case("decode_raw_int32_le", ([b"\x01\x00\x00\x00\xff\xff\xff\xff"], S))(
    lambda s: tf.io.decode_raw(s, tf.int32)
)
case("decode_raw_int16_be", ([b"\x01\x02\x03\x04"], S))(
    lambda s: tf.io.decode_raw(s, tf.int16, little_endian=False)
)
case("decode_raw_float32", (b"\x00\x00\x80\x3f",))(lambda s: tf.io.decode_raw(s, f32))
case("decode_raw_bad_length", ([b"\x01\x02\x03"], S))(lambda s: tf.io.decode_raw(s, tf.int16))
case("encode_base64", (["hello", "", "\u00e9?>"], S))(lambda s: tf.io.encode_base64(s))
case("encode_base64_pad", (["a", "ab", "abc"], S))(lambda s: tf.io.encode_base64(s, pad=True))
case("decode_base64", (["aGVsbG8", "", "w6k_Pg"], S))(lambda s: tf.io.decode_base64(s))
case("base64_roundtrip", ([b"\x00\xfe\xff", b"xyz"], S))(
    lambda s: tf.io.decode_base64(tf.io.encode_base64(s))
)
case("decode_base64_bad", (["a$b"], S))(lambda s: tf.io.decode_base64(s))

# ---- ngrams ---------------------------------------------------------------------------------
case("ngrams_2", (["a", "b", "c", "d"], S))(lambda s: tf.strings.ngrams(s, 2))
case("ngrams_sep", (["a", "b", "c"], S))(lambda s: tf.strings.ngrams(s, 2, separator="_"))
case("ngrams_range", (["a", "b", "c"], S))(lambda s: tf.strings.ngrams(s, (1, 3)))
case("ngrams_too_short", (["a"], S))(lambda s: tf.strings.ngrams(s, 3))
case("ngrams_pad", (["a", "b"], S))(lambda s: tf.strings.ngrams(s, 3, pad_values=("<", ">")))
case("ngrams_ragged", (["a b c", "d e", "f"], S))(
    lambda s: tf.strings.ngrams(tf.strings.split(s), 2)
)


if __name__ == "__main__":
    print(f"{which} string_ops: {len(CASES)} cases")
    for name, fn, inputs in CASES:
        if ONLY in name:
            run_case(name, fn, inputs)
