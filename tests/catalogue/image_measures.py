"""Catalogue cases of tt.image's measures (tracer/ops/image_measures.py): compositions of
slices, pads, a depthwise convolution and reductions (psnr aside), whose derivatives the
catalogue checks in every backend. Their values against TensorFlow's are
tests/test_image_measures.py's."""

import numpy as np

import tracer as tt

rng = np.random.default_rng(20261207)


def _edges_and_variation(images):
    dy, dx = tt.image.image_gradients(images * images)
    edges = tt.image.sobel_edges(images)
    return (
        tt.image.total_variation(images)
        + tt.reduce_sum(edges * edges, axis=[1, 2, 3, 4])
        + tt.reduce_sum(dy * dx, axis=[1, 2, 3])
    )


# (psnr computes in float32, as TensorFlow's: too coarse for the catalogue's differences)
COMPOSITES = {"image_measures": (_edges_and_variation, [rng.standard_normal((2, 4, 5, 2))])}
