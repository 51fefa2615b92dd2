"""Writes this folder's TFRecord files with TensorFlow, and prints what TensorFlow gives for
them, which tests/test_tfrecord.py holds tracer to (run with TensorFlow installed, from this
folder: `python make_tf_records.py`)."""

import sys

import numpy as np

try:
    import tensorflow as tf
except ImportError:
    sys.exit("make_tf_records.py runs where TensorFlow 2.21 is installed")

F, Ints, Fl, B = tf.train.Feature, tf.train.Int64List, tf.train.FloatList, tf.train.BytesList


def examples():
    """Four Examples: every kind of list, negative and large int64s, float32 rounding, bytes
    that are not UTF-8, an empty list, a Feature of no kind, a missing feature."""
    rows = [
        {"id": F(int64_list=Ints(value=[7])), "xy": F(float_list=Fl(value=[0.5, -1.25])),
         "tag": F(bytes_list=B(value=[b"first"])), "tokens": F(int64_list=Ints(value=[1, 2, 3]))},
        {"id": F(int64_list=Ints(value=[-3])), "xy": F(float_list=Fl(value=[0.1, 1e20])),
         "tag": F(bytes_list=B(value=[b"\x00\xff\n"])), "tokens": F(int64_list=Ints())},
        {"id": F(int64_list=Ints(value=[2**62])), "tag": F(),
         "tokens": F(int64_list=Ints(value=[-1, 300]))},
        {"id": F(int64_list=Ints(value=[0])), "xy": F(float_list=Fl(value=[3.0, -0.0]))},
    ]  # fmt: skip
    return [tf.train.Example(features=tf.train.Features(feature=row)) for row in rows]


def main():
    records = [e.SerializeToString(deterministic=True) for e in examples()]
    for name, options in [("examples", None), ("examples_gzip", "GZIP"), ("examples_zlib", "ZLIB")]:
        with tf.io.TFRecordWriter(f"{name}.tfrecord", options) as writer:
            for record in records:
                writer.write(record)
    print("records (hex):", [r.hex() for r in records])
    features = {
        "id": tf.io.FixedLenFeature([], tf.int64),
        "xy": tf.io.FixedLenFeature([2], tf.float32, default_value=[9.0, 9.0]),
        "tag": tf.io.FixedLenFeature([], tf.string, default_value="none"),
        "tokens": tf.io.VarLenFeature(tf.int64),
    }
    parsed = tf.io.parse_example(list(tf.data.TFRecordDataset("examples.tfrecord")), features)
    for key in ("id", "xy", "tag"):
        print(key, parsed[key].numpy().tolist())
    tokens = parsed["tokens"]
    print("tokens indices", tokens.indices.numpy().tolist())
    print("tokens values", tokens.values.numpy().tolist())
    print("tokens dense_shape", tokens.dense_shape.numpy().tolist())
    print(np.float32(0.1).item(), np.float32(1e20).item())


if __name__ == "__main__":
    main()
