"""Catalogue cases of tt.RaggedTensor (tracer/ragged_tensor.py, tracer/ragged_ops.py):
functions of a ragged tensor's flat values built of gathers, segment reductions and
scatters, whose derivatives the catalogue checks in every backend. Their values against
TensorFlow's are tests/test_ragged.py's."""

import numpy as np

import tracer as tt

rng = np.random.default_rng(20261207)

# four rows of 2, 1, 3 and 1 values (no empty row: a max over none is the lowest float)
_SPLITS = np.array([0, 2, 3, 6, 7])


def _rows(values):
    return tt.RaggedTensor.from_row_splits(values, _SPLITS)


def _reductions(values):
    rt = _rows(values)
    joined = tt.concat([rt, rt[:, :1] * 2.0], axis=1)
    return (
        tt.reduce_mean(tt.sin(joined), axis=1)
        + tt.reduce_max(rt, axis=1) * tt.reduce_sum(joined.to_tensor(default_value=1.0), axis=1)
        + tt.reduce_min(tt.tile(rt, [1, 2]), axis=0)[:4]
    )


def _broadcasts(values, column):
    rt = _rows(values)
    scaled = tt.ragged.map_flat_values(tt.exp, rt * column - rt[1:2].to_tensor()[0, 0])
    return tt.concat([scaled, tt.reverse(rt, [1])], axis=0)[3:].to_tensor()


COMPOSITES = {
    "ragged_reductions": (_reductions, [rng.standard_normal(7)]),
    "ragged_broadcasts": (_broadcasts, [rng.standard_normal(7), rng.standard_normal((4, 1))]),
}
