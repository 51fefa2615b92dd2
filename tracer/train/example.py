"""`tt.train.Example` and its parts: TensorFlow's messages of training data
(tensorflow/core/example/example.proto and feature.proto), as tracer/protos/message.py
declares messages. Their bytes, repr and API are TensorFlow's.

    example = tt.train.Example(
        features=tt.train.Features(
            feature={
                "id": tt.train.Feature(int64_list=tt.train.Int64List(value=[7])),
                "xy": tt.train.Feature(float_list=tt.train.FloatList(value=[0.5, -1.0])),
            }
        )
    )
    data = example.SerializeToString()
    assert tt.train.Example.FromString(data).features.feature["id"].int64_list.value == [7]
"""

from tracer.protos import containers
from tracer.protos.fields import MAP, MESSAGE, MESSAGES, REPEATED, Field
from tracer.protos.message import Message


class BytesList(Message):
    FULL_NAME = "tensorflow.BytesList"
    FIELDS = (Field("value", 1, REPEATED, containers.BYTES),)


class FloatList(Message):
    """Its values are float32 (a double given is rounded to the nearest float32)."""

    FULL_NAME = "tensorflow.FloatList"
    FIELDS = (Field("value", 1, REPEATED, containers.FLOAT),)


class Int64List(Message):
    FULL_NAME = "tensorflow.Int64List"
    FIELDS = (Field("value", 1, REPEATED, containers.INT64),)


class Feature(Message):
    """One of bytes_list, float_list or int64_list (the oneof `kind`): setting one clears
    the others."""

    FULL_NAME = "tensorflow.Feature"
    FIELDS = (
        Field("bytes_list", 1, MESSAGE, BytesList, oneof="kind"),
        Field("float_list", 2, MESSAGE, FloatList, oneof="kind"),
        Field("int64_list", 3, MESSAGE, Int64List, oneof="kind"),
    )


class Features(Message):
    FULL_NAME = "tensorflow.Features"
    FIELDS = (Field("feature", 1, MAP, Feature),)


class FeatureList(Message):
    FULL_NAME = "tensorflow.FeatureList"
    FIELDS = (Field("feature", 1, MESSAGES, Feature),)


class FeatureLists(Message):
    FULL_NAME = "tensorflow.FeatureLists"
    FIELDS = (Field("feature_list", 1, MAP, FeatureList),)


class Example(Message):
    FULL_NAME = "tensorflow.Example"
    FIELDS = (Field("features", 1, MESSAGE, Features),)


class SequenceExample(Message):
    FULL_NAME = "tensorflow.SequenceExample"
    FIELDS = (
        Field("context", 1, MESSAGE, Features),
        Field("feature_lists", 2, MESSAGE, FeatureLists),
    )
