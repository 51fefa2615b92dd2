"""tracer's GradBench `ba` tool: errors against a numpy bundle adjustment written with a
rotation matrix, the sparse jacobian against central differences, and the eval's output
format."""

import numpy as np
import pytest

import tracer as tt
from benchmarks.gradbench.tracer_tool import ba


@pytest.fixture(autouse=True)
def eager():
    """The tool's functions run eagerly here: the same code without its C compilation, which
    GradBench's runs cover."""
    tt.config.run_functions_eagerly(True)
    yield
    tt.config.run_functions_eagerly(False)


def _rotation(r):
    """Rodrigues' rotation matrix of angle-axis `r` (the identity plus [r]x at zero)."""
    k = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
    theta = np.linalg.norm(r)
    if theta == 0:
        return np.eye(3) + k
    k = k / theta
    return np.eye(3) + np.sin(theta) * k + (1 - np.cos(theta)) * (k @ k)


def _errors(cams, points, weights, feats, cam_of, point_of):
    """Stacked reprojection errors (2p) and weight errors (p), observation by observation."""
    reproj = []
    for i, (c, j) in enumerate(zip(cam_of, point_of)):
        cam = cams[c]
        x = _rotation(cam[0:3]) @ (points[j] - cam[3:6])
        proj = x[:2] / x[2]
        rsq = proj @ proj
        proj = proj * (1 + cam[9] * rsq + cam[10] * rsq**2) * cam[6] + cam[7:9]
        reproj.append(weights[i] * (proj - feats[i]))
    return np.concatenate(reproj), 1 - weights**2


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    n, m, p = 3, 4, 7
    cams = np.concatenate(
        [
            rng.normal(0, 0.3, (n, 3)),
            rng.normal(0, 1, (n, 3)),
            rng.uniform(300, 500, (n, 1)),
            rng.normal(0, 5, (n, 2)),
            rng.normal(0, 0.05, (n, 2)),
        ],
        axis=1,
    )
    cams[1, :3] = 0  # the zero-rotation branch
    points = rng.normal(0, 1, (m, 3)) + [0, 0, 8]
    weights = rng.uniform(0.2, 1.5, p)
    feats = rng.normal(0, 10, (p, 2))
    cam_of = rng.integers(0, n, p).astype(np.int32)
    point_of = rng.integers(0, m, p).astype(np.int32)
    return n, m, p, cams, points, weights, feats, cam_of, point_of


def test_errors_match_numpy():
    n, m, p, *args = _problem()
    reproj, w_err = ba._objective(*[tt.constant(a) for a in args])
    want_reproj, want_w = _errors(*args)
    np.testing.assert_allclose(np.reshape(reproj.numpy(), -1), want_reproj, rtol=1e-12)
    np.testing.assert_allclose(w_err.numpy(), want_w, rtol=1e-12)


def test_sparse_jacobian_matches_finite_differences():
    n, m, p, cams, points, weights, feats, cam_of, point_of = _problem(1)
    args = [tt.constant(a) for a in (cams, points, weights, feats, cam_of, point_of)]
    rows, cols, vals = (a.numpy() for a in ba._jacobian(n, m, *args))
    assert len(rows) == 3 * p + 1 and rows[-1] == len(cols) == len(vals) == 31 * p
    dense = np.zeros((3 * p, 11 * n + 3 * m + p))
    for r in range(3 * p):
        dense[r, cols[rows[r] : rows[r + 1]]] = vals[rows[r] : rows[r + 1]]

    flat = np.concatenate([cams.ravel(), points.ravel(), weights])

    def f(v):
        c = v[: 11 * n].reshape(n, 11)
        x = v[11 * n : 11 * n + 3 * m].reshape(m, 3)
        return np.concatenate(_errors(c, x, v[11 * n + 3 * m :], feats, cam_of, point_of))

    numeric = np.empty_like(dense)
    for k in range(len(flat)):
        h = 1e-6 * max(1.0, abs(flat[k]))
        step = np.zeros_like(flat)
        step[k] = h
        numeric[:, k] = (f(flat + step) - f(flat - step)) / (2 * h)
    np.testing.assert_allclose(dense, numeric, rtol=1e-6, atol=1e-5 * np.abs(numeric).max())


def test_eval_output_format():
    input = {
        "n": 2,
        "m": 3,
        "p": 10,
        "cam": [0.1, -0.2, 0.05, 0.3, 0.1, -0.4, 400.0, 2.0, -1.0, 0.01, 0.001],
        "x": [0.5, -0.3, 6.0],
        "w": 0.7,
        "feat": [3.0, -2.0],
    }
    out, timings = ba.objective(input)
    assert len(timings) == 1
    assert out["reproj_error"]["repeated"] == 10 and out["w_err"]["repeated"] == 10
    assert out["w_err"]["element"] == 1 - 0.7**2
    want, _ = _errors(
        np.array([input["cam"]] * 2),
        np.array([input["x"]] * 3),
        np.full(10, 0.7),
        np.array([input["feat"]] * 10),
        [0, 1] * 5,
        [0, 1, 2] * 3 + [0],
    )
    np.testing.assert_allclose(out["reproj_error"]["elements"], want[:2], rtol=1e-12)

    out, _ = ba.jacobian(input | {"min_runs": 2})
    assert [len(out[k]) for k in ("rows", "cols", "vals")] == [31, 31, 31]
    assert out["rows"][:3] == [0, 15, 30] and out["rows"][-1] == 31 * 10
    # observation 0: camera 0, point 0, weight 0; the last nonzero: weight error 4
    assert out["cols"][:15] == list(range(11)) + [22, 23, 24, 31] == out["cols"][15:30]
    assert out["cols"][-1] == 22 + 9 + 9
    assert np.isclose(out["vals"][14], want[0] / 0.7) and np.isclose(out["vals"][-1], -1.4)
