"""A two-link robot arm's forward dynamics and its jacobian, exported as standalone C and
called from a C program (main.c) that needs no Python.

    python3 examples/export_c/arm.py [BUILD_DIR]

writes arm.h, arm.c and a Makefile to BUILD_DIR (default: examples/export_c/build), builds
the library with `make`, compiles main.c against it, runs it, and checks what the C
program prints against tracer's own results.
"""

import os
import shutil
import subprocess
import sys

import numpy as np

import tracer as tt

MASSES = (1.0, 0.8)  # kg, point masses at the ends of the links
LENGTHS = (0.5, 0.4)  # m
GRAVITY = 9.81


def dynamics(q, qd, tau):
    """Joint accelerations of the arm at angles q, velocities qd and torques tau:
    M(q) qdd + c(q, qd) + g(q) = tau, solved for qdd."""
    (m1, m2), (l1, l2) = MASSES, LENGTHS
    cos2, sin2 = tt.cos(q[1]), tt.sin(q[1])
    m11 = (m1 + m2) * l1**2 + m2 * l2**2 + 2 * m2 * l1 * l2 * cos2
    m12 = m2 * l2**2 + m2 * l1 * l2 * cos2
    m22 = m2 * l2**2
    h = m2 * l1 * l2 * sin2
    coriolis = tt.stack([-h * (2 * qd[0] * qd[1] + qd[1] ** 2), h * qd[0] ** 2])
    reach = tt.cos(q[0] + q[1])
    gravity = tt.stack(
        [
            (m1 + m2) * GRAVITY * l1 * tt.cos(q[0]) + m2 * GRAVITY * l2 * reach,
            m2 * GRAVITY * l2 * reach,
        ]
    )
    rhs = tau - coriolis - gravity
    det = m11 * m22 - m12 * m12
    return tt.stack([(m22 * rhs[0] - m12 * rhs[1]) / det, (m11 * rhs[1] - m12 * rhs[0]) / det])


def main(build):
    signature = [tt.TensorSpec([2], tt.float64)] * 3
    paths = tt.export_c(dynamics, signature, build, prefix="arm", derivatives=("jacobian",))
    print("exported:", ", ".join(os.path.basename(p) for p in paths))
    here = os.path.dirname(os.path.abspath(__file__))
    shutil.copy(os.path.join(here, "main.c"), build)
    subprocess.run(["make", "-s"], cwd=build, check=True)
    cc = os.environ.get("CC", "cc")
    command = [cc, "-std=c99", "-O2", "main.c", "-L.", "-larm", "-lm", "-o", "arm_demo"]
    subprocess.run(command, cwd=build, check=True)
    printed = subprocess.run(["./arm_demo"], cwd=build, check=True, capture_output=True, text=True)
    print(printed.stdout, end="")
    check(printed.stdout)


def check(printed):
    """The C program's numbers are tracer's: the first accelerations and jacobian, and the
    state after the simulated second (the same explicit steps in numpy on tracer's values)."""
    values = {}
    for line in printed.splitlines():
        name, _, numbers = line.partition(":")
        values[name.strip()] = np.array(numbers.split(), dtype=float)
    q, qd, tau = np.array([0.3, -0.4]), np.array([0.0, 0.5]), np.array([1.0, 0.2])
    x = [tt.constant(v) for v in (q, qd, tau)]
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        qdd = dynamics(*x)
    np.testing.assert_allclose(values["qdd"], qdd.numpy(), rtol=1e-12)
    np.testing.assert_allclose(
        values["dqdd/dq"], tape.jacobian(qdd, x[0]).numpy().ravel(), rtol=1e-12
    )
    for _ in range(1000):  # semi-implicit Euler, 1 ms steps, as main.c
        qd = qd + 0.001 * dynamics(tt.constant(q), tt.constant(qd), tt.constant(tau)).numpy()
        q = q + 0.001 * qd
    np.testing.assert_allclose(values["q(1 s)"], q, rtol=1e-9)
    print("the C program's results match tracer's")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "build"))
