"""Turning op arguments into Tensors, TensorFlow style."""

from tracer.tensor import Tensor, _from_python, convert_to_tensor, is_tensor_like


def as_tensors(*values):
    """Tensors for `values`; those that are not tensors or variables (Python scalars, lists,
    numpy arrays) take the dtype of the first one that is, as TensorFlow's operators do.

    >>> x, two = as_tensors(tt.constant(1.0, dtype=tt.float64), 2)
    >>> two.dtype
    tt.float64
    """
    dtype = None
    for v in values:
        if is_tensor_like(v) or hasattr(v, "_densify"):
            dtype = v.dtype
            break
    return tuple(v if type(v) is Tensor else _convert(v, dtype) for v in values)


def _convert(value, dtype):
    if is_tensor_like(value) or hasattr(value, "_densify"):  # variables, IndexedSlices
        return convert_to_tensor(value)
    return Tensor(_from_python(value, dtype))


def as_tensor(value):
    return value if type(value) is Tensor else convert_to_tensor(value)
