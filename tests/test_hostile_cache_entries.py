"""Cache files that are not regular files: a pipe, a link to a device, a link to a file
elsewhere or a file past its size in place of an entry's meta.json or library, or of a
record. Each is refused without blocking or reading without end, and the entry is built
again as a damaged one is (docs/reliability.md). The reads run in a child process with a
time limit and a memory limit, so that a regression fails instead of hanging the suite."""

import json
import os
import pathlib
import resource
import subprocess
import sys
import textwrap

import pytest

from codegen import cache

REPO = pathlib.Path(__file__).resolve().parent.parent
KEY = "a" * 64
LIBRARY = "_tracer_test.so"
MEMORY_LIMIT = 1 << 30  # a read without end runs into it and fails

LOOKUP = textwrap.dedent(
    """
    import json, logging, os, sys
    from codegen import cache
    logging.basicConfig()
    found = cache.lookup(sys.argv[1], sys.argv[2])
    entry = os.path.join(cache.cache_root(), sys.argv[1])
    print(json.dumps({"found": found is not None, "entry left": os.path.lexists(entry)}))
    """
)

READ_SEALED = (
    "import json, sys; from codegen import cache; print(json.dumps(cache.read_sealed(sys.argv[1])))"
)


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _child(program, cache_dir, *args):
    """Run `program` with the cache at `cache_dir`: (its JSON answer, its stderr)."""
    completed = subprocess.run(
        [sys.executable, "-c", program, *args],
        env=dict(os.environ, TRACER_CACHE_DIR=str(cache_dir), PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_limit_memory,
        cwd=REPO,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout), completed.stderr


@pytest.fixture
def entry(tmp_path, monkeypatch):
    """A sound entry for KEY, published as a build publishes one."""
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path / "cache"))

    def build(directory):
        pathlib.Path(directory, LIBRARY).write_bytes(b"\x7fELF not really a library")
        return {}

    cache.publish(KEY, LIBRARY, build)
    return tmp_path / "cache" / KEY


def _plant(path, kind, tmp_path):
    """Put `kind` in the place of the file `path`."""
    elsewhere = tmp_path / f"elsewhere-{path.name}"
    elsewhere.write_bytes(path.read_bytes())
    path.unlink()
    if kind == "pipe":
        os.mkfifo(path)
    elif kind == "link to /dev/zero":
        os.symlink("/dev/zero", path)
    elif kind == "link to a copy":  # the same bytes, digest and all, outside the entry
        os.symlink(elsewhere, path)
    else:
        assert kind == "too large"
        path.write_bytes(b" " * (cache.META_MAX_BYTES + 1))


def test_a_sound_entry_is_found(entry):
    assert _child(LOOKUP, entry.parent, KEY, LIBRARY)[0] == {"found": True, "entry left": True}


@pytest.mark.parametrize(
    "target, kind",
    [
        ("meta.json", "pipe"),
        ("meta.json", "link to /dev/zero"),
        ("meta.json", "link to a copy"),
        ("meta.json", "too large"),
        (LIBRARY, "pipe"),
        (LIBRARY, "link to /dev/zero"),
        (LIBRARY, "link to a copy"),
    ],
)
def test_an_entry_with_a_file_that_is_not_regular_is_removed(entry, tmp_path, target, kind):
    _plant(entry / target, kind, tmp_path)
    answer, stderr = _child(LOOKUP, entry.parent, KEY, LIBRARY)
    assert answer == {"found": False, "entry left": False}
    assert "removing the damaged cache entry" in stderr and target in stderr


@pytest.mark.parametrize("kind", ["pipe", "link to /dev/zero", "link to a copy"])
def test_a_record_that_is_not_a_regular_file_is_ignored_and_removed(tmp_path, kind):
    path = tmp_path / "cache" / "toolchains.json"
    path.parent.mkdir(mode=0o700)
    cache.write_sealed(str(path), {"cc": {"threads": True}})
    _plant(path, kind, tmp_path)
    answer, stderr = _child(READ_SEALED, path.parent, str(path))
    assert answer == {} and "ignoring the damaged record" in stderr
    assert not os.path.lexists(path)


PROGRAM = textwrap.dedent(
    """
    import json
    import numpy as np
    import tracer as tt

    @tt.function(backend="c")
    def f(x):
        return x * 2.0 + 1.0

    concrete = f.get_concrete_function(tt.TensorSpec([3], tt.float32))
    y = f(np.ones(3, np.float32)).numpy()
    meta = getattr(concrete._executable, "meta", {})
    print(json.dumps({"y": y.tolist(), "cached": meta.get("cached")}))
    """
)


@pytest.mark.parametrize("kind", ["pipe", "link to /dev/zero"])
def test_a_compiled_function_builds_again_over_a_hostile_library(tmp_path, kind):
    cache_dir = tmp_path / "cache"
    assert _child(PROGRAM, cache_dir)[0] == {"y": [3.0, 3.0, 3.0], "cached": False}
    (library,) = cache_dir.glob("*/_tracer_*.so")
    _plant(library, kind, tmp_path)
    answer, stderr = _child(PROGRAM, cache_dir)
    assert answer == {"y": [3.0, 3.0, 3.0], "cached": False}, stderr
    assert library.is_file() and not library.is_symlink()
    assert _child(PROGRAM, cache_dir)[0]["cached"] is True  # repaired: the next one loads it
