"""The machine's records (codegen/machine_records.py): what the compiler can do and what a
direct link names, kept beside the installation as well as in the cache, so that a process
with an empty cache runs no compiler probe and no learning link. Each process here is a
fresh one, with the folder beside the installation moved under its own PYTHONPYCACHEPREFIX
(as Python moves bytecode), and a C compiler that logs each run before it runs GCC."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests import processes

REPO = pathlib.Path(__file__).resolve().parent.parent
REAL_CC = shutil.which("cc") or shutil.which("gcc")

PROGRAM = textwrap.dedent(
    """
    import json
    import tracer as tt

    @tt.function
    def f(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.exp(x) * tt.sin(x))
        return y, tape.gradient(y, x)

    x = tt.constant([0.5, -2.0, 3.0])
    y, g = f(x)
    meta = f.get_concrete_function(x)._executable.meta
    print(json.dumps({"y": float(y), "g": g.numpy().tolist(), "link": meta.get("link"),
                      "cached": meta.get("cached")}))
    """
)
X = np.array([0.5, -2.0, 3.0], np.float32)
WANT_Y = float(np.sum(np.exp(X) * np.sin(X)))
WANT_G = (np.exp(X) * (np.sin(X) + np.cos(X))).tolist()

pytestmark = pytest.mark.skipif(
    REAL_CC is None or shutil.which("ld.gold") is None, reason="a C compiler and gold"
)


@pytest.fixture
def logging_cc(tmp_path):
    """A C compiler that appends its arguments to a log, then runs the real one."""
    log = tmp_path / "cc.log"
    cc = tmp_path / "bin" / "cc"
    cc.parent.mkdir()
    cc.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {REAL_CC} "$@"\n')
    cc.chmod(0o755)
    return cc, log


def run(cache, prefix, cc, dont_write_bytecode=False):
    environment = dict(
        os.environ,
        TRACER_CACHE_DIR=str(cache),
        PYTHONPATH=str(REPO),
        PYTHONPYCACHEPREFIX=processes.with_bytecode(prefix),
        CC=str(cc),
        PYTHONDONTWRITEBYTECODE="1" if dont_write_bytecode else "",
    )
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=environment, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(out["y"], WANT_Y, rtol=1e-5)
    np.testing.assert_allclose(out["g"], WANT_G, rtol=1e-5)
    return out


def _records_beside(prefix):
    return sorted(path.name for path in prefix.rglob("machine/*.json"))


def test_a_process_with_an_empty_cache_finds_the_machines_records_beside_the_installation(
    tmp_path, logging_cc
):
    cc, log = logging_cc
    prefix = tmp_path / "pycache"
    first = run(tmp_path / "first", prefix, cc)
    assert first["link"] == "driver" and first["cached"] is False  # learnt here
    assert "--version" in log.read_text()
    assert _records_beside(prefix) == ["links.json", "toolchains.json"]

    log.write_text("")
    second = run(tmp_path / "second", prefix, cc)  # another, empty cache
    assert second["link"] == "direct" and second["cached"] is False
    runs = log.read_text().splitlines()
    assert runs and not [r for r in runs if "--version" in r or "-print-libgcc" in r]
    assert all(" -c " in f" {r} " for r in runs)  # the units only: gold linked them


def test_the_caches_own_records_serve_where_nothing_beside_the_installation_is_kept(
    tmp_path, logging_cc
):
    """Where Python writes no bytecode, nothing is written beside the installation: the
    cache's records serve its later processes, and another empty cache learns again."""
    cc, log = logging_cc
    prefix = tmp_path / "pycache"
    assert run(tmp_path / "cache", prefix, cc, dont_write_bytecode=True)["link"] == "driver"
    assert _records_beside(prefix) == []
    assert run(tmp_path / "cache", prefix, cc, dont_write_bytecode=True)["cached"] is True
    for entry in (tmp_path / "cache").iterdir():  # the module and its plan gone, the records kept
        if entry.is_dir():
            shutil.rmtree(entry)
    log.write_text("")
    assert run(tmp_path / "cache", prefix, cc, dont_write_bytecode=True)["link"] == "direct"
    assert "--version" not in log.read_text()
    assert run(tmp_path / "other", prefix, cc, dont_write_bytecode=True)["link"] == "driver"


def test_records_beside_the_installation_are_read_without_bytecode_and_never_written(
    tmp_path, logging_cc
):
    cc, log = logging_cc
    prefix = tmp_path / "pycache"
    run(tmp_path / "first", prefix, cc)
    before = {p: p.read_bytes() for p in prefix.rglob("machine/*.json")}
    log.write_text("")
    out = run(tmp_path / "second", prefix, cc, dont_write_bytecode=True)
    assert out["link"] == "direct" and "--version" not in log.read_text()
    assert {p: p.read_bytes() for p in prefix.rglob("machine/*.json")} == before


def test_a_folder_others_may_write_to_is_not_read(tmp_path, logging_cc):
    """Records beside the installation in a folder that group or others may write are as
    untrusted as such a cache: not read, and learnt again in the cache."""
    cc, log = logging_cc
    prefix = tmp_path / "pycache"
    run(tmp_path / "first", prefix, cc)
    (folder,) = {p.parent for p in prefix.rglob("machine/*.json")}
    folder.chmod(0o777)
    log.write_text("")
    assert run(tmp_path / "second", prefix, cc)["link"] == "driver"
    assert "--version" in log.read_text()
