"""`tt.nn`: activations, softmaxes, losses, convolution and pooling, as in `tf.nn`."""

from tracer.dropout import dropout  # noqa: F401
from tracer.embedding_sparse import (  # noqa: F401
    embedding_lookup,
    embedding_lookup_sparse,
    safe_embedding_lookup_sparse,
)
from tracer.ops.conv_ops import (  # noqa: F401
    avg_pool,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    conv1d,
    conv1d_transpose,
    conv2d,
    conv2d_transpose,
    conv3d,
    conv3d_transpose,
    convolution,
    depthwise_conv2d,
    max_pool,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from tracer.ops.cross_entropy_ops import sparse_softmax_cross_entropy_with_logits  # noqa: F401
from tracer.ops.layout_ops import depth_to_space, space_to_depth  # noqa: F401
from tracer.ops.math_ops import relu, sigmoid, softplus, softsign, tanh  # noqa: F401
from tracer.ops.nn_ops import (  # noqa: F401
    batch_normalization,
    bias_add,
    compute_average_loss,
    elu,
    gelu,
    in_top_k,
    l2_loss,
    l2_normalize,
    leaky_relu,
    log_poisson_loss,
    log_softmax,
    normalize_moments,
    relu6,
    selu,
    sigmoid_cross_entropy_with_logits,
    silu,
    softmax,
    softmax_cross_entropy_with_logits,
    swish,
    weighted_cross_entropy_with_logits,
    zero_fraction,
)
from tracer.ops.normalization_ops import (  # noqa: F401
    crelu,
    local_response_normalization,
    lrn,
    weighted_moments,
)
from tracer.ops.reduction_ops import moments  # noqa: F401
from tracer.ops.sort_ops import top_k  # noqa: F401
