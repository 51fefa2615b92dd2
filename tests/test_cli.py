"""`python -m tracer`: doctor (with and without a C compiler), ir, cache."""

import os
import pathlib
import subprocess
import sys
import textwrap

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
