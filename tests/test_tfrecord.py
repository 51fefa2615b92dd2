"""TFRecord files and tf.train.Example, against TensorFlow 2.21's bytes, values and errors
(tensorflow-cpu 2.21.0 with its protobuf 7.36 (upb), Linux x86-64, Python 3.11).

tests/data/tfrecord/ holds files TensorFlow wrote (its README and make_tf_records.py say
how); the hex strings and values quoted below are what TensorFlow printed for the code
beside them, run on this machine (2026-12-07)."""

import gzip
import os
import struct
import zlib

import numpy as np
import pytest

import tracer as tt
from tracer.protos import map_order
from tracer.protos.wire import DecodeError
from tracer.records import crc32c
from tracer.records.framing import frame, masked_crc32c

DATA = os.path.join(os.path.dirname(__file__), "data", "tfrecord")
F, Ints, Fl, B = tt.train.Feature, tt.train.Int64List, tt.train.FloatList, tt.train.BytesList

# make_tf_records.py's four records (tf.train.Example.SerializeToString(deterministic=True))
TF_RECORDS = [
    "0a460a0b0a02696412051a030a01070a100a0374616712090a070a0566697273740a110a06746f6b656e7312"
    "071a050a030102030a120a027879120c120a0a080000003f0000a0bf",
    "0a480a140a026964120e1a0c0a0afdffffffffffffffff010a0e0a0374616712070a050a0300ff0a0a0c0a06"
    "746f6b656e7312021a000a120a027879120c120a0a08cdcccc3dec78ad60",
    "0a3a0a130a026964120d1a0b0a098080808080808080400a070a0374616712000a1a0a06746f6b656e731210"
    "1a0e0a0cffffffffffffffffff01ac02",
    "0a210a0b0a02696412051a030a01000a120a027879120c120a0a080000404000000080",
]
FEATURES = {
    "id": tt.io.FixedLenFeature([], tt.int64),
    "xy": tt.io.FixedLenFeature([2], tt.float32, default_value=[9.0, 9.0]),
    "tag": tt.io.FixedLenFeature([], tt.string, default_value="none"),
    "tokens": tt.io.VarLenFeature(tt.int64),
}


def _tracer_examples():
    """make_tf_records.py's examples, built with tracer."""
    rows = [
        {"id": F(int64_list=Ints(value=[7])), "xy": F(float_list=Fl(value=[0.5, -1.25])),
         "tag": F(bytes_list=B(value=[b"first"])), "tokens": F(int64_list=Ints(value=[1, 2, 3]))},
        {"id": F(int64_list=Ints(value=[-3])), "xy": F(float_list=Fl(value=[0.1, 1e20])),
         "tag": F(bytes_list=B(value=[b"\x00\xff\n"])), "tokens": F(int64_list=Ints())},
        {"id": F(int64_list=Ints(value=[2**62])), "tag": F(),
         "tokens": F(int64_list=Ints(value=[-1, 300]))},
        {"id": F(int64_list=Ints(value=[0])), "xy": F(float_list=Fl(value=[3.0, -0.0]))},
    ]  # fmt: skip
    return [tt.train.Example(features=tt.train.Features(feature=row)) for row in rows]


# --- tf.train.Example --------------------------------------------------------------------------


def test_examples_serialize_to_tensorflows_bytes():
    """Every kind of list (packed int64s and floats, bytes, empty ones, a Feature of no
    kind), the map's entries in upb's deterministic order."""
    ours = [e.SerializeToString().hex() for e in _tracer_examples()]
    assert ours == TF_RECORDS


