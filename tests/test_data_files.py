"""`tt.data.TextLineDataset` and `Dataset.list_files`, against what TensorFlow 2.21 gave for
the same files (run on this machine, 2026-12-04; quoted in the docstrings)."""

import gzip
import zlib

import numpy as np
import pytest

import tracer as tt
from tracer.data import files

Dataset = tt.data.Dataset


@pytest.fixture
def texts(tmp_path, monkeypatch):
    """one.txt "a b\\r\\nsecond\\n\\nlast", two.txt "x\\ny\\n", an empty file, and two.txt's
    text compressed by gzip and by zlib; the working folder is theirs."""
    (tmp_path / "one.txt").write_bytes(b"a b\r\nsecond\n\nlast")
    (tmp_path / "two.txt").write_bytes(b"x\ny\n")
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "z.gz").write_bytes(gzip.compress(b"g1\ng2\n"))
    (tmp_path / "z.zlib").write_bytes(zlib.compress(b"z1\nz2"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _listed(dataset):
    return list(dataset.as_numpy_iterator())


def test_text_lines(texts):
    """The three files' lines: b'a b' b'second' b'' b'last' b'x' b'y' (no "\\r", the last line
    without "\\n" kept, the empty file none); gzip's g1 g2; a dataset of names interleaved
    two at a time: x, a b, y, second, '', last, as num_parallel_reads=2 reads them; a
    string scalar spec, UNKNOWN cardinality, the repr's TextLineDatasetV2; a missing file
    NotFoundError "nope.txt; No such file or directory"."""
    lines = tt.data.TextLineDataset(["one.txt", "two.txt", "empty.txt"])
    assert _listed(lines) == [b"a b", b"second", b"", b"last", b"x", b"y"]
    assert _listed(lines.skip(1).take(2)) == [b"second", b""]
    assert _listed(tt.data.TextLineDataset("z.gz", compression_type="GZIP")) == [b"g1", b"g2"]
    assert _listed(tt.data.TextLineDataset(texts / "z.zlib", "ZLIB")) == [b"z1", b"z2"]
    names = Dataset.from_tensor_slices(["two.txt", "one.txt"])
    turns = [b"x", b"a b", b"y", b"second", b"", b"last"]
    assert _listed(names.interleave(tt.data.TextLineDataset, cycle_length=2)) == turns
    assert _listed(tt.data.TextLineDataset(["two.txt", "one.txt"], num_parallel_reads=2)) == turns
    assert _listed(tt.data.TextLineDataset(names)) == [b"x", b"y", b"a b", b"second", b"", b"last"]
    assert lines.element_spec == tt.TensorSpec([], tt.string)
    assert int(lines.cardinality()) == tt.data.UNKNOWN_CARDINALITY
    assert repr(lines).startswith("<TextLineDatasetV2 element_spec=")
    assert isinstance(lines, Dataset)
    batch = next(iter(lines.batch(3)))
    assert batch.dtype == tt.string and batch.numpy().tolist() == [b"a b", b"second", b""]
    with pytest.raises(tt.errors.NotFoundError, match="nope.txt; No such file or directory"):
        list(tt.data.TextLineDataset("nope.txt"))
    (texts / "bad.gz").write_bytes(b"not compressed")
    for kind in ("GZIP", "ZLIB"):  # TensorFlow: DataLossError, "incorrect header check"
        with pytest.raises(tt.errors.DataLossError, match=f"bad.gz: not {kind} data"):
            list(tt.data.TextLineDataset("bad.gz", compression_type=kind))
    with pytest.raises(ValueError, match="compression_type"):
        tt.data.TextLineDataset("one.txt", compression_type="LZ4")


def test_lines_across_reads(texts, monkeypatch):
    """A line split between two reads of the file comes out whole: 1,000 lines of 1 to 30
    characters read 7 bytes at a time, plain and through zlib, are numpy's split of the
    text."""
    rng = np.random.default_rng(0)
    text = b"\n".join(b"q" * int(n) for n in rng.integers(1, 31, 1000)) + b"\n"
    (texts / "long.txt").write_bytes(text)
    (texts / "long.zlib").write_bytes(zlib.compress(text))
    monkeypatch.setattr(files, "_CHUNK", 7)
    want = text.split(b"\n")[:-1]
    assert _listed(tt.data.TextLineDataset("long.txt")) == want
    assert _listed(tt.data.TextLineDataset("long.zlib", compression_type="ZLIB")) == want


def test_list_files(texts):
    """list_files("*.txt"): ./empty.txt ./one.txt ./two.txt in some order (shuffled); with
    shuffle=False sorted, absolute names as given; several patterns' matches sorted
    together; cardinality 3; no match: InvalidArgumentError "No files matched pattern"."""
    shuffled = Dataset.list_files("*.txt", seed=2)
    names = [b"./empty.txt", b"./one.txt", b"./two.txt"]
    first = _listed(shuffled)
    assert sorted(first) == names
    assert first == _listed(Dataset.list_files("*.txt", seed=2))  # each one's first pass
    assert int(shuffled.cardinality()) == 3
    assert repr(shuffled).startswith("<_ShuffleDataset element_spec=TensorSpec(shape=()")
    root = str(texts)
    ordered = Dataset.list_files(f"{root}/*.txt", shuffle=False)
    assert _listed(ordered) == [f"{root}/{n}".encode() for n in ("empty.txt", "one.txt", "two.txt")]
    both = Dataset.list_files([f"{root}/t*.txt", f"{root}/o*.txt"], shuffle=False)
    assert _listed(both) == [f"{root}/one.txt".encode(), f"{root}/two.txt".encode()]
    assert _listed(tt.data.TextLineDataset(both)) == [b"a b", b"second", b"", b"last", b"x", b"y"]
    with pytest.raises(tt.errors.InvalidArgumentError, match="No files matched pattern: .*csv"):
        Dataset.list_files(f"{root}/*.csv")
