"""numpy's dtypes and behaviour for tracer's tensors, as TensorFlow's NumPy API gives them.

`asarray` and `promoted` make tensors of numpy's dtypes (a Python int int64, a Python float
float64, or float32 where float32 is preferred; two dtypes promoted as numpy promotes them).
`experimental_enable_numpy_behavior()` installs, on every tensor and variable, operators
that promote mixed dtypes so, numpy's advanced and boolean indexing, and numpy's methods
(`T`, `reshape`, `astype`, `ravel`, `transpose`, `clip`, `tolist`): it changes what every
program in the process sees, as TensorFlow's does, and cannot be undone.
"""

import numpy as np

from tracer import dtypes, operators
from tracer.ops import array_ops, index_ops, math_ops
from tracer.tensor import Tensor, TensorLike, convert_to_tensor


class _Settings:
    prefer_float32 = False


_settings = _Settings()


def default_float():
    """The dtype of a Python float and of `dtype=float`: float64, or float32 where preferred."""
    return dtypes.float32 if _settings.prefer_float32 else dtypes.float64


def numpy_dtype(dtype):
    """`dtype` (a tracer or numpy dtype, a numpy type, `float`, `int`, `bool`) as a DType."""
    if dtype is float:
        return default_float()
    return dtypes.as_dtype(dtype)


def asarray(a, dtype=None):
    """A tensor of `a`: itself where it is one (cast to `dtype` where given); else of
    numpy's dtype for it (Python floats as the default float)."""
    if isinstance(a, TensorLike):
        a = a._read()
        return a if dtype is None else array_ops.cast(a, numpy_dtype(dtype))
    if dtype is not None:
        return convert_to_tensor(np.asarray(a, numpy_dtype(dtype).as_numpy_dtype))
    value = np.asarray(a)
    if value.dtype == np.float64 and not isinstance(a, (np.ndarray, np.generic)):
        value = value.astype(default_float().as_numpy_dtype)  # (a Python float)
    return convert_to_tensor(value)


def promoted(*values):
    """`values` as tensors of one dtype, numpy's promotion of theirs. A Python number is
    weak, as in numpy: it takes a tensor's dtype of its kind (an int a tensor's integer
    dtype, a float a float one), else the default of its kind."""
    tensors = [asarray(v) for v in values if not _is_python_number(v)]
    kinds = [t.dtype.as_numpy_dtype for t in tensors]
    for v in values:
        if _is_python_number(v) and not any(_holds(kind, v) for kind in kinds):
            kinds.append(asarray(v).dtype.as_numpy_dtype)
    common = dtypes.as_dtype(np.result_type(*kinds))
    return tuple(asarray(v, common) for v in values)


def _is_python_number(value):
    return type(value) in (bool, int, float, complex)


def _holds(kind, number):
    """Whether a tensor of numpy dtype `kind` takes a Python `number` without promotion."""
    kind = np.dtype(kind)
    if isinstance(number, bool):
        return True
    if isinstance(number, int):
        return kind.kind in "iufc"
    if isinstance(number, float):
        return kind.kind in "fc"
    return kind.kind == "c"


def _promoting(function):
    """A binary operator that promotes its operands' dtypes first."""

    def operator(x, y):
        if isinstance(y, (TensorLike, np.ndarray, np.generic, bool, int, float, complex)):
            x, y = promoted(x, y)
        return function(x, y)

    return operator


def _numpy_getitem(x, key):
    """`x[key]` with numpy's indexing: basic keys as tracer's, advanced ones (lists,
    arrays, tensors of indices or of booleans) through a gather of the positions numpy
    picks, so they differentiate and compile as a gather does. The key must be known when
    a function is traced; the shape too."""
    if _is_basic(key):
        return array_ops.getitem(x, key)
    x = x._read()
    if not all(isinstance(d, int) for d in x.shape):
        raise TypeError(
            "numpy's advanced indexing needs the tensor's shape known when the function is "
            f"traced; this one's is {x.shape}"
        )
    positions = np.arange(int(np.prod(x.shape, dtype=np.int64))).reshape(x.shape)
    picked = positions[_concrete_key(key)]
    flat = index_ops.gather(array_ops.reshape(x, [-1]), picked.reshape(-1))
    return array_ops.reshape(flat, picked.shape)


def _is_basic(key):
    items = key if isinstance(key, tuple) else (key,)
    return all(
        item is None
        or item is Ellipsis
        or isinstance(item, (int, slice))
        and not isinstance(item, bool)
        or isinstance(item, TensorLike)
        and item.shape == ()
        and not item.dtype.is_bool
        for item in items
    )


def _concrete_key(key):
    """`key` with each tensor in it as its numpy value (a TypeError for one known only when
    a function runs)."""
    if isinstance(key, tuple):
        return tuple(_concrete_key(item) for item in key)
    if isinstance(key, list):
        return np.asarray([_concrete_key(item) for item in key])
    if isinstance(key, TensorLike):
        value = key._read()._value
        if value is None:
            raise TypeError(
                "numpy's advanced indexing takes indices known when the function is traced, "
                "not a tensor computed while it runs"
            )
        return value
    return key


def _astype(self, dtype):
    return array_ops.cast(self, numpy_dtype(dtype))


def _reshape(self, *shape, order="C"):
    if order != "C":
        raise NotImplementedError("Tensor.reshape: tracer reshapes in C order only")
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return array_ops.reshape(self, shape)


def _transpose(self, *axes):
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return array_ops.transpose(self, list(axes) if axes else None)


def clip(a, a_min, a_max):
    """numpy's clip (also a tensor's method): `a` within [a_min, a_max], dtypes promoted."""
    a, low, high = promoted(a, a_min, a_max)
    return math_ops.minimum(math_ops.maximum(a, low), high)


_METHODS = {
    "T": property(lambda self: array_ops.transpose(self)),
    "astype": _astype,
    "reshape": _reshape,
    "ravel": lambda self: array_ops.reshape(self, [-1]),
    "transpose": _transpose,
    "clip": clip,
    "tolist": lambda self: self.numpy().tolist(),
}

_PROMOTING = (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
    "__rpow__", "__matmul__", "__rmatmul__", "__lt__", "__le__", "__gt__", "__ge__",
)  # fmt: skip


def experimental_enable_numpy_behavior(prefer_float32=False, dtype_conversion_mode="legacy"):
    """Give every tensor numpy's behaviour (see the module's docstring); `prefer_float32`
    makes a Python float and `dtype=float` float32 in tnp's functions. tracer promotes as
    numpy does ("legacy", TensorFlow's default mode), and has no other mode."""
    if dtype_conversion_mode != "legacy":
        raise NotImplementedError(
            f"dtype_conversion_mode={dtype_conversion_mode!r}: tracer promotes dtypes as numpy "
            "does ('legacy') only"
        )
    _settings.prefer_float32 = bool(prefer_float32)
    for name in _PROMOTING:
        setattr(TensorLike, name, _promoting(operators.OPERATORS[name]))
    TensorLike.__getitem__ = _numpy_getitem
    for name, method in _METHODS.items():
        if not hasattr(Tensor, name) or name == "T":
            setattr(TensorLike, name, method)
