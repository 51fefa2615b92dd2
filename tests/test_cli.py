"""`python -m tracer`: doctor (with and without a C compiler), ir, export, cache."""

import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np

import tracer as tt
from tests import exported_c

REPO = pathlib.Path(__file__).resolve().parent.parent


def tracer_cli(*args, tmp_path, env=None):
    environment = dict(os.environ, PYTHONPATH=str(REPO), TRACER_CACHE_DIR=str(tmp_path / "cache"))
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "tracer", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
        cwd=tmp_path,
    )


def test_doctor_finds_the_compiler_and_runs_a_test_kernel(tmp_path):
    result = tracer_cli("doctor", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "C compiler: " in out and "none" not in out.split("C compiler: ")[1].splitlines()[0]
    assert "test kernel: compiled and ran" in out and "results match numpy" in out
    assert "backend='auto' will use: C" in out
    assert f"cache: {tmp_path / 'cache'}" in out


def test_doctor_without_a_compiler_says_so_and_names_the_fallback(tmp_path):
    environment = {"PATH": str(tmp_path / "empty"), "CC": ""}
    result = tracer_cli("doctor", tmp_path=tmp_path, env=environment)
    assert result.returncode == 0, result.stderr
    assert "C compiler: none that works" in result.stdout
    assert "backend='auto' will use: the numpy interpreter" in result.stdout


def test_ir_prints_each_stage_and_the_c(tmp_path):
    script = tmp_path / "model.py"
    script.write_text(
        textwrap.dedent(
            """
        import tracer as tt

        def loss(x, w):
            return tt.reduce_sum(tt.nn.relu(x @ w) ** 2)
        """
        )
    )
    optimized = tracer_cli(
        "ir", f"{script}:loss", "--args", "f32[2,3], f32[3,4]", tmp_path=tmp_path
    )
    assert optimized.returncode == 0, optimized.stderr
    lines = optimized.stdout.splitlines()
    assert lines[0] == "%0: f32[2,3] = input[name='x']"
    assert any(
        "= fused[kernel=k_reduce_sum_relu" in line and "model.py:5" in line for line in lines
    )
    assert any(line.startswith("    ") and "relu" in line for line in lines)  # the fused body
    traced = tracer_cli(
        "ir",
        f"{script}:loss",
        "--args",
        "f32[2,3], f32[3,4]",
        "--stage",
        "traced",
        tmp_path=tmp_path,
    )
    assert "= pow %3, 2.0" in traced.stdout
    c = tracer_cli(
        "ir", f"{script}:loss", "--args", "f32[2,3],f32[3,4]", "--stage", "c", tmp_path=tmp_path
    )
    assert "int tracer_run(char **args)" in c.stdout and "model.py:5" in c.stdout
    bad = tracer_cli("ir", f"{script}:loss", "--args", "float[2]", tmp_path=tmp_path)
    assert bad.returncode != 0 and "argument spec" in bad.stderr + bad.stdout


def test_cache_info_and_clear(tmp_path):
    script = tmp_path / "f.py"
    script.write_text("import tracer as tt\n\ndef f(x):\n    return tt.sin(x) * 2.0\n")
    assert (
        tracer_cli(
            "ir", f"{script}:f", "--args", "f64[4]", "--stage", "c", tmp_path=tmp_path
        ).returncode
        == 0
    )
    info = tracer_cli("cache", "info", tmp_path=tmp_path)
    assert "(1 modules" in info.stdout
    cleared = tracer_cli("cache", "clear", tmp_path=tmp_path)
    assert "removed 1 modules" in cleared.stdout
    assert "(0 modules" in tracer_cli("cache", "info", tmp_path=tmp_path).stdout


def test_export_of_a_keras_file_gives_c_that_matches_tensorflows_outputs(tmp_path):
    """`python -m tracer export m.keras --derivatives vjp`: the forward pass of a model that
    TensorFlow 2.21's Keras saved (tests/data/keras), as standalone C with its weights
    built in; the C program's outputs are TensorFlow's for the stored inputs, and its vjp is
    tracer's gradient."""
    model_file = REPO / "tests" / "data" / "keras" / "mlp.keras"
    done = tracer_cli(
        "export", str(model_file), "--out", str(tmp_path / "c"), "--derivatives", "vjp",
        tmp_path=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    header = (tmp_path / "c" / "mlp.h").read_text()
    assert "int mlp(const float *inputs_0, int64_t d0, float *out, void *work);" in header
    stored = np.load(REPO / "tests" / "data" / "keras" / "mlp.npz")
    x, y = stored["x"], stored["y"]
    seed = np.ones_like(y)
    calls = [
        exported_c.Call("mlp", [x], [np.zeros_like(y)], dims=[len(x)]),
        exported_c.Call("mlp_vjp", [x, seed], [np.zeros_like(x)], dims=[len(x)]),
    ]
    directory = str(tmp_path / "c")
    with open(os.path.join(directory, "main.c"), "w") as handle:
        handle.write(exported_c.main_source("mlp", calls, work_dims=[len(x)]))
    program = exported_c.build(
        directory, "mlp", ["-std=c99", "-O1"], [os.path.join(directory, "main.c")]
    )
    (outputs,), (gradient,) = exported_c.run(program, calls)
    np.testing.assert_allclose(outputs, y, rtol=1e-5, atol=1e-6)
    model = tt.keras.models.load_model(str(model_file))
    inputs = tt.constant(x)
    with tt.GradientTape() as tape:
        tape.watch(inputs)
        total = tt.reduce_sum(model(inputs))
    np.testing.assert_allclose(gradient, tape.gradient(total, inputs).numpy(), rtol=1e-5, atol=1e-6)
    refused = tracer_cli(
        "export", str(tmp_path / "none.keras"), "--out", str(tmp_path), tmp_path=tmp_path
    )
    assert refused.returncode == 2 and "no file" in refused.stderr
