"""Running a measurement as a Python program of its own, shared by the scripts that time
compiled systems in fresh processes (compile_time.py, cheap_gradient.py, size_scaling.py)."""

import json
import os
import subprocess
import sys


def environment(**extra):
    """This process's environment for a measured program: bytecode may be written (imports
    as users see them), and JAX on the CPU."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "JAX_PLATFORMS": "cpu", **extra}


def run_program(code, env, timeout=900):
    """{"status": "ok", **the JSON the program prints last}; "skipped" when a module is
    missing (a peer not installed), "failed" otherwise, with the error's last line."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout
    )
    if done.returncode != 0:
        missing = "ModuleNotFoundError" in done.stderr
        detail = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return {"status": "skipped" if missing else "failed", "detail": detail}
    return {"status": "ok", **json.loads(done.stdout.strip().splitlines()[-1])}
