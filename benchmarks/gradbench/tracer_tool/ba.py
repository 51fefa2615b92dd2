"""GradBench's `ba` (ADBench's bundle adjustment): reprojection and weight errors, and
their sparse jacobian.

Each observation `i` sees point `obs[i, 1]` through camera `obs[i, 0]`; its two weighted
reprojection errors depend only on that camera's 11 parameters, that point's 3
coordinates and its own weight. The jacobian is therefore one dense 2x15 block per
observation (plus a 1x1 block per weight error), computed for all observations at once
by `tape.batch_jacobian` over the gathered per-observation parameters, and laid out in
ADBench's compressed-row form (`rows`, `cols`, `vals`).
"""

import numpy as np

import tracer as tt
from benchmarks.gradbench.tracer_tool.runs import repeated

N_CAM = 11  # rotation (3), centre (3), focal length, principal point (2), distortion (2)
N_BLOCK = N_CAM + 3 + 1  # nonzeros in one reprojection-error row
N_SHOWN = 2 * N_BLOCK  # GradBench compares the first observation's 30 entries and the last


def _rodrigues(rot, pt):
    """Rotate each row of `pt` by the angle-axis vector in the same row of `rot`; a zero
    rotation takes the first-order form, as ADBench does (with a safe angle so that the
    branch not taken has finite derivatives)."""
    sqtheta = tt.reduce_sum(rot * rot, axis=1, keepdims=True)
    nonzero = sqtheta != 0.0
    theta = tt.sqrt(tt.where(nonzero, sqtheta, tt.ones_like(sqtheta)))
    cos, sin = tt.cos(theta), tt.sin(theta)
    w = rot / theta
    along = tt.reduce_sum(w * pt, axis=1, keepdims=True) * (1.0 - cos)
    rotated = pt * cos + tt.linalg.cross(w, pt) * sin + w * along
    first_order = pt + tt.linalg.cross(rot, pt)
    return tt.where(nonzero, rotated, first_order)


def _reprojection_errors(cam, point, w, feats):
    """Weighted reprojection errors [p, 2] of each observation's camera [p, 11], point
    [p, 3] and weight [p, 1]."""
    xcam = _rodrigues(cam[:, 0:3], point - cam[:, 3:6])
    proj = xcam[:, 0:2] / xcam[:, 2:3]
    rsq = tt.reduce_sum(proj * proj, axis=1, keepdims=True)
    distorted = proj * (1.0 + cam[:, 9:10] * rsq + cam[:, 10:11] * rsq * rsq)
    return w * (distorted * cam[:, 6:7] + cam[:, 7:9] - feats)


# NOTE: one trace per size (reduce_retracing=False): tracer's unknown dimensions are one
# shared size, so a signature with unknown n, m and p would reject all but one of them
@tt.function(reduce_retracing=False)
def _objective(cams, points, weights, feats, cam_of, point_of):
    cam, point = tt.gather(cams, cam_of), tt.gather(points, point_of)
    return _reprojection_errors(cam, point, weights[:, None], feats), 1.0 - weights * weights


def _layout(n, m, cam_of, point_of):
    """`rows` and `cols` of the compressed-row jacobian: per observation two rows with its
    camera's, its point's and its weight's columns, then one row per weight error."""
    p = cam_of.shape[0]
    cam_cols = N_CAM * cam_of[:, None] + tt.range(N_CAM)
    point_cols = N_CAM * n + 3 * point_of[:, None] + tt.range(3)
    weight_cols = N_CAM * n + 3 * m + tt.range(p)
    row = tt.concat([cam_cols, point_cols, weight_cols[:, None]], axis=1)
    both_rows = tt.broadcast_to(row[:, None, :], [p, 2, N_BLOCK])
    cols = tt.concat([tt.reshape(both_rows, [-1]), weight_cols], axis=0)
    nnz = 2 * p * N_BLOCK
    rows = tt.concat([tt.range(0, nnz + 1, N_BLOCK), nnz + tt.range(1, p + 1)], axis=0)
    return rows, cols


@tt.function(reduce_retracing=False)
def _jacobian(n, m, cams, points, weights, feats, cam_of, point_of):
    """The jacobian's `rows`, `cols` and `vals`: each observation's two rows of 15
    nonzeros, then one nonzero per weight error."""
    # one source for batch_jacobian: each observation's camera, point and weight side by side
    params = tt.concat(
        [tt.gather(cams, cam_of), tt.gather(points, point_of), weights[:, None]], axis=1
    )
    with tt.GradientTape() as tape:
        tape.watch(params)
        cam, point, w = params[:, :N_CAM], params[:, N_CAM : N_CAM + 3], params[:, N_CAM + 3 :]
        errors = _reprojection_errors(cam, point, w, feats)
    blocks = tape.batch_jacobian(errors, params)  # [p, 2, 15]
    vals = tt.concat([tt.reshape(blocks, [-1]), -2.0 * weights], axis=0)
    rows, cols = _layout(n, m, cam_of, point_of)
    return rows, cols, vals


def _inputs(input):
    """The eval's input expanded as ADBench does: `n` cameras, `m` points, `p` weights and
    features, observation `i` pairing camera `i % n` with point `i % m`."""
    n, m, p = input["n"], input["m"], input["p"]
    observations = np.arange(p)
    cam_of = (observations % n).astype(np.int32)
    point_of = (observations % m).astype(np.int32)
    arrays = (
        np.tile(np.asarray(input["cam"], np.float64), (n, 1)),
        np.tile(np.asarray(input["x"], np.float64), (m, 1)),
        np.full(p, input["w"], np.float64),
        np.tile(np.asarray(input["feat"], np.float64), (p, 1)),
        cam_of,
        point_of,
    )
    return n, m, [tt.constant(a) for a in arrays]


def objective(input):
    _, _, args = _inputs(input)
    (reproj, w_err), timings = repeated(input, lambda: _objective(*args))
    reproj, w_err = reproj.numpy(), w_err.numpy()
    return {
        "reproj_error": {"elements": reproj[0].tolist(), "repeated": len(reproj)},
        "w_err": {"element": float(w_err[0]), "repeated": len(w_err)},
    }, timings


def jacobian(input):
    n, m, args = _inputs(input)
    result, timings = repeated(input, lambda: _jacobian(n, m, *args))
    shown = {}
    for name, values in zip(("rows", "cols", "vals"), result):
        values = values.numpy()
        shown[name] = np.concatenate([values[:N_SHOWN], values[-1:]]).tolist()
    return shown, timings