@pytest.mark.parametrize(
    "example, tf_hex",
    [
        (  # int64s packed as 10-byte varints where negative
            tt.train.Example(
                features=tt.train.Features(
                    feature={"v": F(int64_list=Ints(value=[-1, 0, 1, 127, 128, 2**63 - 1]))}
                )
            ),  # fmt: skip
            "0a230a210a0176121c1a1a0a18ffffffffffffffffff0100017f8001ffffffffffffffff7f",
        ),
        (  # floats rounded to float32, inf, nan, a denormal
            tt.train.Example(
                features=tt.train.Features(
                    feature={
                        "f": F(float_list=Fl(value=[1 / 3, float("inf"), float("nan"), 1e-45]))
                    }
                )
            ),  # fmt: skip
            "0a1b0a190a0166121412120a10abaaaa3e0000807f0000c07f01000000",
        ),
        (
            tt.train.Example(
                features=tt.train.Features(
                    feature={"b": F(bytes_list=B(value=[b"", b"\x00\xff", "é".encode()]))}
                )
            ),  # fmt: skip
            "0a130a110a0162120c0a0a0a000a0200ff0a02c3a9",
        ),
        (  # map keys that start one another: "ab" before "a", "" last
            tt.train.Features(feature={k: F() for k in ["a", "ab", "b", ""]}),
            "0a060a02616212000a050a016112000a050a016212000a040a001200",
        ),
        (
            tt.train.SequenceExample(
                context=tt.train.Features(feature={"c": F(int64_list=Ints(value=[5]))}),
                feature_lists=tt.train.FeatureLists(
                    feature_list={
                        "toks": tt.train.FeatureList(
                            feature=[
                                F(int64_list=Ints(value=[1, 2])),
                                F(int64_list=Ints(value=[3])),
                            ]
                        ),
                        "w": tt.train.FeatureList(),
                    }
                ),
            ),
            "0a0c0a0a0a016312051a030a010512200a170a04746f6b73120f0a061a040a0201020a051a030a0103"
            "0a050a01771200",
        ),
    ],
)
def test_messages_serialize_to_tensorflows_bytes_and_read_back(example, tf_hex):
    assert example.SerializeToString().hex() == tf_hex
    back = type(example).FromString(bytes.fromhex(tf_hex))
    assert back.SerializeToString().hex() == tf_hex
    if "nan" not in str(example):
        assert back == example


def test_repr_is_tensorflows_text_format():
    """TensorFlow's str of the float and bytes examples above, and of a map whose keys
    start one another (upb's order: "" first, then the reverse of the bytes' order, a key
    before those it starts)."""
    floats = tt.train.Example(features=tt.train.Features(feature={"f": F(float_list=Fl(value=[1 / 3, float("inf"), float("nan"), 1e-45]))}))  # fmt: skip
    assert str(floats) == (
        'features {\n  feature {\n    key: "f"\n    value {\n      float_list {\n        value: '
        "0.333333343\n        value: inf\n        value: nan\n        value: 1.4013e-45\n      }\n"
        "    }\n  }\n}\n"
    )
    data = tt.train.Example(features=tt.train.Features(feature={"b": F(bytes_list=B(value=[b"", b"\x00\xff", "é".encode()]))}))  # fmt: skip
    assert repr(data) == (
        'features {\n  feature {\n    key: "b"\n    value {\n      bytes_list {\n        value: ""'
        '\n        value: "\\000\\377"\n        value: "\\303\\251"\n      }\n    }\n  }\n}\n'
    )
    keys = tt.train.Features(feature={k: F() for k in ["a", "ab", "b", ""]})
    assert str(keys) == (
        'feature {\n  key: ""\n  value {\n  }\n}\nfeature {\n  key: "b"\n  value {\n  }\n}\n'
        'feature {\n  key: "a"\n  value {\n  }\n}\nfeature {\n  key: "ab"\n  value {\n  }\n}\n'
    )
    assert map_order.text(["a", "ab", "b", ""]) == ["", "b", "a", "ab"]
    assert repr(tt.train.Example()) == "" and str(F(int64_list=Ints())) == "int64_list {\n}\n"


