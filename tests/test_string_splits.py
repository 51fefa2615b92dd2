"""tt.strings.split, bytes_split, unicode_split, unicode_decode and tt.io.decode_raw: the
outputs TensorFlow 2.21 printed for the same inputs, in a traced function where the strings
are constants, and the errors (several strings, which TensorFlow makes ragged; strings
known only when a compiled function runs)."""

import numpy as np
import pytest

import tracer as tt

DUCK = "アヒル 🦆"


@pytest.mark.parametrize(
    "call, want",
    [
        (lambda: tt.strings.split("Hello World  x", sep=" "), [b"Hello", b"World", b"", b"x"]),
        (lambda: tt.strings.split("Hello World  x"), [b"Hello", b"World", b"x"]),
        (lambda: tt.strings.split("a,b,,c", sep=",", maxsplit=2), [b"a", b"b", b",c"]),
        (lambda: tt.strings.split(" a  b ", maxsplit=1), [b"a", b"b "]),
        (lambda: tt.strings.split(" a  b ", sep=" ", maxsplit=1), [b"", b"a  b "]),
        (lambda: tt.strings.split(""), []),
        (lambda: tt.strings.split("", sep=","), [b""]),
        (lambda: tt.strings.bytes_split(tt.constant("Duck")), [b"D", b"u", b"c", b"k"]),
        (
            lambda: tt.strings.unicode_split(tt.constant(DUCK), "UTF-8"),
            [ch.encode() for ch in DUCK],
        ),
        (
            lambda: tt.strings.unicode_split(tt.constant(b"a\xffb"), "UTF-8"),
            [b"a", b"\xef\xbf\xbd", b"b"],
        ),
    ],
)
def test_parts_of_one_string(call, want):
    got = call()
    assert got.dtype == tt.string and got.shape == (len(want),)
    assert got.numpy().tolist() == want


def test_code_points_and_raw_bytes():
    points = tt.strings.unicode_decode(tt.constant(DUCK), "UTF-8")
    assert points.dtype == tt.int32
    np.testing.assert_array_equal(points.numpy(), [12450, 12498, 12523, 32, 129414])
    replaced = tt.strings.unicode_decode(tt.constant(b"a\xffb"), "UTF-8")
    np.testing.assert_array_equal(replaced.numpy(), [97, 65533, 98])
    ignored = tt.strings.unicode_decode(tt.constant(b"a\xffb"), "UTF-8", errors="ignore")
    np.testing.assert_array_equal(ignored.numpy(), [97, 98])
    raw = tt.io.decode_raw(tt.constant("Duck"), tt.uint8)
    assert raw.dtype == tt.uint8
    np.testing.assert_array_equal(raw.numpy(), [68, 117, 99, 107])
    rows = tt.io.decode_raw(tt.constant(["abcd", "efgh"]), tt.int16)
    np.testing.assert_array_equal(rows.numpy(), [[25185, 25699], [26213, 26727]])
    big = tt.io.decode_raw(tt.constant("abcd"), tt.int16, little_endian=False)
    np.testing.assert_array_equal(big.numpy(), [24930, 25444])


def test_the_tensor_guides_numbers_from_text():
    text = tt.constant("1 10 100")
    np.testing.assert_array_equal(
        tt.strings.to_number(tt.strings.split(text, " ")).numpy(), [1, 10, 100]
    )
    for backend in ("c", "interpreter"):
        f = tt.function(lambda: tt.strings.to_number(tt.strings.split(text, " ")), backend=backend)
        np.testing.assert_array_equal(f().numpy(), [1.0, 10.0, 100.0])


def test_clear_errors():
    # TF 2.21: strings of rank 2 split into a RaggedTensor of ragged rank 2
    assert tt.strings.split(tt.constant([["a b", "c"]])).to_list() == [[[b"a", b"b"], [b"c"]]]
    # a string known only when the function runs (TF 2.21 splits it): it runs as Python
    assert tt.function(lambda s: tt.strings.split(s))(tt.constant("a b")).numpy().tolist() == [
        b"a",
        b"b",
    ]
    with pytest.raises(TypeError, match="must be a tt.string tensor"):
        tt.strings.bytes_split(tt.constant(3))
    with pytest.raises(ValueError, match="sep must not be empty"):
        tt.strings.split("ab", sep="")
    with pytest.raises(tt.errors.InvalidArgumentError, match="invalid UTF-8"):
        tt.strings.unicode_decode(tt.constant(b"a\xff"), "UTF-8", errors="strict")
    with pytest.raises(ValueError, match="every string must have one length, a multiple of 2"):
        tt.io.decode_raw(tt.constant(["abc", "de"]), tt.int16)
