"""TensorFlow's discrete Fourier and cosine transforms (`tf.signal.fft`, `rfft`, `dct`, ...)
as products with constant matrices.

Each transform of an axis of length n is a product with an n x m matrix of cosines and sines
computed in float64 from the exact fraction (j * k mod n) / n and rounded to the tensor's
dtype once. So the transforms are compositions of matmul, complex, real and imag: their
gradients of every order, forward mode, batching and compiled C (BLAS's products) are those
ops', and exported C computes them without Python. The cost is n * m multiply-adds a row,
where an FFT takes about 5 n log2(n): the same at the lengths of spectrograms (256 to 512)
on BLAS's kernels, more for long axes. The values differ from TensorFlow's FFT by float32's
rounding of the sums.

The transformed axis must have a length known when the function is traced; the others may
be unknown.
"""

import numpy as np

from tracer import dtypes
from tracer.ops import array_ops, layout_ops, linalg_ops, math_ops
from tracer.ops.convert import as_tensor, length_value

_COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}
_REAL_OF = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}


def _turns(numerators, denominator):
    """2 pi numerators / denominator, the numerators reduced mod the denominator first so
    that large products keep float64's precision."""
    return 2 * np.pi * (np.mod(numerators, denominator) / denominator)


def _dft_angles(rows, columns, length):
    """The angles 2 pi j k / length of a transform from `rows` samples to `columns` bins."""
    return _turns(np.outer(np.arange(rows), np.arange(columns)), length)


def _constant(values, dtype):
    return as_tensor(np.asarray(values, dtype=dtype.as_numpy_dtype))


def _length_of(x, what):
    n = x.shape[-1] if x.shape.rank else None
    if x.shape.rank == 0:
        raise ValueError(f"{what}: the input must have rank 1 or more, not be a scalar")
    if not isinstance(n, int):  # None, or a dimension known only when the function runs
        raise ValueError(
            f"{what}: the last axis's length must be known when the function is traced "
            f"(the input's shape is {x.shape})"
        )
    return n


def _fft_length(fft_length, default, what, count=1):
    """The lengths of `fft_length` (a list, tuple or tensor of `count` ints), or `default`
    where it is None; computed when a traced function runs, the function runs as Python."""
    if fft_length is None:
        return default
    values = np.asarray(length_value(fft_length, f"{what}: fft_length")).reshape(-1)
    if values.size != count or not np.issubdtype(values.dtype, np.integer):
        raise ValueError(f"{what}: fft_length must hold {count} integer(s), not {fft_length!r}")
    if (values < 0).any():
        raise ValueError(f"{what}: fft_length must not be negative, not {values.tolist()}")
    return [int(v) for v in values]


def fit_last_axis(x, length):
    """x cut or padded with zeros to `length` along its last axis (known)."""
    n = x.shape[-1]
    if n > length:
        return x[..., :length]
    if n < length:
        return layout_ops.pad(x, [[0, 0]] * (x.shape.rank - 1) + [[0, length - n]])
    return x


def _expect(x, kinds, what):
    if x.dtype not in kinds:
        names = " or ".join(d.name for d in kinds)
        raise TypeError(f"{what}: the input must be {names}, not {x.dtype.name}")


def _product(x, matrix):
    """x @ matrix along x's last axis (a vector is a row)."""
    if x.shape.rank == 1:
        return linalg_ops.matmul(x[None], matrix)[0]
    return linalg_ops.matmul(x, matrix)


