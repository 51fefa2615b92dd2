"""What `tt.io.parse_example` is asked for: TensorFlow's feature configurations
(`tt.io.FixedLenFeature`, `VarLenFeature`, `FixedLenSequenceFeature`, `RaggedFeature`), and
the checks of a `features` dict that TensorFlow makes before it parses anything.

    features = {
        "id": tt.io.FixedLenFeature([], tt.int64),
        "xy": tt.io.FixedLenFeature([2], tt.float32, default_value=[0.0, 0.0]),
        "tags": tt.io.VarLenFeature(tt.string),
    }
"""

import collections

import numpy as np

from tracer import dtypes
from tracer.errors import InvalidArgumentError
from tracer.tensor import convert_to_tensor

# the dtypes an Example's lists hold (float_list: float32), and TensorFlow's names of them
# in its messages
KIND_OF = {dtypes.float32: "float", dtypes.int64: "int64", dtypes.string: "bytes"}
TYPE_NAME = {dtypes.float32: "float", dtypes.int64: "int64", dtypes.string: "string"}
# TensorFlow's names of other dtypes, where a message names them
_OTHER_NAMES = {"float64": "double"}


_FIELDS = {
    "FixedLenFeature": ["shape", "dtype", "default_value"],
    "VarLenFeature": ["dtype"],
    "FixedLenSequenceFeature": ["shape", "dtype", "allow_missing", "default_value"],
    "RaggedFeature": ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"],
}
_BASES = {name: collections.namedtuple(name, fields) for name, fields in _FIELDS.items()}


class FixedLenFeature(_BASES["FixedLenFeature"]):
    """A feature of `shape` (every size known) and `dtype` (float32, int64 or string) in every
    example; where one lacks it, `default_value` (of that shape, or flat), else an error."""

    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(_BASES["VarLenFeature"]):
    """A feature of any number of values: a tt.SparseTensor (its values in order)."""

    __slots__ = ()


class FixedLenSequenceFeature(_BASES["FixedLenSequenceFeature"]):
    """A feature of any number of rows of `shape`: a tensor [rows, *shape], a batch's padded
    with `default_value` (or zeros, empty strings). `allow_missing` must be True."""

    __slots__ = ()

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class RaggedFeature(_BASES["RaggedFeature"]):
    """A feature of any number of values (read from `value_key`, by default the feature's
    own key): a vector for one example, a tt.RaggedTensor for a batch. tracer's row splits
    are int64 whatever `row_splits_dtype` says, and `partitions` are not supported."""

    __slots__ = ()

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=dtypes.int32, validate=False):  # fmt: skip
        return super().__new__(cls, dtype, value_key, partitions, row_splits_dtype, validate)


def _name(key):
    """The feature's name in an Example (its key, as str)."""
    return key.decode("utf-8") if isinstance(key, bytes) else key


class Dense:
    """A FixedLenFeature or FixedLenSequenceFeature checked: `key` (as given; `name`, as the
    Example names it), `dtype` (a tracer DType),
    `shape` (a tuple of ints; a sequence's row), `default` (a flat tuple of values, or None),
    `sequence` (whether it is a FixedLenSequenceFeature)."""

    def __init__(self, key, feature, sequence):
        self.key, self.name, self.sequence = key, _name(key), sequence
        self.dtype = _value_dtype(feature.dtype, "Tdense")
        self.shape = _known_shape(key, feature, sequence)
        self.default = _default(feature.default_value, self.dtype, self.shape, sequence)


class Sparse:
    """A VarLenFeature checked (`key`, `name`, `dtype`)."""

    def __init__(self, key, feature):
        self.key, self.name = key, _name(key)
        self.dtype = _value_dtype(feature.dtype, "sparse_types")


class Ragged:
    """A RaggedFeature checked (`key`, `dtype`, and `name`, the feature read: its
    `value_key`, or its key)."""

    def __init__(self, key, feature):
        if feature.partitions:
            raise NotImplementedError(
                f"tt.io.RaggedFeature {key!r}: partitions (nested ragged rows) are not "
                "supported; tracer reads one ragged dimension"
            )
        self.key, self.dtype = key, _value_dtype(feature.dtype, "ragged_value_types")
        self.name = _name(key if feature.value_key is None else feature.value_key)


def checked(features):
    """The features dict as (sparse, dense, ragged) lists of the checked configurations, each
    in the order of its keys (the order of the parsed results), with TensorFlow's errors."""
    if not features:
        raise ValueError(f"Argument `features` cannot be None or falsy. Got {features}")
    features = dict(features)
    sparse, dense, ragged = [], [], []
    for key in features:
        if not isinstance(key, (str, bytes)):
            raise TypeError(
                f"Cannot convert {[key]} to a tt.string tensor: a feature's key is a string"
            )
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, VarLenFeature):
            sparse.append(Sparse(key, feature))
        elif isinstance(feature, FixedLenFeature):
            dense.append(Dense(key, feature, False))
        elif isinstance(feature, FixedLenSequenceFeature):
            if not feature.allow_missing:
                raise ValueError(
                    "Unsupported: FixedLenSequenceFeature requires allow_missing to be True."
                )
            dense.append(Dense(key, feature, True))
        elif isinstance(feature, RaggedFeature):
            ragged.append(Ragged(key, feature))
        else:
            raise ValueError(f"Unsupported {type(feature).__name__} {feature} for key '{key}'")
    _refuse_shared_keys(sparse, ragged)
    return sparse, dense, ragged


def _refuse_shared_keys(sparse, ragged):
    sparse_keys, ragged_keys = [s.name for s in sparse], [r.name for r in ragged]
    shared = set(sparse_keys) & set(ragged_keys)
    if shared:
        raise ValueError(
            f"Ragged and sparse keys must not intersect; ragged_keys: {ragged_keys}, "
            f"sparse_keys: {sparse_keys}, intersection: {shared}"
        )


def _value_dtype(dtype, attribute):
    """A feature's dtype, one of an Example's (InvalidArgumentError for another)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype not in KIND_OF:
        name = _OTHER_NAMES.get(dtype.name, dtype.name)
        raise InvalidArgumentError(
            None,
            None,
            f"Value for attr '{attribute}' of {name} is not in the list of allowed values: "
            "float, int64, string",
        )
    return dtype


def _known_shape(key, feature, sequence):
    if feature.shape is None:
        raise ValueError(f"Missing shape for feature {key}. Received feature={feature}.")
    shape = tuple(None if d is None else int(d) for d in feature.shape)
    if shape and shape[0] is None and not sequence:
        raise ValueError(
            f"First dimension of shape for feature {key} unknown. Consider using "
            f"FixedLenSequenceFeature. Received feature={feature}."
        )
    if None in shape:
        raise ValueError(
            f"All dimensions of shape for feature {key} need to be known but received "
            f"{list(feature.shape)}."
        )
    return shape


def _default(value, dtype, shape, sequence):
    """The default as a flat tuple of Python values (a sequence's: its one fill value), None
    where there is none; InvalidArgumentError where its size is not the shape's."""
    if value is None:
        return None
    array = np.array(
        convert_to_tensor(value, dtype=dtype).numpy(),
        dtype=object if dtype == dtypes.string else None,
    )
    flat = tuple(array.reshape(-1).tolist())
    size = 1 if sequence else int(np.prod(shape, dtype=np.int64))
    if len(flat) != size:
        raise InvalidArgumentError(
            None,
            None,
            f"Input to reshape is a tensor with {len(flat)} values, but the requested shape "
            f"has {size}",
        )
    return flat