def test_fields_behave_as_protobufs():
    """What TensorFlow's protobuf did for the same calls: reading a missing map key makes it
    and sets the messages above it; a oneof keeps the last member set; values are checked
    and float32-rounded; fields cannot be assigned."""
    example = tt.train.Example()
    assert not example.HasField("features")
    example.features.feature["a"].int64_list.value.append(3)
    assert example.SerializeToString().hex() == "0a0c0a0a0a016112051a030a0103"
    reading = tt.train.Example()
    _ = reading.features.feature
    assert not reading.HasField("features") and reading.SerializeToString() == b""
    _ = reading.features.feature["k"]
    assert (
        reading.HasField("features") and reading.SerializeToString().hex() == "0a070a050a016b1200"
    )

    feature = F(int64_list=Ints(value=[1]), float_list=Fl(value=[2.0]))
    assert feature.WhichOneof("kind") == "float_list" and not feature.HasField("int64_list")
    assert Fl(value=[0.1]).value == [0.10000000149011612]
    assert Fl(value=[1e300]).value == [float("inf")]
    assert Ints(value=np.array([1, 2], np.int32)).value == [1, 2]
    with pytest.raises(ValueError, match="Value out of range: 9223372036854775808"):
        Ints(value=[2**63])
    with pytest.raises(TypeError, match="Expected an int, got a boolean"):
        Ints(value=[True])
    with pytest.raises(TypeError, match="expected bytes, str found"):
        B(value=["text"])
    with pytest.raises(AttributeError, match='Assignment not allowed to message field "features"'):
        tt.train.Example().features = tt.train.Features()
    with pytest.raises(ValueError, match='has no "values" field'):
        Ints(values=[1])
    with pytest.raises(ValueError, match="may not be assigned"):
        tt.train.Features().feature["a"] = F()
    with pytest.raises(TypeError, match="unhashable"):
        hash(Ints())
    nested = tt.train.Example(features={"feature": {"a": {"float_list": {"value": [1.0]}}}})
    assert nested.features.feature["a"].float_list.value == [1.0]


def test_from_string_reads_what_protobuf_reads():
    """Unpacked int64s are read as packed ones; a repeated key keeps its last entry; an
    unknown field is kept and written last (TensorFlow re-serialized 0a01071005 from
    10050a0107); malformed bytes are a DecodeError."""
    unpacked = bytes.fromhex("0a0e0a0c0a02696412061a04" + "0801" + "0802")
    example = tt.train.Example.FromString(unpacked)
    assert example.features.feature["id"].int64_list.value == [1, 2]
    assert example.SerializeToString().hex() == "0a0e0a0c0a02696412061a040a020102"
    twice = bytes.fromhex(TF_RECORDS[3]) + bytes.fromhex(TF_RECORDS[0])
    assert tt.train.Example.FromString(twice).features.feature["id"].int64_list.value == [7]
    kept = tt.train.Int64List.FromString(bytes.fromhex("10050a0107"))
    assert kept.value == [7] and kept.SerializeToString().hex() == "0a01071005"
    for bad in (b"\xff", b"\x0a\x05ab"):
        with pytest.raises(DecodeError, match="Error parsing message with type 'tensorflow.Example'"):  # fmt: skip
            tt.train.Example.FromString(bad)


# --- TFRecord files ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, compression", [("examples", None), ("examples_gzip", "GZIP"), ("examples_zlib", "ZLIB")]
)
def test_files_tensorflow_wrote_are_read_and_written_again_byte_for_byte(tmp_path, name, compression):  # fmt: skip
    """TensorFlow's files read back as its records; tracer's writer makes the same bytes
    (GZIP and ZLIB with zlib's defaults, as TensorFlow's)."""
    path = os.path.join(DATA, f"{name}.tfrecord")
    records = [r.numpy() for r in tt.data.TFRecordDataset(path, compression_type=compression)]
    assert [r.hex() for r in records] == TF_RECORDS
    ours = tmp_path / "ours.tfrecord"
    with tt.io.TFRecordWriter(str(ours), compression) as writer:
        for record in records:
            writer.write(record)
    with open(path, "rb") as theirs:
        assert ours.read_bytes() == theirs.read()
    assert list(tt.compat.v1.io.tf_record_iterator(path, compression)) == records


