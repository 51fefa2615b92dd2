"""Running a measurement as a Python program of its own, shared by the scripts that time
compiled systems in fresh processes (compile_time.py, cheap_gradient.py, size_scaling.py)."""

import contextlib
import json
import os
import subprocess
import sys
import tempfile


def environment(**extra):
    """This process's environment for a measured program: bytecode may be written (imports
    as users see them), and JAX on the CPU."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "JAX_PLATFORMS": "cpu", **extra}


def run_program(code, env, timeout=900, folder=None):
    """{"status": "ok", **the JSON the program prints last}; "skipped" when a module is
    missing (a peer not installed), "failed" otherwise, with the error's last line.

    The program runs from a file, as users' programs do: tf.function's autograph (and
    tracer's) reads the source of the function it converts, and `python -c` has none (it
    took 40 ms off tf.function's first call of B22 at 10 layers, and skipped its conversion).
    The file is `folder`/program.py where a folder is given (a program run again from the
    same path, as a user's script is), else in a folder of its own. The current folder stays importable, as with -c."""
    paths = [os.getcwd(), *filter(None, [env.get("PYTHONPATH")])]
    with contextlib.ExitStack() as stack:
        if folder is None:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="tracer-program-"))
        path = os.path.join(folder, "program.py")
        with open(path, "w") as handle:
            handle.write(code)
        done = subprocess.run(
            [sys.executable, path],
            capture_output=True,
            text=True,
            env={**env, "PYTHONPATH": os.pathsep.join(paths)},
            timeout=timeout,
        )
    if done.returncode != 0:
        missing = "ModuleNotFoundError" in done.stderr
        detail = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return {"status": "skipped" if missing else "failed", "detail": detail}
    return {"status": "ok", **json.loads(done.stdout.strip().splitlines()[-1])}
