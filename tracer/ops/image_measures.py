"""TensorFlow's measures of images (`tf.image.total_variation`, `image_gradients`,
`sobel_edges`, `psnr`), composed of slices, pads, a depthwise convolution and reductions, so
that they differentiate in every backend. Images are [batch, height, width, channels]
(total_variation also takes one image of three axes)."""

import numpy as np

from tracer.ops import array_ops, layout_ops, math_composites, math_ops, reduction_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.conv_ops import depthwise_conv2d
from tracer.ops.convert import as_tensor
from tracer.ops.image_ops import convert_image_dtype
from tracer.ops.structure_ops import stack


def _batched(image, what):
    image = as_tensor(image)
    if image.shape.rank != 4:
        raise ValueError(
            f"{what}: the images must be of rank 4 [batch, height, width, channels], not {image.shape}"
        )
    return image


def total_variation(images, name=None):
    """The sum of the absolute differences of neighbouring pixels, down and across, over
    each image: a scalar for one image [height, width, channels], one a batch element for
    [batch, height, width, channels]."""
    images = as_tensor(images)
    if images.shape.rank == 3:
        down = images[1:, :, :] - images[:-1, :, :]
        across = images[:, 1:, :] - images[:, :-1, :]
        return reduce_sum(math_ops.abs(down)) + reduce_sum(math_ops.abs(across))
    images = _batched(images, "tt.image.total_variation")
    down = images[:, 1:, :, :] - images[:, :-1, :, :]
    across = images[:, :, 1:, :] - images[:, :, :-1, :]
    return reduce_sum(math_ops.abs(down), axis=[1, 2, 3]) + reduce_sum(
        math_ops.abs(across), axis=[1, 2, 3]
    )


def image_gradients(image):
    """(dy, dx): each pixel's difference to the next one down and across, zero on the last
    row and column, of the image's shape."""
    image = _batched(image, "tt.image.image_gradients")
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = layout_ops.pad(dy, [[0, 0], [0, 1], [0, 0], [0, 0]])
    dx = layout_ops.pad(dx, [[0, 0], [0, 0], [0, 1], [0, 0]])
    return dy, dx


# Sobel's kernels: the vertical gradient's, then the horizontal one's
_SOBEL = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]])


def sobel_edges(image):
    """Sobel's vertical and horizontal gradients of each channel, on the image padded by
    reflection: [batch, height, width, channels, 2]."""
    image = _batched(image, "tt.image.sobel_edges")
    if not image.dtype.is_floating:
        raise TypeError(
            f"tt.image.sobel_edges: the images must be floating point, not {image.dtype.name}"
        )
    channels = image.shape[-1]
    padded = layout_ops.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    edges = []
    for kernel in _SOBEL:
        weights = np.tile(kernel[:, :, None, None], (1, 1, channels, 1))
        filters = as_tensor(weights.astype(image.dtype.as_numpy_dtype))
        edges.append(depthwise_conv2d(padded, filters, [1, 1, 1, 1], "VALID"))
    return stack(edges, axis=-1)


def psnr(a, b, max_val, name=None):
    """The peak signal-to-noise ratio of each pair of images (their last three axes), in
    decibels: 20 log10(max_val) - 10 log10(mean squared difference), computed in float32
    on the images and max_val converted as `convert_image_dtype` converts them."""
    a, b = as_tensor(a), as_tensor(b)
    if a.dtype != b.dtype:
        raise TypeError(
            f"tt.image.psnr: a and b must have one dtype, not {a.dtype.name} and {b.dtype.name}"
        )
    # the peak in the images' dtype, scaled as they are (255 for uint8 images becomes 1.0)
    max_val = convert_image_dtype(array_ops.cast(as_tensor(max_val), a.dtype), "float32")
    a, b = convert_image_dtype(a, "float32"), convert_image_dtype(b, "float32")
    mse = reduction_ops.reduce_mean(math_composites.squared_difference(a, b), axis=[-3, -2, -1])
    ten = np.float32(10 / np.log(10))
    return 20 * math_ops.log(max_val) / np.float32(np.log(10)) - ten * math_ops.log(mse)
