"""GradBench's `ht` (ADBench's hand tracking): the distance of observed points to a skinned
hand mesh posed by 26 parameters, and its jacobian.

The pose (global rotation and translation, then per-bone Euler angles) turns each bone's
base transform; the bones' absolute transforms follow the skeleton level by level, and
linear blend skinning moves every vertex by the weighted sum of its bones' transforms (a
matmul over all vertices). A point corresponds to one vertex ("simple" inputs, no `us`)
or to a point of a triangle given by its barycentric `us` ("complicated" inputs).

The jacobian comes from forward mode, one vectorized JVP per column: 26 columns for the
pose and, in the complicated case, two leading columns for `us`. The full jacobian's `us`
block is block diagonal (a residual depends on its own point's `us` only), which GradBench
merges into two columns; one JVP seeding every point's first (second) coordinate at once
gives each merged column."""

import numpy as np

import tracer as tt
from benchmarks.gradbench.tracer_tool.runs import repeated

N_FINGERS = 5


def _pose_index(n_theta, n_bones):
    """Where each of the `n_bones + 3` rows of 3 pose parameters comes from in `theta`
    extended by a 0 (index `n_theta`) and a 1 (index `n_theta + 1`): global rotation, scale
    (ones), global translation, then per bone its Euler angles; each finger's first joint
    has two angles, the others one, and the wrist and finger roots none."""
    zero, one = n_theta, n_theta + 1
    index = np.full((n_bones + 3, 3), zero, np.int32)
    index[0], index[1], index[2] = [0, 1, 2], one, [3, 4, 5]
    i_theta, row = 6, 5
    for _ in range(N_FINGERS):
        for joint in range(3):
            index[row, 0] = i_theta
            i_theta += 1
            if joint == 0:
                index[row, 1] = i_theta
                i_theta += 1
            row += 1
        row += 1  # the next finger's root bone
    return index


def _skeleton(parents):
    """The bones grouped by their depth (roots first), each group with where its parents
    sit among the bones of the groups before it, and the permutation back to bone order:
    hashable, so that it is part of what the functions are traced for."""
    depth = []
    for parent in parents:
        depth.append(0 if parent < 0 else depth[parent] + 1)
    levels, order = [], []
    for d in range(max(depth) + 1):
        bones = [b for b in range(len(parents)) if depth[b] == d]
        where = None if d == 0 else tuple(order.index(parents[b]) for b in bones)
        levels.append((tuple(bones), where))
        order.extend(bones)
    return tuple(levels), tuple(int(i) for i in np.argsort(order))


def _euler_to_rotation(angles):
    """Rotation matrices [b, 3, 3] Rz(a1) Ry(a2) Rx(a0) of Euler angles [b, 3] given in the
    order x, z, y."""
    cx, cz, cy = tt.unstack(tt.cos(angles), axis=1)
    sx, sz, sy = tt.unstack(tt.sin(angles), axis=1)
    zero, one = tt.zeros_like(cx), tt.ones_like(cx)

    def matrix(rows):
        return tt.stack([tt.stack(row, axis=1) for row in rows], axis=1)

    rx = matrix([[one, zero, zero], [zero, cx, -sx], [zero, sx, cx]])
    ry = matrix([[cy, zero, sy], [zero, one, zero], [-sy, zero, cy]])
    rz = matrix([[cz, -sz, zero], [sz, cz, zero], [zero, zero, one]])
    return rz @ ry @ rx


def _angle_axis_to_rotation(angle_axis):
    """The rotation matrix of an angle-axis vector [3]; the identity below an angle of 1e-4,
    as ADBench has it (with a safe angle so that the branch not taken has finite
    derivatives)."""
    sqnorm = tt.reduce_sum(angle_axis * angle_axis)
    small = sqnorm < 1e-8
    norm = tt.sqrt(tt.where(small, tt.ones_like(sqnorm), sqnorm))
    axis = angle_axis / norm
    s, c = tt.sin(norm), tt.cos(norm)
    x, y, z = tt.unstack(axis)
    rotation = tt.stack(
        [
            tt.stack([x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s]),
            tt.stack([x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s]),
            tt.stack([x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]),
        ]
    )
    return tt.where(small, tt.eye(3, dtype=angle_axis.dtype), rotation)


def _vertex_positions(theta, model, rig, skin):
    """The posed hand's vertices [V, 3], skinned by `skin`."""
    skeleton, mirrored = rig
    pose = tt.gather(tt.concat([theta, tt.constant([0.0, 1.0], tt.float64)], 0), model["pose"])
    rotations = _euler_to_rotation(pose[3:])
    base = model["base_relatives"]
    # each bone's base transform with its rotation applied to the bone's own frame
    relatives = tt.concat([base[:, :, :3] @ rotations, base[:, :, 3:]], axis=2)

    levels, to_bone_order = skeleton
    absolutes = None  # the bones' absolute transforms, level by level
    for bones, parents in levels:
        level = tt.gather(relatives, bones)
        if parents is not None:
            level = tt.gather(absolutes, parents) @ level
        absolutes = level if absolutes is None else tt.concat([absolutes, level], 0)
    absolutes = tt.gather(absolutes, to_bone_order)
    transforms = (absolutes @ model["inverse_base_absolutes"])[:, :3, :]  # [bones, 3, 4]

    # the mirroring (x negated), scale and global rotation of the skinned vertices are
    # linear: applied to each bone's transform instead, on 3x4 matrices, not on every vertex
    flip = tt.constant([-1.0 if mirrored else 1.0, 1.0, 1.0], tt.float64)
    global_rotation = _angle_axis_to_rotation(pose[0]) * (pose[1] * flip)[None, :]
    return skin(global_rotation @ transforms, model) + pose[2]