def rfft(input_tensor, fft_length=None, name=None):
    """The DFT of real `input_tensor`'s last axis, cut or padded with zeros to `fft_length`
    (a list of one int; by default the axis's length): its fft_length // 2 + 1 bins, complex64
    for float32 (complex128 for float64)."""
    x = as_tensor(input_tensor)
    _expect(x, _COMPLEX_OF, "tt.signal.rfft")
    (n,) = _fft_length(fft_length, [_length_of(x, "tt.signal.rfft")], "tt.signal.rfft")
    x = fit_last_axis(x, n)
    angles = _dft_angles(n, n // 2 + 1, n) if n else np.zeros((0, 1))
    real = _product(x, _constant(np.cos(angles), x.dtype))
    imag = _product(x, _constant(-np.sin(angles), x.dtype))
    return math_ops.complex(real, imag)


def irfft(input_tensor, fft_length=None, name=None):
    """The real signal of length `fft_length` (by default 2 (m - 1) for m bins) whose rfft is
    the last axis of `input_tensor`, cut or padded with zeros to fft_length // 2 + 1 bins; the
    imaginary parts of the first bin and of the Nyquist bin are ignored, as TensorFlow's."""
    x = as_tensor(input_tensor)
    _expect(x, _REAL_OF, "tt.signal.irfft")
    bins = _length_of(x, "tt.signal.irfft")
    (n,) = _fft_length(fft_length, [2 * (bins - 1)], "tt.signal.irfft")
    if n == 0:
        raise ValueError("tt.signal.irfft: fft_length must be positive")
    kept = n // 2 + 1
    x = fit_last_axis(x, kept)
    weights = np.full(kept, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    angles = _dft_angles(kept, n, n)
    real_dtype = _REAL_OF[x.dtype]
    cosines = _constant(weights[:, None] * np.cos(angles) / n, real_dtype)
    sines = _constant(-weights[:, None] * np.sin(angles) / n, real_dtype)
    return _product(math_ops.real(x), cosines) + _product(math_ops.imag(x), sines)


def _complex_dft(x, inverse, what):
    _expect(x, _REAL_OF, what)
    n = _length_of(x, what)
    angles = _dft_angles(n, n, n)
    sign = 1.0 if inverse else -1.0
    matrix = (np.cos(angles) + sign * 1j * np.sin(angles)) / (n if inverse else 1)
    return _product(x, _constant(matrix, x.dtype))


def fft(input, name=None):
    """The DFT of complex `input`'s last axis."""
    return _complex_dft(as_tensor(input), False, "tt.signal.fft")


def ifft(input, name=None):
    """The inverse DFT of complex `input`'s last axis (divided by its length)."""
    return _complex_dft(as_tensor(input), True, "tt.signal.ifft")


def _on_axis_before_last(transform, x, back=2):
    """`transform` of x's axis `back` from the end (the second-to-last by default), by
    swapping it with the last."""
    perm = list(range(x.shape.rank))
    perm[-1], perm[-back] = perm[-back], perm[-1]
    return array_ops.transpose(transform(array_ops.transpose(x, perm)), perm)


def fft2d(input, name=None):
    """The 2-D DFT of complex `input`'s last two axes."""
    return _on_axis_before_last(fft, fft(as_tensor(input)))


def ifft2d(input, name=None):
    """The inverse 2-D DFT of complex `input`'s last two axes."""
    return _on_axis_before_last(ifft, ifft(as_tensor(input)))


def rfft2d(input_tensor, fft_length=None, name=None):
    """The 2-D DFT of real `input_tensor`'s last two axes, cut or padded to `fft_length` (two
    ints): the last axis keeps fft_length[1] // 2 + 1 bins."""
    x = as_tensor(input_tensor)
    _expect(x, _COMPLEX_OF, "tt.signal.rfft2d")
    if x.shape.rank < 2:
        raise ValueError(f"tt.signal.rfft2d: the input must have rank 2 or more, not {x.shape}")
    default = [x.shape[-2], _length_of(x, "tt.signal.rfft2d")]
    rows, n = _fft_length(fft_length, default, "tt.signal.rfft2d", 2)
    half = rfft(x, [n])
    return _on_axis_before_last(lambda t: fft(fit_last_axis(t, rows)), half)


def irfft2d(input_tensor, fft_length=None, name=None):
    """The real 2-D signal whose rfft2d is `input_tensor`'s last two axes (`fft_length` by
    default: the rows, and 2 (m - 1) for m bins)."""
    x = as_tensor(input_tensor)
    _expect(x, _REAL_OF, "tt.signal.irfft2d")
    if x.shape.rank < 2:
        raise ValueError(f"tt.signal.irfft2d: the input must have rank 2 or more, not {x.shape}")
    default = [x.shape[-2], 2 * (_length_of(x, "tt.signal.irfft2d") - 1)]
    rows, n = _fft_length(fft_length, default, "tt.signal.irfft2d", 2)
    full = _on_axis_before_last(lambda t: ifft(fit_last_axis(t, rows)), x)
    return irfft(full, [n])


def fft3d(input, name=None):
    """The 3-D DFT of complex `input`'s last three axes."""
    x = _of_rank(as_tensor(input), 3, "tt.signal.fft3d")
    return _on_axis_before_last(fft, _on_axis_before_last(fft, fft(x)), 3)


def ifft3d(input, name=None):
    """The inverse 3-D DFT of complex `input`'s last three axes."""
    x = _of_rank(as_tensor(input), 3, "tt.signal.ifft3d")
    return _on_axis_before_last(ifft, _on_axis_before_last(ifft, ifft(x)), 3)


def rfft3d(input_tensor, fft_length=None, name=None):
    """The 3-D DFT of real `input_tensor`'s last three axes, cut or padded to `fft_length`
    (three ints): the last axis keeps fft_length[2] // 2 + 1 bins."""
    x = _of_rank(as_tensor(input_tensor), 3, "tt.signal.rfft3d")
    _expect(x, _COMPLEX_OF, "tt.signal.rfft3d")
    default = [x.shape[-3], x.shape[-2], _length_of(x, "tt.signal.rfft3d")]
    depth, rows, n = _fft_length(fft_length, default, "tt.signal.rfft3d", 3)
    half = _on_axis_before_last(lambda t: fft(fit_last_axis(t, rows)), rfft(x, [n]))
    return _on_axis_before_last(lambda t: fft(fit_last_axis(t, depth)), half, 3)


def irfft3d(input_tensor, fft_length=None, name=None):
    """The real 3-D signal whose rfft3d is `input_tensor`'s last three axes (`fft_length` by
    default: the depth, the rows, and 2 (m - 1) for m bins)."""
    x = _of_rank(as_tensor(input_tensor), 3, "tt.signal.irfft3d")
    _expect(x, _REAL_OF, "tt.signal.irfft3d")
    default = [x.shape[-3], x.shape[-2], 2 * (_length_of(x, "tt.signal.irfft3d") - 1)]
    depth, rows, n = _fft_length(fft_length, default, "tt.signal.irfft3d", 3)
    full = _on_axis_before_last(lambda t: ifft(fit_last_axis(t, depth)), x, 3)
    return irfft(_on_axis_before_last(lambda t: ifft(fit_last_axis(t, rows)), full), [n])


def _of_rank(x, rank, what):
    if x.shape.rank < rank:
        raise ValueError(f"{what}: the input must have rank {rank} or more, not {x.shape}")
    return x


def _shift(x, axes, sign):
    x = as_tensor(x)
    if axes is None:
        axes = list(range(x.shape.rank))
    axes = [axes] if isinstance(axes, int) else list(axes)
    shifts = [sign * (x.shape[a] // 2) for a in axes]
    return layout_ops.roll(x, shifts, axes) if axes else x


def fftshift(x, axes=None, name=None):
    """x rolled so that the zero-frequency bin is in the middle of each of `axes` (all)."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None, name=None):
    """The inverse of fftshift."""
    return _shift(x, axes, -1)


# --- cosine transforms ----------------------------------------------------------------------


def _dct_matrix(kind, n, norm):
    """The n x n matrix M of TensorFlow's DCT of `kind` (1 to 4): y = x @ M."""
    j = np.arange(n)[:, None]
    k = np.arange(n)[None, :]
    if kind == 1:
        matrix = 2 * np.cos(_turns(j * k, 2 * (n - 1)))
        matrix[[0, -1]] /= 2
        return matrix
    if kind == 2:
        matrix = 2 * np.cos(_turns(k * (2 * j + 1), 4 * n))
        if norm == "ortho":
            matrix *= np.sqrt(1 / (2 * n))
            matrix[:, 0] *= np.sqrt(0.5)
        return matrix
    if kind == 3:
        matrix = 2 * np.cos(_turns(j * (2 * k + 1), 4 * n))
        matrix[0] = 1
        if norm == "ortho":
            matrix *= np.sqrt(1 / (2 * n))
            matrix[0] *= np.sqrt(2)
        return matrix
    matrix = 2 * np.cos(_turns((2 * j + 1) * (2 * k + 1), 8 * n))
    return matrix * np.sqrt(1 / (2 * n)) if norm == "ortho" else matrix


def dct(input, type=2, n=None, axis=-1, norm=None, name=None):
    """TensorFlow's discrete cosine transform of `kind` 1 to 4 of the last axis, cut or padded
    with zeros to `n`; `norm="ortho"` scales it to an orthonormal one (types 2 to 4)."""
    x = as_tensor(input)
    _expect(x, _COMPLEX_OF, "tt.signal.dct")
    kind, length = _dct_arguments(x, type, n, axis, norm, "tt.signal.dct")
    x = fit_last_axis(x, length)
    return _product(x, _constant(_dct_matrix(kind, length, norm), x.dtype))


def idct(input, type=2, n=None, axis=-1, norm=None, name=None):
    """The inverse of dct of `type`: TensorFlow's DCT of type 3 for 2, 2 for 3 (1 and 4 their
    own), so that without `norm` idct(dct(x)) is x times 2 n (times 2 (n - 1) for type 1)."""
    return dct(input, {1: 1, 2: 3, 3: 2, 4: 4}.get(type, type), n, axis, norm)


def _dct_arguments(x, kind, n, axis, norm, what):
    if kind not in (1, 2, 3, 4):
        raise ValueError(f"{what}: type must be 1, 2, 3 or 4, not {kind!r}")
    if axis != -1:
        raise NotImplementedError(
            f"{what}: axis must be -1 (the last), as in TensorFlow, not {axis}"
        )
    if norm not in (None, "ortho"):
        raise ValueError(f"{what}: norm must be None or 'ortho', not {norm!r}")
    if kind == 1 and norm == "ortho":
        raise ValueError(f"{what}: type 1 has no orthonormal form (norm='ortho')")
    length = _length_of(x, what) if n is None else int(length_value(n, f"{what}: n"))
    if length < 1 or (kind == 1 and length < 2):
        raise ValueError(
            f"{what}: the transform's length must be at least {1 + (kind == 1)}, not {length}"
        )
    return kind, length
