"""`tt.io`: TensorFlow's `tf.io` functions tracer has."""

from tracer.ops.base64_ops import decode_base64, encode_base64  # noqa: F401
from tracer.ops.csv_decode import decode_csv  # noqa: F401
from tracer.ops.example_parsing import parse_example, parse_single_example  # noqa: F401
from tracer.ops.png_codec import decode_image, decode_png, encode_png  # noqa: F401
from tracer.ops.string_ops import read_file, write_file  # noqa: F401
from tracer.ops.string_splits import decode_raw  # noqa: F401
from tracer.parsing_config import (  # noqa: F401
    FixedLenFeature,
    FixedLenSequenceFeature,
    RaggedFeature,
    VarLenFeature,
)
from tracer.records.compression import TFRecordOptions  # noqa: F401
from tracer.records.writer import TFRecordWriter  # noqa: F401
from tracer.tensor_protos import parse_tensor, serialize_tensor  # noqa: F401