def _skin_blended(transforms, model):
    """Linear blend skinning, vertex v moved by sum_b w[v, b] T_b: the weighted sum of the
    bones' 3x4 transforms per vertex (one matmul), applied to the vertex; the fewest
    products for one pose."""
    n_bones = transforms.shape[0]
    blended = model["weights"] @ tt.reshape(transforms, [n_bones, 12])
    return tt.reduce_sum(
        tt.reshape(blended, [-1, 3, 4]) * model["base_positions"][:, None, :], axis=2
    )


def _skin_products(transforms, model):
    """The same skinning as one matmul of the products w[v, b] x_v[j], which the pose does
    not change, with the entries T_b[i, j]: the form for many tangents at once (their
    matmul comes out in the layout the vectorized JVP wants)."""
    n_vertices, n_bones = model["weights"].shape
    products = model["weights"][:, :, None] * model["base_positions"][:, None, :]
    entries = tt.reshape(tt.transpose(transforms, [0, 2, 1]), [n_bones * 4, 3])
    return tt.reshape(products, [n_vertices, n_bones * 4]) @ entries


def _residuals(theta, us, model, rig, skin, points, correspondences):
    """Observed points minus their model points [n, 3]: the corresponding vertex, or with
    `us` the point of the corresponding triangle whose barycentric coordinates for its first
    two corners are `us`."""
    vertices = _vertex_positions(theta, model, rig, skin)
    if us is None:
        return points - tt.gather(vertices, correspondences)
    corners = tt.gather(model["triangles"], correspondences)
    a, b, c = tt.unstack(tt.gather(vertices, corners), axis=1)
    u0, u1 = us[:, 0:1], us[:, 1:2]
    return points - (u0 * a + u1 * b + (1.0 - u0 - u1) * c)


@tt.function
def _objective(theta, us, model, rig, points, correspondences):
    return _residuals(theta, us, model, rig, _skin_blended, points, correspondences)


@tt.function
def _jacobian(theta, us, model, rig, points, correspondences):
    """The jacobian [n, 3, columns] by forward mode, one JVP per column, vectorized over
    the columns: with `us`, first the two merged columns (each JVP seeds one coordinate of
    every point's `us`), then one per pose parameter."""
    n_theta = theta.shape[0]
    theta_directions = tt.eye(n_theta, dtype=tt.float64)
    if us is None:
        primals, directions = [theta], [theta_directions]
    else:
        seeds = tt.concat([tt.eye(2, dtype=tt.float64), tt.zeros([n_theta, 2], tt.float64)], 0)
        theta_directions = tt.concat([tt.zeros([2, n_theta], tt.float64), theta_directions], 0)
        primals = [theta, us]
        directions = [theta_directions, seeds[:, None, :] * tt.ones_like(us)[None]]

    def column(tangents):
        with tt.autodiff.ForwardAccumulator(primals, tangents) as accumulator:
            residuals = _residuals(theta, us, model, rig, _skin_products, points, correspondences)
        return accumulator.jvp(residuals)

    return tt.transpose(tt.vectorized_map(column, directions), [1, 2, 0])


def _inputs(input):
    """Tensors of the eval's input (`us` None for a simple one), and the model's `rig` (its
    skeleton's levels, mirroring) as Python values that the traced functions unroll."""
    data, m = input["data"], input["data"]["model"]

    def floats(value):
        return tt.constant(np.asarray(value, np.float64))

    model = {
        "pose": tt.constant(_pose_index(len(input["theta"]), m["bone_count"])),
        "base_relatives": floats(m["base_relatives"]),
        "inverse_base_absolutes": floats(m["inverse_base_absolutes"]),
        "base_positions": floats(m["base_positions"]),
        "weights": floats(m["weights"]),
        "triangles": tt.constant(np.asarray(m["triangles"], np.int32).reshape(-1, 3)),
    }
    rig = (_skeleton(m["parents"]), bool(m["is_mirrored"]))
    us = floats(input["us"]) if len(input["us"]) else None
    correspondences = tt.constant(np.asarray(data["correspondences"], np.int32))
    return floats(input["theta"]), us, model, rig, floats(data["points"]), correspondences


def objective(input):
    args = _inputs(input)
    residuals, timings = repeated(input, lambda: _objective(*args))
    return np.reshape(residuals.numpy(), -1).tolist(), timings


def jacobian(input):
    args = _inputs(input)
    columns, timings = repeated(input, lambda: _jacobian(*args))
    columns = columns.numpy()
    return np.reshape(columns, (-1, columns.shape[2])).tolist(), timings
