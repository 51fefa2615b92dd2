"""Running a test's program in a Python process of its own, with a compile cache of its
choosing: what a second process finds in the cache an earlier one wrote."""

import json
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent


def run_json(program, cache, *arguments):
    """The JSON that `program` (Python source) prints, run with `arguments` in a new process
    whose TRACER_CACHE_DIR is `cache`; the test fails with its error output where it fails."""
    return run_with_errors(program, cache, *arguments)[0]


def run_with_errors(program, cache, *arguments):
    """`run_json`'s JSON and what the process wrote to its standard error."""
    environment = dict(os.environ, TRACER_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    completed = subprocess.run(
        [sys.executable, "-c", program, *arguments],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout), completed.stderr
