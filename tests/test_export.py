"""Standalone C export: the whole op catalogue exported (values, first and second
derivatives), compiled as users compile it (C99, -Wall -Wextra -Werror -pedantic; and under
AddressSanitizer and UBSan), called from a C main, compared with the interpreter."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import tracer as tt
from tests import exported_c
from tests.test_backends import FLOAT32_CASES, derivatives
from tests.test_gradients import ALL_CASES
from tracer.export_entries import export_concretes


def _catalogue():
    """(C name, concrete function, inputs) for every case, float64 and float32."""
    cases = []
    for name, (function, args) in sorted(ALL_CASES.items()):
        arrays = [np.asarray(a) for a in args]
        cases.append((name, function, arrays))
        if name in FLOAT32_CASES:
            cases.append((f"{name}_f32", function, [a.astype(np.float32) for a in arrays]))
    built = []
    for name, function, arrays in cases:
        inputs = [tt.constant(a, dtype=a.dtype) for a in arrays]
        run = tt.function(derivatives(function, len(arrays)), backend="interpreter")
        built.append((f"op_{name}", run.get_concrete_function(*inputs), arrays))
    return built


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp("catalogue"))
    cases = _catalogue()
    export_concretes(directory, "ops", [(name, concrete) for name, concrete, _ in cases])
    expected = [[r.numpy() for r in concrete(*arrays)] for _, concrete, arrays in cases]
    calls = [
        exported_c.Call(name, arrays, results)
        for (name, _, arrays), results in zip(cases, expected)
    ]
    with open(os.path.join(directory, "main.c"), "w") as handle:
        handle.write(exported_c.main_source("ops", calls))
    return directory, calls, expected


def test_the_catalogue_compiles_with_strict_c99_warnings_as_errors_and_keeps_no_state(catalogue):
    """Warnings are errors (-O2, where GCC's flow analysis warns too), and the object has no
    writable static or global data (nm: b, B, d, D): every value lives in the caller's
    arguments and workspace, so threads may call it at once. (A static the code writes stays
    at -O2; one it never writes, which the optimizer may fold away, is no shared state.)"""
    directory, _, _ = catalogue
    obj = os.path.join(directory, "ops.o")
    source = os.path.join(directory, "ops.c")
    command = [exported_c.compiler(), *exported_c.STRICT, "-O2", "-c", source, "-o", obj]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]
    symbols = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    writable = [line for line in symbols.splitlines() if line.split()[-2] in "bBdD"]
    assert writable == []
    assert " T ops_work_size" in symbols and " T op_matmul" in symbols
    with open(source) as handle:
        assert not re.search(r"TR_IN_UNIT .*work", handle.read())  # the split's estimates


@pytest.mark.slow
def test_the_catalogue_runs_under_address_and_undefined_sanitizers_as_the_interpreter(catalogue):
    directory, calls, expected = catalogue
    main = os.path.join(directory, "main.c")
    program = exported_c.build(directory, "ops", exported_c.SANITIZED, [main])
    for call, got, want in zip(calls, exported_c.run(program, calls), expected):
        tolerance = 1e-5 if call.function.endswith("f32") else 1e-10
        for g, w in zip(got, want):  # a float32 sum of terms near 1 that cancels is 1e-7 off
            np.testing.assert_allclose(
                g, w, rtol=tolerance, atol=tolerance * 0.1, err_msg=call.function
            )


def _export_and_run(tmp_path, function, signature, calls, work_dims=(), **options):
    """Export `function`, call it from C under the sanitizers: the outputs of each call."""
    directory = str(tmp_path)
    prefix = options.pop("prefix", function.__name__)
    tt.export_c(function, signature, directory, prefix=prefix, **options)
    main = os.path.join(directory, "main.c")
    with open(main, "w") as handle:
        handle.write(exported_c.main_source(prefix, calls, work_dims))
    exported_c.build(directory, prefix, [*exported_c.STRICT, "-O2"], [main])
    return exported_c.run(exported_c.build(directory, prefix, exported_c.SANITIZED, [main]), calls)


def layer(x, w):
    return tt.reduce_sum(tt.tanh(x @ w) * 2.0, axis=1)


def test_sizes_unknown_at_export_are_arguments_and_the_vjp_matches_the_tape(tmp_path):
    rng = np.random.default_rng(0)
    calls, expected = [], []
    for n in (1, 7):
        x, w, dy = rng.standard_normal((n, 3)), rng.standard_normal((3, 2)), rng.standard_normal(n)
        xt, wt = tt.constant(x), tt.constant(w)
        with tt.GradientTape() as tape:
            tape.watch([xt, wt])
            y = layer(xt, wt)
        grads = tape.gradient(y, [xt, wt], output_gradients=tt.constant(dy))
        calls.append(exported_c.Call("layer", [x, w], [y.numpy()], dims=[n]))
        calls.append(exported_c.Call("layer_vjp", [x, w, dy], [g.numpy() for g in grads], [n]))
        expected += [[np.sum(np.tanh(x @ w) * 2, axis=1)], [g.numpy() for g in grads]]
    signature = [tt.TensorSpec([None, 3], tt.float64), tt.TensorSpec([3, 2], tt.float64)]
    results = _export_and_run(tmp_path, layer, signature, calls, [7], derivatives=("vjp",))
    for got, want in zip(results, expected):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)
    header = (tmp_path / "layer.h").read_text()
    assert (
        "int layer(const double *x, const double *w, int64_t d0, double *out, void *work);"
        in header
    )
    assert "size_t layer_work_size(int64_t d0);" in header


def arm(q):
    """The tip of a planar two-link arm (links 1.0 and 0.7) at joint angles q."""
    first = q[0]
    both = q[0] + q[1]
    return tt.stack([tt.cos(first) + 0.7 * tt.cos(both), tt.sin(first) + 0.7 * tt.sin(both)])


def energy(q):
    return tt.reduce_sum(arm(q) * arm(q)) + tt.reduce_prod(tt.sin(q))


def test_jacobian_and_hessian_entry_points_match_the_analytic_derivatives(tmp_path):
    q = np.array([0.3, -1.1], np.float32)
    a, b = q[0], q[0] + q[1]
    jacobian = np.array(
        [
            [-np.sin(a) - 0.7 * np.sin(b), -0.7 * np.sin(b)],
            [np.cos(a) + 0.7 * np.cos(b), 0.7 * np.cos(b)],
        ]
    )
    calls = [
        exported_c.Call("arm", [q], [np.zeros(2, np.float32)]),
        exported_c.Call("arm_jacobian", [q], [np.zeros((2, 2), np.float32)]),
    ]
    spec = [tt.TensorSpec([2], tt.float32)]
    tip, jac = _export_and_run(tmp_path / "arm", arm, spec, calls, derivatives=("jacobian",))
    np.testing.assert_allclose(
        tip[0], [np.cos(a) + 0.7 * np.cos(b), np.sin(a) + 0.7 * np.sin(b)], rtol=1e-6
    )
    np.testing.assert_allclose(jac[0], jacobian, rtol=1e-5, atol=1e-6)
    # |tip|^2 = 1.49 + 1.4 cos(q1), plus sin(q0) sin(q1)
    q = q.astype(np.float64)
    s0, s1, c0, c1 = np.sin(q[0]), np.sin(q[1]), np.cos(q[0]), np.cos(q[1])
    hessian = np.array([[-s0 * s1, c0 * c1], [c0 * c1, -1.4 * c1 - s0 * s1]])
    gradient = np.array([c0 * s1, -1.4 * s1 + s0 * c1])
    calls = [
        exported_c.Call("energy_vjp", [q, np.array(2.0)], [2 * gradient]),
        exported_c.Call("energy_hessian", [q], [hessian]),
    ]
    spec = [tt.TensorSpec([2], tt.float64)]
    grad, hess = _export_and_run(
        tmp_path / "energy", energy, spec, calls, derivatives=("vjp", "hessian")
    )
    np.testing.assert_allclose(grad[0], 2 * gradient, rtol=1e-12)
    np.testing.assert_allclose(hess[0], hessian, rtol=1e-12, atol=1e-14)


def test_variables_frozen_or_as_arguments_a_c_training_step_matches_tracers(tmp_path):
    init_w, init_b = np.array([[1.0, -2.0], [0.5, 0.25]]), np.array([0.1, -0.3])
    x = np.random.default_rng(3).standard_normal((4, 2))

    def model():
        w, b = tt.Variable(init_w, name="w"), tt.Variable(init_b, name="b")
        optimizer = tt.optimizers.SGD(0.1, momentum=0.5)

        def step(x):
            with tt.GradientTape() as tape:
                loss = tt.reduce_sum(tt.square(x @ w + b))
            optimizer.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
            return loss

        return w, b, optimizer, step

    w, b, optimizer, step = model()
    spec = [tt.TensorSpec([4, 2], tt.float64)]
    tt.export_c(step, spec, str(tmp_path), variables="arguments")
    header = (tmp_path / "step.h").read_text()
    signature = header[header.index("int step(") :].split(";")[0]
    assert "double *w, double *b" in signature and "double *out" in signature
    # the C step, three times on the same arrays, against tracer's eager step
    slots = _documented_arguments(header, "step")[3:-1]  # after x, w, b; before out
    roles = {name: role for name, _, _, role in slots}
    rate = [name for name in roles if "learning_rate" in name]
    assert len(rate) == 1 and roles.pop(rate[0]) == "input"  # read, never written
    assert list(roles.values()) == ["input, read and written"] * len(roles) != []
    main = _step_main([init_w, init_b], slots, x, {rate[0]: 0.1})
    (tmp_path / "main.c").write_text(main)
    program = exported_c.build(
        str(tmp_path), "step", exported_c.SANITIZED, [str(tmp_path / "main.c")]
    )
    w2, b2, _, eager_step = model()
    losses = [float(eager_step(tt.constant(x))) for _ in range(3)]
    out = subprocess.run([program], capture_output=True, check=True).stdout
    values = np.frombuffer(out, np.float64)
    np.testing.assert_allclose(values[:3], losses, rtol=1e-12)
    np.testing.assert_allclose(values[3:7], w2.numpy().ravel(), rtol=1e-12)
    np.testing.assert_allclose(values[7:9], b2.numpy(), rtol=1e-12)

    def predict(x):
        return x @ w2 + b2

    results = _export_and_run(
        tmp_path / "frozen",
        predict,
        [tt.TensorSpec([None, 2], tt.float64)],
        [exported_c.Call("predict", [x], [np.zeros((4, 2))], dims=[4])],
        [4],
        variables="frozen",
    )
    np.testing.assert_allclose(results[0][0], x @ w2.numpy() + b2.numpy(), rtol=1e-12)
    assert "double *w" not in (tmp_path / "frozen" / "predict.h").read_text()


def _documented_arguments(header, entry):
    """(name, dtype, size, role) of each argument as the header documents `entry`'s."""
    block = header[header.index(f"/* {entry}: ") : header.index(f"int {entry}(")]
    found = []
    for line in block.splitlines()[1:-1]:
        name, dtype, shape, role = re.match(
            r"\s*\*\s+(\S+)\s+(\w+)\[([^\]]*)\]\s+(.*)", line
        ).groups()
        size = int(np.prod([int(d) for d in shape.split(",") if d.strip()]))
        found.append((name, dtype, size, role.split(" (")[0]))
    return found


def _step_main(weights, slots, x, starts):
    """A C main that runs the exported step three times and writes the losses, w and b; the
    slots start at zero, those in `starts` at their value there."""
    lines = ["#include <stdio.h>", "#include <stdlib.h>", '#include "step.h"', "int main(void) {"]
    lines.append(f"    double x[] = {{{', '.join(v.hex() for v in x.ravel())}}};")
    lines.append(f"    double w[] = {{{', '.join(v.hex() for v in weights[0].ravel())}}};")
    lines.append(f"    double b[] = {{{', '.join(v.hex() for v in weights[1].ravel())}}};")
    arguments = ["x", "w", "b"]
    for k, (name, dtype, size, _) in enumerate(slots):
        start = float(starts.get(name, 0.0)).hex()
        lines.append(f"    {exported_c._ctype(dtype)} s{k}[{max(1, size)}] = {{{start}}};")
        arguments.append(f"s{k}")
    lines += [
        "    double loss[3];",
        "    void *work = malloc(step_work_size());",
        "    for (int i = 0; i < 3; i++)",
        f"        if (step({', '.join(arguments)}, &loss[i], work)) return 1;",
        "    fwrite(loss, 8, 3, stdout); fwrite(w, 8, 4, stdout); fwrite(b, 8, 2, stdout);",
        "    free(work);",
        "    return 0;",
        "}",
    ]
    return "\n".join(lines) + "\n"


def pick(table, index):
    return tt.gather(table, index) * 2.0


def test_a_bad_index_returns_an_error_code_whose_message_names_the_line(tmp_path):
    directory = str(tmp_path)
    spec = [tt.TensorSpec([3], tt.float64), tt.TensorSpec([2], tt.int32)]
    tt.export_c(pick, spec, directory)
    table = np.array([1.0, 2.0, 3.0])
    main = os.path.join(directory, "main.c")
    calls = [exported_c.Call("pick", [table, np.array([2, 0], np.int32)], [np.zeros(2)])]
    with open(main, "w") as handle:
        handle.write(exported_c.main_source("pick", calls))
    program = exported_c.build(directory, "pick", exported_c.SANITIZED, [main])
    np.testing.assert_array_equal(exported_c.run(program, calls)[0][0], [6.0, 2.0])
    calls = [exported_c.Call("pick", [table, np.array([1, 3], np.int32)], [np.zeros(2)])]
    with open(main, "w") as handle:
        handle.write(exported_c.main_source("pick", calls))
    program = exported_c.build(directory, "pick", exported_c.SANITIZED, [main])
    result = subprocess.run([program], capture_output=True, text=True)
    assert result.returncode == 1
    assert "pick: gather: an index is out of range" in result.stderr
    assert "test_export.py" in result.stderr  # the line of the user's gather


def test_the_makefile_builds_a_library_portable_by_default_and_with_a_cblas(tmp_path):
    blas = pytest.importorskip("scipy_openblas32")
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((5, 4)), rng.standard_normal((4, 3))

    def product(a, b):
        return tt.nn.relu(a @ b)

    spec = [tt.TensorSpec([5, 4], tt.float64), tt.TensorSpec([4, 3], tt.float64)]
    directory = str(tmp_path)
    tt.export_c(product, spec, directory)
    makefile = (tmp_path / "Makefile").read_text()
    assert "-march=native" not in makefile.split("ARCH_FLAGS =")[1].splitlines()[0]
    calls = [exported_c.Call("product", [a, b], [np.zeros((5, 3))])]
    (tmp_path / "main.c").write_text(exported_c.main_source("product", calls))
    for options, libraries in [
        ([], []),
        (
            [
                "BLAS_FLAGS=-DPRODUCT_USE_CBLAS -I"
                + blas.get_include_dir()
                + " -Dcblas_dgemm=scipy_cblas_dgemm -Dcblas_sgemm=scipy_cblas_sgemm"
            ],
            [
                "-L" + blas.get_lib_dir(),
                "-l" + blas.get_library(),
                "-Wl,-rpath," + blas.get_lib_dir(),
            ],
        ),
    ]:
        subprocess.run(["make", "-s", "clean"], cwd=directory, check=True)
        subprocess.run(["make", "-s", *options], cwd=directory, check=True)
        program = os.path.join(directory, "program")
        command = [
            exported_c.compiler(),
            "-I",
            directory,
            os.path.join(directory, "main.c"),
            "-o",
            program,
        ]
        subprocess.run([*command, "-L", directory, "-lproduct", *libraries, "-lm"], check=True)
        symbols = subprocess.run(
            ["nm", os.path.join(directory, "libproduct.a")], capture_output=True, text=True
        ).stdout
        assert ("scipy_cblas_dgemm" in symbols) == bool(options)
        got = exported_c.run(program, calls)[0][0]
        np.testing.assert_allclose(got, np.maximum(a @ b, 0), rtol=1e-12)


SCRIPT = '''
import tracer as tt

def pendulum(state, torque):
    """theta'' = -g/l sin(theta) - damping theta' + torque."""
    theta, omega = state[0], state[1]
    return tt.stack([omega, -9.81 * tt.sin(theta) - 0.1 * omega + torque])
'''


def test_the_command_line_exports_a_script_function_with_its_derivatives(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "tracer", "export", f"{script}:pendulum"]
    result = subprocess.run(
        [*command, "--args", "f64[2], f64[]", "--out", str(out), "--jacobian", "--prefix", "pend"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert f"wrote {out / 'pend.h'}" in result.stdout
    header = (out / "pend.h").read_text()
    assert (
        "int pend_jacobian(const double *state, const double *torque, double *jacobian_state, double *jacobian_torque, void *work);"
        in header
    )
    state, torque = np.array([0.4, -0.2]), np.array(0.3)
    calls = [exported_c.Call("pend_jacobian", [state, torque], [np.zeros((2, 2)), np.zeros(2)])]
    (out / "main.c").write_text(exported_c.main_source("pend", calls))
    program = exported_c.build(str(out), "pend", [*exported_c.STRICT, "-O2"], [str(out / "main.c")])
    jacobian_state, jacobian_torque = exported_c.run(program, calls)[0]
    np.testing.assert_allclose(jacobian_state, [[0, 1], [-9.81 * np.cos(0.4), -0.1]], rtol=1e-14)
    np.testing.assert_allclose(jacobian_torque, [0, 1])
    bad = subprocess.run(
        [*command, "--args", "f64[2], f64[]", "--out", str(out), "--hessian"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2
    assert bad.stderr == (
        "python -m tracer export: error: export_c: the hessian needs pendulum to return a "
        "scalar, not shape (2,)\n"
    )


def test_what_has_no_standalone_c_is_refused_with_a_clear_error(tmp_path):
    weight = tt.Variable([1.0, 2.0], name="weight")
    optimizer = tt.optimizers.SGD(0.5)

    def reads_a_variable(x):
        return x * weight

    def trains(x):
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum(x * weight)
        optimizer.apply_gradients([(tape.gradient(loss, weight), weight)])
        return loss

    def prints(x):
        tt.print("x is", x)
        return x + 1.0

    def half(x):
        return x * 2.0

    spec = [tt.TensorSpec([2])]
    cases = [
        (
            reads_a_variable,
            spec,
            {},
            r"reads the variable 'weight:0' \(created at test_export.py:\d+\): export it with variables='frozen'",
        ),
        (
            trains,
            spec,
            {"variables": "frozen"},
            "assigns the variable .*: a frozen variable cannot change",
        ),
        (
            prints,
            spec,
            {},
            r"prints calls tt.print at test_export.py:\d+: exported C has no Python",
        ),
        (
            half,
            [tt.TensorSpec([2], tt.float16)],
            {},
            "half: input computes float16 values; exported C holds float32, float64",
        ),
        (
            half,
            spec,
            {"derivatives": ("hessian",)},
            r"the hessian needs half to return a scalar, not shape \(2,\)",
        ),
        (
            half,
            [tt.TensorSpec([None])],
            {"derivatives": ("jacobian",)},
            r"the jacobian needs every size known, and argument x has shape \(None,\)",
        ),
    ]
    for function, signature, options, message in cases:
        with pytest.raises(tt.ExportError, match=message):
            tt.export_c(function, signature, str(tmp_path), **options)
    with pytest.raises(ValueError, match="derivatives are"):
        tt.export_c(half, spec, str(tmp_path), derivatives=("gradient",))
    with pytest.raises(ValueError, match="variables is one of"):
        tt.export_c(reads_a_variable, spec, str(tmp_path), variables="copied")
    assert not os.listdir(tmp_path)  # nothing written by a refused export


def test_concrete_functions_export_with_the_same_names_and_results(tmp_path):
    f = tt.function(layer)
    x, w = np.ones((2, 3)), np.full((3, 2), 0.25)
    concrete = f.get_concrete_function(
        tt.TensorSpec([2, 3], tt.float64), tt.TensorSpec([3, 2], tt.float64)
    )
    paths = concrete.export_c(str(tmp_path), prefix="dense")
    assert sorted(os.path.basename(p) for p in paths) == ["Makefile", "dense.c", "dense.h"]
    calls = [exported_c.Call("dense", [x, w], [np.zeros(2)])]
    (tmp_path / "main.c").write_text(exported_c.main_source("dense", calls))
    program = exported_c.build(
        str(tmp_path), "dense", exported_c.SANITIZED, [str(tmp_path / "main.c")]
    )
    np.testing.assert_allclose(exported_c.run(program, calls)[0][0], f(x, w).numpy(), rtol=1e-14)


def test_the_robot_arm_example_builds_its_c_program_and_matches_tracer(tmp_path):
    script = os.path.join(os.path.dirname(__file__), "..", "examples", "export_c", "arm.py")
    result = subprocess.run([sys.executable, script, str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "the C program's results match tracer's" in result.stdout
    assert (tmp_path / "libarm.a").exists() and (tmp_path / "arm_demo").exists()
    # one TensorSpec passed for three parameters: each argument still has its own name
    header = (tmp_path / "arm.h").read_text()
    assert (
        "int arm(const double *q, const double *qd, const double *tau, double *out, void *work);"
        in header
    )


def simulate(x0, theta):
    """Converted control flow: a tensor loop and a branch, with the loop's gradient."""
    with tt.GradientTape() as tape:
        tape.watch(x0)
        x = x0
        for _ in tt.range(50):
            x = x + 0.01 * (tt.sin(theta * x) - 0.5 * x * x * x)
        if tt.reduce_sum(x) > 0.0:
            loss = tt.reduce_sum(x * x)
        else:
            loss = tt.reduce_sum(tt.abs(x))
    return loss, tape.gradient(loss, x0)


def test_loops_and_branches_export_with_their_gradients(tmp_path):
    rng = np.random.default_rng(8)
    calls, expected = [], []
    compiled = tt.function(simulate, backend="interpreter")
    for n, sign in ((3, 1.0), (5, -1.0)):
        x0, theta = sign * np.abs(rng.standard_normal(n)), np.array(1.3)
        loss, grad = compiled(x0, theta)
        calls.append(exported_c.Call("simulate", [x0, theta], [loss.numpy(), grad.numpy()], [n]))
        expected.append([loss.numpy(), grad.numpy()])
    signature = [tt.TensorSpec([None], tt.float64), tt.TensorSpec([], tt.float64)]
    results = _export_and_run(tmp_path, simulate, signature, calls, [5])
    for got, want in zip(results, expected):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)
    source = (tmp_path / "simulate.c").read_text()
    assert "/* while (" in source and "/* cond (" in source  # a C loop, not 50 copies


def test_variables_that_swap_values_are_exchanged_in_place(tmp_path):
    """b's new value is a's old one: the old values are kept in the workspace, past the
    blocks of the function's own values."""
    a, b = tt.Variable([1.0, 2.0], name="a"), tt.Variable([5.0, 7.0], name="b")

    def swap(x):
        old = a.read_value()
        a.assign(b)
        b.assign(old)
        return x * 2.0

    tt.export_c(swap, [tt.TensorSpec([None], tt.float64)], str(tmp_path), variables="arguments")
    main = "\n".join(
        [
            "#include <stdio.h>",
            "#include <stdlib.h>",
            '#include "swap.h"',
            "int main(void) {",
            "    const double x[3] = {1, 2, 3};",
            "    float a[2] = {1, 2}, b[2] = {5, 7};",
            "    double out[3];",
            "    void *work = malloc(swap_work_size(3));",
            "    if (swap(x, a, b, 3, out, work)) return 1;",
            "    fwrite(a, 4, 2, stdout); fwrite(b, 4, 2, stdout); fwrite(out, 8, 3, stdout);",
            "    free(work);",
            "    return 0;",
            "}",
        ]
    )
    (tmp_path / "main.c").write_text(main + "\n")
    flags = [*exported_c.SANITIZED, "-Wall", "-Wextra", "-Werror", "-pedantic"]
    program = exported_c.build(str(tmp_path), "swap", flags, [str(tmp_path / "main.c")])
    out = subprocess.run([program], capture_output=True, check=True).stdout
    np.testing.assert_array_equal(np.frombuffer(out[:16], np.float32), [5, 7, 1, 2])
    np.testing.assert_array_equal(np.frombuffer(out[16:], np.float64), [2, 4, 6])


def pooled(x):
    return tt.nn.max_pool2d(x, 2, 2, "VALID") * 2.0


def test_pooling_of_zero_channels_exports_as_iso_c(tmp_path):
    """The window kernels keep per-channel arrays of at least one element: ISO C has no
    arrays of size 0, and the strict build (-pedantic -Werror) refuses them."""
    x = np.zeros((1, 4, 4, 0), np.float32)
    calls = [exported_c.Call("pooled", [x], [np.zeros((1, 2, 2, 0), np.float32)])]
    (results,) = _export_and_run(tmp_path, pooled, [tt.TensorSpec([1, 4, 4, 0], tt.float32)], calls)
    assert results[0].size == 0


def loss_and_gradient(x):
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(tt.sin(x) * tt.exp(-x * x) + tt.tanh(x) * x)
    return y, tape.gradient(y, x)


def test_a_loss_and_its_gradient_in_one_loop_export_and_match_tracer(tmp_path):
    """Past the caches the loss (a sum over every element) and its gradient are one kernel of
    two results; the exported entry point writes both, as tracer computes them."""
    x = np.linspace(-2.0, 2.0, 300_001)
    compiled = tt.function(loss_and_gradient)
    concrete = compiled.get_concrete_function(tt.constant(x))
    assert "(f64[], f64[300001]) = fused[kernel=k_reduce_sum_" in concrete.ir("optimized")
    y, g = compiled(tt.constant(x))
    calls = [exported_c.Call("loss_and_gradient", [x], [y.numpy(), g.numpy()])]
    signature = [tt.TensorSpec([300_001], tt.float64)]
    ((got_y, got_g),) = _export_and_run(tmp_path, loss_and_gradient, signature, calls)
    np.testing.assert_allclose(got_y, y.numpy(), rtol=1e-12)
    np.testing.assert_allclose(got_g, g.numpy(), rtol=1e-12, atol=1e-14)  # libm and libmvec


def products_summed(x, y, w):
    return tt.reduce_sum(x * y), tt.reduce_sum(x * w), tt.reduce_sum(y * w * 0.5)


def test_sums_over_one_shape_export_as_one_loop_of_several_accumulators(tmp_path):
    """The three sums are one kernel (tracer/passes/fuse.py, `_merged`) in exported C too,
    which builds with the strict flags and runs under the sanitizers with numpy's sums."""
    rng = np.random.default_rng(3)
    x, y, w = (rng.standard_normal((40, 30)) for _ in range(3))
    signature = [tt.TensorSpec([40, 30], tt.float64)] * 3
    expected = [np.sum(x * y), np.sum(x * w), np.sum(y * w * 0.5)]
    calls = [exported_c.Call("products_summed", [x, y, w], expected)]
    (got,) = _export_and_run(tmp_path, products_summed, signature, calls)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    source = (tmp_path / "products_summed.c").read_text()
    assert "acc0 += " in source and "acc2 += " in source


def test_sparse_results_export_as_their_tensors(tmp_path):
    """An IndexedSlices or a SparseTensor result is two outputs of the C function, named
    after its parts (a gradient through a gather; a reordered sparse tensor)."""

    def gathered(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.gather(x, [2, 0, 2]) ** 2)
        return y, tape.gradient(y, x)

    def reordered(v):
        return tt.sparse.reorder(tt.SparseTensor([[1, 0], [0, 1]], v * 3.0, [2, 2]))

    x = np.array([[1.0, -2.0], [0.5, 3.0], [4.0, 0.25]])
    want_y, want_grad = tt.function(gathered)(x)
    calls = [
        exported_c.Call(
            "gathered",
            [x],
            [want_y.numpy(), want_grad.values.numpy(), want_grad.indices.numpy()],
        )
    ]
    ((y, values, indices),) = _export_and_run(
        tmp_path / "g", gathered, [tt.TensorSpec([3, 2], tt.float64)], calls
    )
    with open(tmp_path / "g" / "gathered.h") as handle:
        # the indices in the gather's dtype (int32 for a list), as TensorFlow's IndexedSlices
        assert "double *out1_values, int32_t *out1_indices" in handle.read()
    np.testing.assert_allclose(y, 2 * (x[2] ** 2).sum() + (x[0] ** 2).sum(), rtol=1e-12)
    dense = np.zeros_like(x)
    np.add.at(dense, indices, values)
    np.testing.assert_allclose(dense, [[2.0, -4.0], [0.0, 0.0], [16.0, 1.0]], rtol=1e-12)

    v = np.array([1.5, -2.0])
    calls = [exported_c.Call("reordered", [v], [np.zeros((2, 2), np.int64), np.zeros(2)])]
    ((indices, values),) = _export_and_run(
        tmp_path / "r", reordered, [tt.TensorSpec([2], tt.float64)], calls
    )
    assert indices.tolist() == [[0, 1], [1, 0]]
    np.testing.assert_allclose(values, [-6.0, 4.5], rtol=1e-12)
