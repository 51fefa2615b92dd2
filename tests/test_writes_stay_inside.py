"""Files written into a directory others may share stay inside it: a link planted under the
name of an event file (tt.summary) or of an exported C file is neither followed nor
written through, and a pipe there does not block the writer. What could hang runs in a
child process with a time limit, so that a regression fails instead of hanging the suite."""

import itertools
import json
import os
import pathlib
import socket
import stat
import subprocess
import sys
import textwrap
import time

import pytest

import tracer as tt
from tracer.summary import writer

REPO = pathlib.Path(__file__).resolve().parent.parent
VICTIM_TEXT = "precious\n"


def _event_names(logdir, pid, counts):
    """The names a writer made now (or in the next seconds) by process `pid` may take."""
    host = socket.gethostname().replace(os.sep, "_")
    now = int(time.time())
    return [
        logdir / f"events.out.tfevents.{t}.{host}.{pid}.{n}.v2"
        for t in range(now, now + 10)
        for n in counts
    ]


def test_a_link_at_the_event_file_s_name_is_passed_over(tmp_path, monkeypatch):
    monkeypatch.setattr(writer, "_files_made", itertools.count())  # names from .0 on
    logdir, victim = tmp_path / "logs", tmp_path / "victim"
    logdir.mkdir()
    victim.write_text(VICTIM_TEXT)
    for name in _event_names(logdir, os.getpid(), range(2)):
        os.symlink(victim, name)
    summaries = tt.summary.create_file_writer(str(logdir))
    with summaries.as_default(step=0):
        tt.summary.scalar("loss", 1.0)
    summaries.close()
    assert victim.read_text() == VICTIM_TEXT
    info = os.lstat(summaries.path)
    assert stat.S_ISREG(info.st_mode) and info.st_size > 0
    assert summaries.path.endswith(".2.v2")  # the next <n> whose name is free


FIFO_WRITER = textwrap.dedent(
    """
    import json, os, socket, sys, time
    import tracer as tt
    logdir = sys.argv[1]
    host = socket.gethostname().replace(os.sep, "_")
    now = int(time.time())
    for t in range(now, now + 10):
        os.mkfifo(os.path.join(logdir, f"events.out.tfevents.{t}.{host}.{os.getpid()}.0.v2"))
    summaries = tt.summary.create_file_writer(logdir)
    summaries.close()
    print(json.dumps(summaries.path))
    """
)


def test_a_pipe_at_the_event_file_s_name_does_not_block_the_writer(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-c", FIFO_WRITER, str(tmp_path)],
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    path = json.loads(completed.stdout)
    assert path.endswith(".1.v2") and stat.S_ISREG(os.lstat(path).st_mode)


def test_a_writer_whose_names_are_all_taken_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(writer, "_files_made", itertools.count())
    monkeypatch.setattr(writer, "MAX_NAMES_TRIED", 3)
    for name in _event_names(tmp_path, os.getpid(), range(3)):
        name.write_bytes(b"")
    with pytest.raises(FileExistsError, match=r"the next 3 names of this process .* are all taken"):
        tt.summary.create_file_writer(str(tmp_path))


def test_exported_c_replaces_links_in_the_output_directory_instead_of_following_them(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    victims = {}
    for name in ("f.h", "f.c", "Makefile"):
        victims[name] = tmp_path / f"victim-{name}"
        victims[name].write_text(VICTIM_TEXT)
        os.symlink(victims[name], out / name)

    @tt.function
    def f(x):
        return x * 2.0

    paths = f.get_concrete_function(tt.TensorSpec([3])).export_c(str(out), prefix="f")
    assert sorted(os.path.basename(p) for p in paths) == sorted(victims)
    assert all(victim.read_text() == VICTIM_TEXT for victim in victims.values())
    for path in paths:
        info = os.lstat(path)
        assert stat.S_ISREG(info.st_mode) and info.st_size > 0
    assert sorted(os.listdir(out)) == sorted(victims)  # no staging file left behind
    assert "int f(const float *x" in (out / "f.h").read_text()