def test_parsed_values_equal_tensorflows():
    """What tf.io.parse_example gave for TensorFlow's file (make_tf_records.py printed it):
    defaults where a feature is missing or of no kind, VarLenFeature's SparseTensor."""
    raw = tt.data.TFRecordDataset(os.path.join(DATA, "examples.tfrecord"))
    parsed = tt.io.parse_example(tt.constant([r.numpy() for r in raw]), FEATURES)
    assert list(parsed) == ["tokens", "id", "tag", "xy"]  # sparse first, then dense, each sorted
    assert parsed["id"].numpy().tolist() == [7, -3, 4611686018427387904, 0]
    assert parsed["xy"].numpy().tolist() == [
        [0.5, -1.25],
        [0.10000000149011612, 1.0000000200408773e20],
        [9.0, 9.0],
        [3.0, -0.0],
    ]
    assert parsed["tag"].numpy().tolist() == [b"first", b"\x00\xff\n", b"none", b"none"]
    tokens = parsed["tokens"]
    assert tokens.indices.numpy().tolist() == [[0, 0], [0, 1], [0, 2], [2, 0], [2, 1]]
    assert tokens.values.numpy().tolist() == [1, 2, 3, -1, 300]
    assert tokens.dense_shape.numpy().tolist() == [4, 3]
    single = tt.io.parse_single_example(bytes.fromhex(TF_RECORDS[0]), FEATURES)
    assert single["tokens"].indices.numpy().tolist() == [[0], [1], [2]]
    assert single["xy"].shape == (2,) and single["id"].numpy() == 7


def test_round_trips_with_every_compression(tmp_path):
    records = [b"", b"one", os.urandom(3000), b"x" * 100_000]
    for compression in (None, "", "GZIP", "ZLIB", tt.io.TFRecordOptions(compression_type="GZIP")):
        path = str(tmp_path / "rows.tfrecord")
        with tt.io.TFRecordWriter(path, compression) as writer:
            for record in records:
                writer.write(record)
        kind = tt.io.TFRecordOptions.get_compression_type_string(compression)
        read = tt.data.TFRecordDataset(path, compression_type=kind)
        assert [r.numpy() for r in read] == records
    assert gzip.decompress(open(path, "rb").read())[:8] == struct.pack("<Q", 0)


