"""`tt.image`: image ops, as in `tf.image` (tracer/ops/image_ops.py; docs/image.md)."""

from tracer.ops.conv_ops import extract_patches
from tracer.ops.dynamic_slices import random_crop
from tracer.ops.image_measures import image_gradients, psnr, sobel_edges, total_variation
from tracer.ops.image_ops import (
    ResizeMethod,
    adjust_brightness,
    adjust_contrast,
    central_crop,
    convert_image_dtype,
    crop_to_bounding_box,
    flip_left_right,
    flip_up_down,
    grayscale_to_rgb,
    pad_to_bounding_box,
    per_image_standardization,
    resize,
    resize_with_crop_or_pad,
    resize_with_pad,
    rgb_to_grayscale,
    rot90,
    transpose,
)
from tracer.ops.png_codec import decode_image, decode_png, encode_png
from tracer.random_image import (
    random_brightness,
    random_contrast,
    random_flip_left_right,
    random_flip_up_down,
)

__all__ = [
    "ResizeMethod",
    "adjust_brightness",
    "adjust_contrast",
    "central_crop",
    "convert_image_dtype",
    "crop_to_bounding_box",
    "decode_image",
    "decode_png",
    "encode_png",
    "extract_patches",
    "flip_left_right",
    "flip_up_down",
    "grayscale_to_rgb",
    "image_gradients",
    "pad_to_bounding_box",
    "per_image_standardization",
    "psnr",
    "random_brightness",
    "random_contrast",
    "random_crop",
    "random_flip_left_right",
    "random_flip_up_down",
    "resize",
    "resize_with_crop_or_pad",
    "resize_with_pad",
    "rgb_to_grayscale",
    "rot90",
    "sobel_edges",
    "total_variation",
    "transpose",
]
