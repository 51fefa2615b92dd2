"""`tt.strings`: TensorFlow's `tf.strings` on tt.string tensors (docs/strings.md)."""

from tracer.ops.string_hashes import to_hash_bucket_fast, to_hash_bucket_strong  # noqa: F401
from tracer.ops.string_ngrams import ngrams  # noqa: F401
from tracer.ops.string_ops import (  # noqa: F401
    as_string,
    format,
    join,
    length,
    lower,
    reduce_join,
    regex_full_match,
    regex_replace,
    strip,
    substr,
    to_number,
    upper,
)
from tracer.ops.string_splits import bytes_split, split  # noqa: F401
from tracer.ops.unicode_strings import (  # noqa: F401
    unicode_decode,
    unicode_decode_with_offsets,
    unicode_encode,
    unicode_split,
    unicode_split_with_offsets,
    unicode_transcode,
)
