"""`tt.nn`: activations, softmaxes, losses, convolution and pooling, as in `tf.nn`."""

from tracer.ops.conv_ops import (  # noqa: F401
    avg_pool,
    avg_pool2d,
    conv1d,
    conv2d,
    conv2d_transpose,
    depthwise_conv2d,
    max_pool,
    max_pool2d,
)
from tracer.ops.cross_entropy_ops import sparse_softmax_cross_entropy_with_logits  # noqa: F401
from tracer.ops.math_ops import relu, sigmoid, softplus, softsign, tanh  # noqa: F401
from tracer.ops.nn_ops import (  # noqa: F401
    elu,
    gelu,
    l2_loss,
    log_softmax,
    relu6,
    sigmoid_cross_entropy_with_logits,
    softmax,
    softmax_cross_entropy_with_logits,
)
from tracer.ops.reduction_ops import moments  # noqa: F401
from tracer.ops.sort_ops import top_k  # noqa: F401
