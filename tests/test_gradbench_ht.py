"""tracer's GradBench `ht` tool: residuals against a numpy hand model written bone by bone
and vertex by vertex, the jacobian against central differences, on a small random hand
with ADBench's skeleton layout (a wrist, five fingers of four bones, a forearm)."""

import numpy as np
import pytest

import tracer as tt
from benchmarks.gradbench.tracer_tool import ht


@pytest.fixture(autouse=True)
def eager():
    """The tool's functions run eagerly here: the same code without its C compilation, which
    GradBench's runs cover."""
    tt.config.run_functions_eagerly(True)
    yield
    tt.config.run_functions_eagerly(False)


def _euler(xzy):
    tx, tz, ty = xzy
    rx = np.array([[1, 0, 0], [0, np.cos(tx), -np.sin(tx)], [0, np.sin(tx), np.cos(tx)]])
    ry = np.array([[np.cos(ty), 0, np.sin(ty)], [0, 1, 0], [-np.sin(ty), 0, np.cos(ty)]])
    rz = np.array([[np.cos(tz), -np.sin(tz), 0], [np.sin(tz), np.cos(tz), 0], [0, 0, 1]])
    return rz @ ry @ rx


def _angle_axis(r):
    """Rodrigues' formula, as a matrix exponential of [r]x; the identity for tiny angles."""
    angle = np.linalg.norm(r)
    if angle < 1e-4:
        return np.eye(3)
    k = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]]) / angle
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)


def _bone_angles(theta, n_bones):
    """Per bone (x, z, y) Euler angles: the wrist and each finger's root none, each finger's
    first joint two, its other joints one."""
    angles = np.zeros((n_bones, 3))
    i = 6
    for finger in range(5):
        for joint in range(3):
            bone = 2 + 4 * finger + joint
            angles[bone, 0] = theta[i]
            i += 1
            if joint == 0:
                angles[bone, 1] = theta[i]
                i += 1
    return angles


def _vertices(theta, model):
    n_bones = len(model["parents"])
    angles = _bone_angles(theta, n_bones)
    absolutes = []
    for bone, parent in enumerate(model["parents"]):
        turn = np.eye(4)
        turn[:3, :3] = _euler(angles[bone])
        relative = np.array(model["base_relatives"][bone]) @ turn
        absolutes.append(relative if parent < 0 else absolutes[parent] @ relative)
    transforms = [a @ np.array(i) for a, i in zip(absolutes, model["inverse_base_absolutes"])]
    positions = []
    for x, w in zip(model["base_positions"], model["weights"]):
        positions.append(sum(wb * (t @ x)[:3] for wb, t in zip(w, transforms)))
    positions = np.array(positions)
    if model["is_mirrored"]:
        positions[:, 0] *= -1
    return positions @ _angle_axis(theta[0:3]).T + theta[3:6]


def _residuals(theta, us, input):
    data = input["data"]
    vertices = _vertices(theta, data["model"])
    out = []
    for i, (point, c) in enumerate(zip(data["points"], data["correspondences"])):
        if len(us) == 0:
            out.append(point - vertices[c])
        else:
            a, b, d = vertices[data["model"]["triangles"][c]]
            out.append(point - (us[i][0] * a + us[i][1] * b + (1 - us[i][0] - us[i][1]) * d))
    return np.concatenate(out)


def _hand(complicated, mirrored=False, seed=0):
    """A random hand of 22 bones (parents as ADBench's: the wrist, fingers of four bones
    hanging from it, a forearm) with rigid-ish base transforms, 12 vertices, 6 triangles
    and 5 observed points."""
    rng = np.random.default_rng(seed)
    parents = [-1] + [p for f in range(5) for p in (0, 1 + 4 * f, 2 + 4 * f, 3 + 4 * f)] + [0]
    n_bones, n_vertices, n_points = len(parents), 12, 5

    def transform():
        t = np.eye(4)
        t[:3, :3] = _angle_axis(rng.normal(0, 0.5, 3)) * rng.uniform(0.8, 1.2)
        t[:3, 3] = rng.normal(0, 1, 3)
        return t.tolist()

    weights = rng.uniform(0, 1, (n_vertices, n_bones)) * (rng.uniform(size=(1, n_bones)) < 0.6)
    weights = weights / weights.sum(axis=1, keepdims=True)
    model = {
        "bone_count": n_bones,
        "bone_names": [f"bone{b}" for b in range(n_bones)],
        "parents": parents,
        "base_relatives": [transform() for _ in range(n_bones)],
        "inverse_base_absolutes": [transform() for _ in range(n_bones)],
        "base_positions": np.c_[rng.normal(0, 1, (n_vertices, 3)), np.ones(n_vertices)].tolist(),
        "weights": weights.tolist(),
        "triangles": rng.integers(0, n_vertices, (6, 3)).tolist(),
        "is_mirrored": mirrored,
    }
    n_triangles_or_vertices = 6 if complicated else n_vertices
    data = {
        "model": model,
        "correspondences": rng.integers(0, n_triangles_or_vertices, n_points).tolist(),
        "points": rng.normal(0, 2, (n_points, 3)).tolist(),
    }
    us = rng.uniform(0, 0.5, (n_points, 2)).tolist() if complicated else []
    return {"theta": rng.normal(0, 0.4, 26).tolist(), "data": data, "us": us}


@pytest.mark.parametrize("complicated", [False, True])
@pytest.mark.parametrize("mirrored", [False, True])
def test_objective_matches_numpy(complicated, mirrored):
    input = _hand(complicated, mirrored)
    out, timings = ht.objective(input | {"min_runs": 2})
    assert len(timings) == 2
    want = _residuals(np.array(input["theta"]), input["us"], input)
    np.testing.assert_allclose(out, want, rtol=1e-10, atol=1e-12)


def test_tiny_global_rotation_is_the_identity():
    input = _hand(False, seed=3)
    input["theta"][0:3] = [2e-5, -3e-5, 1e-5]
    out, _ = ht.objective(input)
    np.testing.assert_allclose(out, _residuals(np.array(input["theta"]), [], input), rtol=1e-10)


@pytest.mark.parametrize("complicated", [False, True])
def test_jacobian_matches_finite_differences(complicated):
    input = _hand(complicated, seed=1)
    jacobian, _ = ht.jacobian(input)
    jacobian = np.array(jacobian)
    theta, us = np.array(input["theta"]), np.array(input["us"])
    n_us = 2 if complicated else 0
    assert jacobian.shape == (3 * len(input["data"]["points"]), n_us + 26)

    def central(f, x, k, h=1e-6):
        step = np.zeros_like(x)
        step[np.unravel_index(k, x.shape)] = h
        return (f(x + step) - f(x - step)) / (2 * h)

    pose = np.stack([central(lambda t: _residuals(t, us, input), theta, k) for k in range(26)])
    np.testing.assert_allclose(jacobian[:, n_us:], pose.T, rtol=1e-6, atol=1e-7)
    if complicated:
        # the full jacobian's us block is block diagonal: each row sees its own point's us
        for k in range(2):
            column = sum(
                central(lambda u: _residuals(theta, u, input), us, 2 * i + k)
                for i in range(len(us))
            )
            np.testing.assert_allclose(jacobian[:, k], column, rtol=1e-6, atol=1e-7)
