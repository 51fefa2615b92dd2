"""The string ops (tracer/ops/string_ops.py): none has a gradient. Each case turns its float64
argument into text with tt.strings.as_string and measures what the op made; the values
themselves are checked against TensorFlow's outputs in tests/test_strings.py."""

import tracer as tt
from tracer.ops import token_ops

# the characters of as_string's text: digits, a point, a sign
_CHARACTERS = token_ops.TokenTable([b"0", b".", b"-"], 1, 0)


def _length(strings):
    return tt.cast(tt.strings.length(strings), tt.float64)


def _text(x):
    return tt.strings.as_string(x)


NO_GRADIENT = {
    "as_string": lambda x: _length(_text(x)),
    "string_length": lambda x: _length(_text(x)) * 2.0,
    "string_join": lambda x: _length(tt.strings.join([_text(x), _text(x)], separator="-")),
    "reduce_join": lambda x: _length(tt.strings.reduce_join(_text(x), separator=",")),
    "substr": lambda x: _length(tt.strings.substr(_text(x), 0, 3)),
    # an empty record parses to the feature's default
    "parse_example": lambda x: tt.cast(
        tt.io.parse_example(
            tt.strings.substr(_text(x), 0, 0),
            {"v": tt.io.FixedLenFeature([], tt.float32, default_value=1.5)},
        )["v"],
        tt.float64,
    ),
    "string_upper": lambda x: _length(tt.strings.upper(_text(x))),
    "string_lower": lambda x: _length(tt.strings.lower(_text(x))),
    "string_strip": lambda x: _length(tt.strings.strip(_text(x))),
    "regex_full_match": lambda x: tt.cast(tt.strings.regex_full_match(_text(x), "-.*"), tt.float64),
    "regex_replace": lambda x: _length(tt.strings.regex_replace(_text(x), "0", "")),
    "string_to_number": lambda x: tt.strings.to_number(_text(x), tt.float64),
    "string_format": lambda x: _length(tt.strings.format("x = {}", x)),
    "string_lookup": lambda x: tt.cast(token_ops.lookup(_text(x), _CHARACTERS), tt.float64),
    "split_tokens": lambda x: tt.reduce_sum(
        _length(token_ops.split_tokens(tt.strings.join([_text(x), "a b"], " "), "whitespace", 2)),
        axis=-1,
    ),
    "read_file": lambda x: _length(
        tt.io.read_file(tt.strings.regex_replace(_text(x), ".+", __file__.replace("\\", "/")))
    ),
    "encode_base64": lambda x: _length(tt.io.encode_base64(_text(x))),
    "decode_base64": lambda x: _length(
        tt.io.decode_base64(tt.io.encode_base64(_text(x), pad=True))
    ),
    "encode_png": lambda x: _length(
        tt.io.encode_png(tt.cast(tt.reshape(tt.abs(x) * 50.0, (1, 3, 1)), tt.uint8))
    ),
    "to_hash_bucket_fast": lambda x: tt.cast(
        tt.strings.to_hash_bucket_fast(_text(x), 7), tt.float64
    ),
    "to_hash_bucket_strong": lambda x: tt.cast(
        tt.strings.to_hash_bucket_strong(_text(x), 7, key=[3, 5]), tt.float64
    ),
    "decode_csv": lambda x: tt.io.decode_csv(
        tt.strings.join([_text(x), _text(x * 2.0)], separator=","), [[0.0], [0.0]]
    )[1],
    "token_counts": lambda x: tt.cast(
        token_ops.token_counts(_text(x), "character", _CHARACTERS, 4)[..., 1], tt.float64
    ),
}
