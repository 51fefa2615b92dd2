"""tt.strings.unicode_decode(_with_offsets), unicode_split(_with_offsets), unicode_encode and
unicode_transcode: the outputs TensorFlow 2.21 printed for the same calls (other encodings
than UTF-8, replacement characters, dropped and refused bytes, ragged inputs), eagerly and
in a traced function where the strings are constants, and the errors."""

import pytest

import tracer as tt

EMOJI = "h\u00e9\u20ac\U0001f600"


def _listed(value):
    if isinstance(value, tuple):
        return [_listed(v) for v in value]
    if hasattr(value, "to_list"):
        return value.to_list()
    array = value.numpy()
    return array.tolist() if hasattr(array, "tolist") else array


CASES = [
    (lambda: tt.strings.unicode_encode([104, 233, 8364, 128512], "UTF-8"), EMOJI.encode()),
    (lambda: tt.strings.unicode_encode([104, 233, 8364, 128512], "UTF-16-BE"), b"\x00h\x00\xe9 \xac\xd8=\xde\x00"),
    (lambda: tt.strings.unicode_encode([104, 233], "UTF-32-BE"), b"\x00\x00\x00h\x00\x00\x00\xe9"),
    (lambda: tt.strings.unicode_encode([[104, 105], [106, 107]], "UTF-8"), [b"hi", b"jk"]),
    (lambda: tt.strings.unicode_encode(tt.ragged.constant([[104, 105], [], [106]]), "UTF-8"), [b"hi", b"", b"j"]),
    (lambda: tt.strings.unicode_encode(tt.ragged.constant([[[104, 105], [33]], [[106]]]), "UTF-8"), [[b"hi", b"!"], [b"j"]]),
    (lambda: tt.strings.unicode_encode([104, 0x110000, -1, 0xD800, 105], "UTF-8"), b"h" + "\ufffd".encode() * 3 + b"i"),
    (lambda: tt.strings.unicode_encode([104, 0x110000, 105], "UTF-8", replacement_char=63), b"h?i"),
    (lambda: tt.strings.unicode_encode([104, 0x110000, 105], "UTF-8", errors="ignore"), b"hi"),
    (lambda: tt.strings.unicode_encode(tt.constant([], tt.int32), "UTF-8"), b""),
    (lambda: tt.strings.unicode_transcode([EMOJI[:3].encode(), b"a\xffb"], "UTF-8", "UTF-16-BE"), [b"\x00h\x00\xe9 \xac", b"\x00a\xff\xfd\x00b"]),
    (lambda: tt.strings.unicode_transcode([b"a\xffb\x01"], "UTF-8", "UTF-8", replacement_char=63, replace_control_characters=True), [b"a?b?"]),
    (lambda: tt.strings.unicode_transcode([b"a\xffb"], "UTF-8", "UTF-8", errors="ignore"), [b"ab"]),
    (lambda: tt.strings.unicode_transcode([b"h\xe9"], "ISO-8859-1", "UTF-8"), [b"h\xc3\xa9"]),
    (lambda: tt.strings.unicode_decode_with_offsets([EMOJI.encode(), b"a\xe2\x82b\xff"], "UTF-8"), [[[104, 233, 8364, 128512], [97, 65533, 98, 65533]], [[0, 1, 3, 6], [0, 1, 3, 4]]]),
    (lambda: tt.strings.unicode_decode_with_offsets("h\u00e9\U0001f600".encode("utf-16-be"), "UTF-16-BE"), [[104, 233, 128512], [0, 2, 4]]),
    (lambda: tt.strings.unicode_decode_with_offsets(b"a\xffb", "UTF-8", errors="ignore"), [[97, 98], [0, 2]]),
    (lambda: tt.strings.unicode_split_with_offsets(["h\u00e9".encode(), b"a\xffb"], "UTF-8"), [[[b"h", b"\xc3\xa9"], [b"a", b"\xef\xbf\xbd", b"b"]], [[0, 1], [0, 1, 2]]]),
    (lambda: tt.strings.unicode_split(["h\U0001f600".encode("utf-16-be")], "UTF-16-BE"), [[b"\x00h", b"\xd8=\xde\x00"]]),
    (lambda: tt.strings.unicode_split(b"\x00h\xd8\x00", "UTF-16-BE", replacement_char=63), [b"\x00h", b"\x00?"]),
    (lambda: tt.strings.unicode_decode(b"a\x01b\x1f\x7f", "UTF-8", replace_control_characters=True), [97, 65533, 98, 65533, 127]),
    (lambda: tt.strings.unicode_decode(b"a\x01b\x1f\x7f", "UTF-8", replace_control_characters=True, replacement_char=32), [97, 32, 98, 32, 127]),
    (lambda: tt.strings.unicode_decode(b"a\xffb\xe2\x82", "UTF-8", replacement_char=63), [97, 63, 98, 63]),
    (lambda: tt.strings.unicode_decode("h\u00e9".encode("latin1"), "ISO-8859-1"), [104, 233]),
]  # fmt: skip


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_unicode_functions_give_tensorflows_values(case, traced):
    call, want = CASES[case]
    assert _listed(tt.function(call)() if traced else call()) == want


def test_dtypes_are_tensorflows():
    points, offsets = tt.strings.unicode_decode_with_offsets(b"ab", "UTF-8")
    assert points.dtype == tt.int32 and offsets.dtype == tt.int64
    assert tt.strings.unicode_encode([97], "UTF-8").dtype == tt.string


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: tt.strings.unicode_encode([104, 0x110000], "UTF-8", errors="strict"), tt.errors.InvalidArgumentError, "out of range for Unicode"),
        (lambda: tt.strings.unicode_encode([104], "ISO-8859-1"), tt.errors.InvalidArgumentError, "output_encoding must be one of UTF-8, UTF-16-BE, UTF-32-BE"),
        (lambda: tt.strings.unicode_encode(104, "UTF-8"), ValueError, "rank must be at least 1"),
        (lambda: tt.strings.unicode_transcode([b"a\xffb"], "UTF-8", "UTF-8", errors="strict"), tt.errors.InvalidArgumentError, "invalid UTF-8"),
        (lambda: tt.strings.unicode_decode(b"a\xff", "UTF-8", errors="strict"), tt.errors.InvalidArgumentError, "invalid UTF-8"),
        (lambda: tt.strings.unicode_decode(b"a", "NOPE-9"), tt.errors.InvalidArgumentError, "converter for the encoding 'NOPE-9'"),
        (lambda: tt.strings.unicode_decode(b"a", "UTF-8", errors="bogus"), tt.errors.InvalidArgumentError, "errors must be one of"),
        (lambda: tt.strings.unicode_decode(b"a", "UTF-8", replacement_char=0xD800), tt.errors.InvalidArgumentError, "not a Unicode character"),
    ],
)  # fmt: skip
def test_unicode_functions_refuse_what_tensorflow_refuses(call, error, message):
    with pytest.raises(error, match=message):
        call()
