"""Running a test's program in a Python process of its own, with a compile cache of its
choosing: what a second process finds in the cache an earlier one wrote."""

import atexit
import contextlib
import functools
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

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


def with_bytecode(prefix):
    """`prefix`, a PYTHONPYCACHEPREFIX folder of a test's new process, given the bytecode
    of the modules that a compiled tracer program imports, where it has none of a module:
    linked from a copy made once in this process. A new process under an empty prefix (as
    the tests that keep the machine's records beside the installation apart give each)
    compiles the sources of tracer, numpy and the standard library again, most of its
    time. Only bytecode is linked, nothing that tracer keeps beside the installation; where
    `prefix` cannot be made, the process compiles them as before. Returns `prefix`."""
    seed = _bytecode_seed()
    try:
        for folder, _, names in os.walk(seed):
            target = os.path.join(prefix, os.path.relpath(folder, seed))
            os.makedirs(target, exist_ok=True)
            for name in names:
                with contextlib.suppress(FileExistsError):
                    os.link(os.path.join(folder, name), os.path.join(target, name))
    except OSError:
        pass
    return str(prefix)


@functools.cache
def _bytecode_seed():
    """A folder of the bytecode (.pyc files alone) that a process compiling a function with
    its gradient wrote under an empty PYTHONPYCACHEPREFIX; removed when this process ends."""
    folder = pathlib.Path(tempfile.mkdtemp(prefix="tracer-test-bytecode-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    written = folder / "written"
    program = (
        "import tracer as tt\n"
        "@tt.function\n"
        "def f(x):\n"
        "    with tt.GradientTape() as tape:\n"
        "        tape.watch(x)\n"
        "        y = tt.reduce_sum(tt.sin(x))\n"
        "    return tape.gradient(y, x)\n"
        "f(tt.constant([1.0]))\n"
    )
    environment = dict(
        os.environ,
        TRACER_CACHE_DIR=str(folder / "cache"),
        PYTHONPATH=str(REPO),
        PYTHONPYCACHEPREFIX=str(written),
        PYTHONDONTWRITEBYTECODE="",
    )
    subprocess.run([sys.executable, "-c", program], env=environment, cwd=REPO, timeout=300)
    seed = folder / "seed"
    for path in written.rglob("*.pyc"):
        target = seed / path.relative_to(written)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(path, target)
    return seed
