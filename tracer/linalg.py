"""`tt.linalg`: linear algebra, as in `tf.linalg`."""

from tracer.clipping import global_norm  # noqa: F401
from tracer.ops.array_ops import eye  # noqa: F401
from tracer.ops.decomposition_ops import eigh, eigvalsh, qr, svd  # noqa: F401
from tracer.ops.einsum_ops import einsum  # noqa: F401
from tracer.ops.factorization_ops import (  # noqa: F401
    cholesky,
    cholesky_solve,
    det,
    inv,
    logdet,
    slogdet,
    solve,
    triangular_solve,
)
from tracer.ops.least_squares import lstsq, pinv  # noqa: F401
from tracer.ops.linalg_ops import matmul  # noqa: F401
from tracer.ops.math_composites import cross, l2_normalize, tensordot  # noqa: F401
from tracer.ops.matrix_ops import (  # noqa: F401
    adjoint,
    band_part,
    diag,
    diag_part,
    matrix_transpose,
    matvec,
    set_diag,
    trace,
)
from tracer.ops.reduction_ops import matrix_rank, norm, normalize  # noqa: F401
