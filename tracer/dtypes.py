"""Data types: a thin, interned wrapper over numpy dtypes with TensorFlow's names.

>>> import tracer as tt
>>> tt.float32 == np.float32, tt.float32.is_floating
(True, True)
"""

import builtins

import numpy as np


class DType:
    """One of tracer's element types. Interned: `as_dtype` returns the same object per type."""

    __slots__ = (
        "name",
        "as_numpy_dtype",
        "_np",
        "is_floating",
        "is_integer",
        "is_complex",
        "is_bool",
        "is_differentiable",
        "is_string",
        "itemsize",
    )

    is_tuple = False  # see tracer.ir.graph.TupleType

    def __init__(self, name, np_dtype):
        self.name = name
        self._np = np.dtype(np_dtype)
        self.as_numpy_dtype = self._np.type
        kind = self._np.kind
        # plain attributes rather than properties: the op path reads them for every op
        self.is_floating = kind == "f"
        self.is_integer = kind in "iu"
        self.is_complex = kind == "c"
        self.is_bool = kind == "b"
        self.is_differentiable = (
            kind in "fc"
        )  # only real floating and complex values carry gradients
        self.is_string = kind == "O"  # byte strings, held as Python bytes in object arrays
        self.itemsize = self._np.itemsize  # bytes per element (a string's: its reference)

    @property
    def is_unsigned(self):
        return self._np.kind == "u"

    @property
    def size(self):
        """Bytes per element, as TensorFlow's DType.size."""
        return self.itemsize

    @property
    def min(self):
        """The least value of the type, as TensorFlow's (a TypeError for bool and complex)."""
        return self._limits().min

    @property
    def max(self):
        """The greatest value of the type, as TensorFlow's."""
        return self._limits().max

    def _limits(self):
        if self.is_floating:
            return np.finfo(self._np)
        if self.is_integer:
            return np.iinfo(self._np)
        raise TypeError(f"{self.name} has no min and max")

    @property
    def limits(self):
        """TensorFlow's intensity range of the type, as images take it: (0, max) for an
        integer type (the negative part clipped), (0, 1) for float32 and float64, (0, True)
        for bool; a ValueError for the others (float16, complex, string), as TensorFlow's.

        >>> tt.uint8.limits, tt.float32.limits
        ((0, 255), (0, 1))
        """
        if self.is_integer:
            return 0, int(np.iinfo(self._np).max)
        if self.is_bool:
            return 0, True
        if self.name in ("float32", "float64"):
            return 0, 1
        raise ValueError(f"{self} does not have defined limits.")

    def is_compatible_with(self, other):
        """Whether a value of dtype `other` (anything `as_dtype` takes; a TypeError
        otherwise) may stand where this dtype is asked for: the same dtype."""
        return self is as_dtype(other)

    @property
    def real_dtype(self):
        """The dtype of a complex value's parts; a real dtype's is itself."""
        return as_dtype(np.empty((), self._np).real.dtype) if self.is_complex else self

    @property
    def short_name(self):
        """The compact form used by the IR printer: f32, i64, c128, bool."""
        return _SHORT_NAMES[self.name]

    def __eq__(self, other):
        """The same dtype, where `other` is one or names one as `as_dtype` reads it
        (`tt.float32 == "float32"`, `== np.float32`, `== float`); False for what names none."""
        if isinstance(other, DType):
            return self is other
        try:
            return self is as_dtype(other)
        except (TypeError, ValueError):
            return False

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"tt.{self.name}"

    def __str__(self):
        return f"<dtype: '{self.name}'>"


float16 = DType("float16", np.float16)
float32 = DType("float32", np.float32)
float64 = DType("float64", np.float64)
int8 = DType("int8", np.int8)
int16 = DType("int16", np.int16)
int32 = DType("int32", np.int32)
int64 = DType("int64", np.int64)
uint8 = DType("uint8", np.uint8)
uint16 = DType("uint16", np.uint16)
uint32 = DType("uint32", np.uint32)
uint64 = DType("uint64", np.uint64)
bool = DType("bool", np.bool_)
complex64 = DType("complex64", np.complex64)
complex128 = DType("complex128", np.complex128)
# TensorFlow's tf.string: byte strings of any length, each element a Python `bytes` in a
# numpy object array; compiled code holds handles to them, never the bytes (docs/strings.md)
string = DType("string", object)

_ALL = (
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    bool,
    complex64,
    complex128,
    string,
)
BY_NUMPY = {d._np: d for d in _ALL}
_SHORT_NAMES = {
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bool": "bool",
    "complex64": "c64",
    "complex128": "c128",
    "string": "str",
}


# TensorFlow's names of the dtypes, and its other spellings
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update(float=float32, double=float64, half=float16)
# the Python types TensorFlow takes as dtypes: `float` is float32, as TensorFlow reads it
# (not numpy's float64); int, complex, str and bytes name none (their width is not said)
_PYTHON_TYPES = {float: float32, builtins.bool: bool, object: string}


def as_dtype(value):
    """The DType for a DType, a numpy dtype or scalar type, one of TensorFlow's names
    ('float32', 'float' for float32, 'double', 'half', 'string', ...) or the Python types
    TensorFlow takes (`float` is float32, `bool`, `object` a string); numpy's string types
    (np.str_, np.bytes_, 'U5' dtypes) are tt.string. A TypeError for anything else: None,
    `int`, `complex`, `str`, a name numpy would read but TensorFlow does not ('int', 'f4'),
    as TensorFlow's. The type of a node of several results (a tracer.ir.TupleType) is
    returned as it is.

    >>> tt.as_dtype("float"), tt.as_dtype(float), tt.as_dtype(np.float64)
    (tt.float32, tt.float32, tt.float64)
    """
    if isinstance(value, DType) or getattr(value, "is_tuple", False):
        return value
    if isinstance(value, np.dtype):
        found = BY_NUMPY.get(value)
        if found is not None:
            return found
    elif isinstance(value, str):
        found = _BY_NAME.get(value)
        if found is not None:
            return found
        raise TypeError(f"tracer has no dtype for {value!r}")
    elif isinstance(value, type) and not issubclass(value, np.generic):
        found = _PYTHON_TYPES.get(value)
        if found is not None:
            return found
        raise TypeError(f"tracer has no dtype for {value!r}")
    try:
        numpy_dtype = np.dtype(value) if value is not None else None
    except (TypeError, ValueError):
        numpy_dtype = None
    if numpy_dtype is not None:
        if numpy_dtype.kind in "SUO":
            return string
        found = BY_NUMPY.get(numpy_dtype)
        if found is not None:
            return found
    raise TypeError(f"tracer has no dtype for {value!r}")