def _record_file(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def _error_of(path, compression=None):
    with pytest.raises(tt.errors.DataLossError) as raised:
        list(tt.data.TFRecordDataset(path, compression_type=compression))
    return raised.value.message


def test_damaged_files_raise_tensorflows_data_loss_errors(tmp_path):
    """TensorFlow's messages for the same damage to a file of the records b"hello", b"" and
    b"x" * 10 (at offsets 0, 21 and 37): a record cut short, a wrong CRC of a length (the
    first: "Is this even a TFRecord file?") or of data, compressed data that is not; a
    header cut short just ends the file, as there."""
    raw = frame(b"hello") + frame(b"") + frame(b"x" * 10)
    cut = _record_file(tmp_path, "cut", raw[:-3])
    assert _error_of(cut) == "truncated record at 37' failed with Read less bytes than requested"
    assert [r.numpy() for r in tt.data.TFRecordDataset(_record_file(tmp_path, "h", raw[:-21]))] == [b"hello", b""]  # fmt: skip
    flipped = bytearray(raw)
    flipped[14] ^= 1
    assert _error_of(_record_file(tmp_path, "data", bytes(flipped))) == "corrupted record at 12"
    flipped = bytearray(raw)
    flipped[0] ^= 1
    assert _error_of(_record_file(tmp_path, "length", bytes(flipped))) == (
        "corrupted record at 0 (Is this even a TFRecord file?)"
    )
    flipped = bytearray(raw)
    flipped[37] ^= 1
    assert _error_of(_record_file(tmp_path, "second", bytes(flipped))) == "corrupted record at 37"
    assert _error_of(_record_file(tmp_path, "raw", raw), "GZIP") == (
        "inflate() failed with error -3: incorrect header check"
    )
    squeezed = gzip.compress(raw, mtime=0)
    assert _error_of(_record_file(tmp_path, "gz", squeezed[:-10]), "GZIP") == (
        "truncated record at 37' failed with EOF reached"
    )
    damaged = bytearray(squeezed)
    damaged[20] ^= 0xFF
    assert _error_of(_record_file(tmp_path, "bad", bytes(damaged)), "GZIP") == (
        "inflate() failed with error -3: incorrect data check"
    )
    two = _record_file(tmp_path, "two", squeezed + squeezed)  # gzip members, one after another
    assert len(list(tt.data.TFRecordDataset(two, compression_type="GZIP"))) == 6
    with pytest.raises(tt.errors.NotFoundError, match="nope.tfrecord; No such file or directory"):
        list(tt.data.TFRecordDataset(str(tmp_path / "nope.tfrecord")))


def test_a_damaged_length_costs_no_more_memory_than_the_file_holds(tmp_path):
    """A length of 2**62 whose CRC is right (made so): the reader reads what there is, a
    chunk at a time, and finds the record cut short."""
    length = struct.pack("<Q", 2**62)
    forged = length + struct.pack("<I", masked_crc32c(length)) + b"abc"
    assert _error_of(_record_file(tmp_path, "forged", forged)) == (
        "truncated record at 0' failed with Read less bytes than requested"
    )
    zipped = zlib.compress(forged)
    assert _error_of(_record_file(tmp_path, "forged_z", zipped), "ZLIB") == (
        "truncated record at 0' failed with EOF reached"
    )


def test_the_writer_and_the_dataset_take_tensorflows_arguments(tmp_path):
    path = str(tmp_path / "a.tfrecord")
    writer = tt.io.TFRecordWriter(path)
    writer.write("text")  # (a str is written as its UTF-8)
    writer.flush()
    assert os.path.getsize(path) == 20
    writer.close()
    writer.close()
    with pytest.raises(tt.errors.FailedPreconditionError, match="Writer is closed."):
        writer.write(b"more")
    with pytest.raises(ValueError, match='Not a valid compression_type: "BZ2"'):
        tt.io.TFRecordWriter(path, "BZ2")
    with pytest.raises(tt.errors.NotFoundError):
        tt.io.TFRecordWriter(str(tmp_path / "no" / "folder"))
    names = tt.data.Dataset.from_tensor_slices([path, path])
    both = tt.data.TFRecordDataset(names, num_parallel_reads=2)
    assert [r.numpy() for r in both] == [b"text", b"text"]
    raw = tt.data.TFRecordDataset([path], buffer_size=1 << 20)
    assert repr(raw) == (
        "<TFRecordDatasetV2 element_spec=TensorSpec(shape=(), dtype=tt.string, name=None)>"
    )
    assert int(raw.cardinality()) == tt.data.UNKNOWN_CARDINALITY
    with pytest.raises(TypeError):
        len(raw)


def test_crc32c_in_numpy_equals_the_byte_loop():
    rng = np.random.default_rng(7)
    for size in (4, 127, 128, 1023, 1024, 1025, 5000):
        data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
        assert crc32c._crc_numpy(data) == crc32c._crc_bytes(data), size
    assert crc32c.crc32c(b"123456789") == 0xE3069283


# --- parsing -------------------------------------------------------------------------------


def test_parse_errors_are_tensorflows():
    one = bytes.fromhex(TF_RECORDS[0])  # id [7], xy [0.5, -1.25], tag, tokens [1, 2, 3]
    cases = [
        ({"nope": tt.io.FixedLenFeature([], tt.int64)}, True,
         "Feature: nope (data type: int64) is required but could not be found."),
        ({"nope": tt.io.FixedLenFeature([], tt.int64)}, False,
         "Name: <unknown>, Feature: nope (data type: int64) is required but could not be found."),
        ({"tokens": tt.io.FixedLenFeature([2], tt.int64)}, True,
         "Key: tokens.  Can't parse serialized Example: Some int64_list slice was not parsed."),
        ({"tokens": tt.io.FixedLenFeature([2], tt.int64)}, False,
         "Name: <unknown>, Key: tokens, Index: 0.  Number of int64 values != expected.  Values "
         "size: 3 but output shape: [2]"),
        ({"id": tt.io.FixedLenFeature([], tt.float32)}, True,
         "Key: id.  Data types don't match. Data type: int64 but expected type: float"),
        ({"id": tt.io.VarLenFeature(tt.string)}, False,
         "Name: <unknown>, Key: id, Index: 0.  Data types don't match. Expected type: string, "
         "Actual type: int64"),
    ]  # fmt: skip
    for features, single, message in cases:
        with pytest.raises(tt.errors.InvalidArgumentError) as raised:
            if single:
                tt.io.parse_single_example(one, features)
            else:
                tt.io.parse_example([one], features)
        assert raised.value.message == message
    with pytest.raises(tt.errors.InvalidArgumentError, match="Could not parse example input"):
        tt.io.parse_single_example(b"\x0a\x05abc", {"id": tt.io.FixedLenFeature([], tt.int64)})
    with pytest.raises(ValueError, match="Input serialized must be a scalar"):
        tt.io.parse_single_example([one], {"id": tt.io.FixedLenFeature([], tt.int64)})
    with pytest.raises(ValueError, match="First dimension of shape for feature xy unknown"):
        tt.io.parse_single_example(one, {"xy": tt.io.FixedLenFeature([None], tt.float32)})
    with pytest.raises(tt.errors.InvalidArgumentError, match="'Tdense' of int32"):
        tt.io.parse_single_example(one, {"id": tt.io.FixedLenFeature([], tt.int32)})


def test_sequence_and_ragged_features_as_tensorflow_gives_them():
    """TensorFlow's values for the same calls on records 0 and 2 (tokens [1, 2, 3] and
    [-1, 300]; xy [0.5, -1.25] and none)."""
    records = [bytes.fromhex(TF_RECORDS[0]), bytes.fromhex(TF_RECORDS[2])]
    features = {
        "tokens": tt.io.FixedLenSequenceFeature([], tt.int64, allow_missing=True),
        "xy": tt.io.FixedLenSequenceFeature(
            [2], tt.float32, allow_missing=True, default_value=-1.0
        ),  # fmt: skip
        "r": tt.io.RaggedFeature(tt.int64, value_key="tokens"),
    }
    parsed = tt.io.parse_example(records, features)
    assert parsed["tokens"].numpy().tolist() == [[1, 2, 3], [-1, 300, 0]]
    assert parsed["xy"].numpy().tolist() == [[[0.5, -1.25]], [[-1.0, -1.0]]]
    assert parsed["r"].to_list() == [[1, 2, 3], [-1, 300]]
    single = tt.io.parse_single_example(records[1], features)
    assert single["xy"].shape == (0, 2) and single["r"].numpy().tolist() == [-1, 300]


# benchmarks/held_out/data_pipelines.py's tfrecord lines for TensorFlow (its elements' values
# shown as lists here, and the card and len lines left out)
HELD_OUT_TF = """\
tfrecord_write: size 198
tfrecord_parsed: spec {id: TensorSpec([], int64), tag: TensorSpec([], string), xy: TensorSpec([2], float32)}
tfrecord_parsed:   {id: 0, tag: b't0', xy: [0.0, 0.0]}
tfrecord_parsed:   {id: 1, tag: b't1', xy: [0.5, -1.0]}
tfrecord_parsed:   {id: 2, tag: b't2', xy: [1.0, -2.0]}
tfrecord_batch_parse: spec {id: TensorSpec([None], int64), tag: TensorSpec([None], string), xy: TensorSpec([None, 2], float32)}
tfrecord_batch_parse:   {id: [0, 1], tag: [b't0', b't1'], xy: [[0.0, 0.0], [0.5, -1.0]]}
tfrecord_batch_parse:   {id: [2], tag: [b't2'], xy: [[1.0, -2.0]]}
"""


def _spec_line(specs):
    """An element_spec as the held-out program prints it."""
    shown = []
    for key in sorted(specs):
        dims = [None if d is None else int(d) for d in specs[key].shape]
        shown.append(f"{key}: TensorSpec({dims}, {specs[key].dtype.name})")
    return "{" + ", ".join(shown) + "}"


def test_the_held_out_pipeline_cases_give_tensorflows_lines(tmp_path):
    """benchmarks/held_out/data_pipelines.py's tfrecord_write and tfrecord_read: three
    Examples written, read back, parsed one at a time and two at a time in Dataset.map
    (traced: the specs are known without reading a record)."""
    path = str(tmp_path / "rows.tfrecord")
    with tt.io.TFRecordWriter(path) as writer:
        for i in range(3):
            feature = {
                "id": F(int64_list=Ints(value=[i])),
                "xy": F(float_list=Fl(value=[i * 0.5, -i])),
                "tag": F(bytes_list=B(value=[f"t{i}".encode()])),
            }
            example = tt.train.Example(features=tt.train.Features(feature=feature))
            writer.write(example.SerializeToString())
    lines = [f"tfrecord_write: size {os.path.getsize(path)}"]
    raw = tt.data.TFRecordDataset(path)
    desc = {
        "id": tt.io.FixedLenFeature([], tt.int64),
        "xy": tt.io.FixedLenFeature([2], tt.float32),
        "tag": tt.io.FixedLenFeature([], tt.string, default_value=""),
    }
    for name, parsed in [
        ("tfrecord_parsed", raw.map(lambda r: tt.io.parse_single_example(r, desc))),
        ("tfrecord_batch_parse", raw.batch(2).map(lambda r: tt.io.parse_example(r, desc))),
    ]:
        lines.append(f"{name}: spec {_spec_line(parsed.element_spec)}")
        for element in parsed:
            values = [f"{k}: {np.asarray(element[k].numpy()).tolist()}" for k in sorted(element)]
            lines.append(f"{name}:   {{{', '.join(values)}}}")
    assert "\n".join(lines) + "\n" == HELD_OUT_TF


def test_parsing_compiles_and_runs_in_every_backend():
    """FixedLenFeatures are nodes of the graph (one per feature), run from compiled code;
    a VarLenFeature's size is known only from the examples: the function runs as Python."""
    records = tt.constant([bytes.fromhex(r) for r in TF_RECORDS])
    dense = {k: v for k, v in FEATURES.items() if k != "tokens"}
    for backend in ("c", "interpreter"):
        step = tt.function(lambda r: tt.io.parse_example(r, dense)["xy"] * 2.0, backend=backend)
        assert step(records).numpy().tolist()[0] == [1.0, -2.5]
        assert "parse_example[key='xy'" in step.get_concrete_function(records).ir()
        sparse = tt.function(lambda r: tt.io.parse_example(r, FEATURES)["tokens"], backend=backend)  # fmt: skip
        assert sparse(records).values.numpy().tolist() == [1, 2, 3, -1, 300]


# --- TensorProto -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, tf_hex",
    [
        (tt.constant([[1.0, 2.0]]), "08011208120208011202080222080000803f00000040"),
        (tt.constant([1, 2, 3]), "0803120412020803220c010000000200000003000000"),
        (tt.constant(["a", "bc"]), "080712041202080242016142026263"),
        (tt.constant(5, tt.int64), "0809120022080500000000000000"),
        (tt.constant(np.zeros((0, 2), np.int32)), "08031206120012020802"),
        (tt.constant([True, False]), "080a12041202080222020100"),
    ],
)
def test_serialize_tensor_gives_tensorflows_bytes(value, tf_hex):
    data = tt.io.serialize_tensor(value).numpy()
    assert data.hex() == tf_hex
    back = tt.io.parse_tensor(data, value.dtype)
    assert back.shape == value.shape and back.numpy().tolist() == value.numpy().tolist()


def test_parse_tensor_errors_are_tensorflows():
    data = tt.io.serialize_tensor(tt.constant([[1.0, 2.0]]))
    with pytest.raises(tt.errors.InvalidArgumentError) as raised:
        tt.io.parse_tensor(data, tt.int32)
    assert raised.value.message == "Type mismatch between parsed tensor (float) and dtype (int32)"
    with pytest.raises(tt.errors.InvalidArgumentError) as raised:
        tt.io.parse_tensor(b"\xff", tt.int32)
    assert raised.value.message == "Could not parse `serialized` as TensorProto, base64: /w=="
    # a float_val of one value stands for every element (TensorFlow gave [2.0, 2.0, 2.0])
    one = bytes.fromhex("08011204120208032a0400000040")
    assert tt.io.parse_tensor(one, tt.float32).numpy().tolist() == [2.0, 2.0, 2.0]
