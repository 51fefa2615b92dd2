"""tt.keras.utils.get_file and tt.keras.datasets against Keras 3's documented behaviour
(tracer/keras/downloads.py), with file:// URLs and a closed local port instead of a network."""

import gzip
import hashlib
import io
import os
import socket
import tarfile
import zipfile

import numpy as np
import pytest

import tracer as tt
from tracer.keras.datasets import mnist


def _url(path):
    return path.as_uri()


def _closed_port_url():
    with socket.socket() as s:  # a port nothing listens on once this closes
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/data.csv"


@pytest.fixture
def source(tmp_path):
    folder = tmp_path / "remote"
    folder.mkdir()
    (folder / "data.csv").write_bytes(b"a,b\n1,2\n")
    return folder


def test_get_file_fetches_once_into_cache_subdir(tmp_path, source, capsys):
    cache = tmp_path / "cache"
    path = tt.keras.utils.get_file("d.csv", _url(source / "data.csv"), cache_dir=cache)
    assert path == os.path.join(cache, "datasets", "d.csv")
    assert open(path, "rb").read() == b"a,b\n1,2\n"
    assert capsys.readouterr().out == f"Downloading data from {_url(source / 'data.csv')}\n"
    (source / "data.csv").write_bytes(b"changed\n")
    again = tt.keras.utils.get_file("d.csv", _url(source / "data.csv"), cache_dir=cache)
    assert again == path and open(path, "rb").read() == b"a,b\n1,2\n"  # the cache's copy
    assert capsys.readouterr().out == ""
    tt.keras.utils.get_file(
        "d.csv", _url(source / "data.csv"), cache_dir=cache, force_download=True
    )
    assert open(path, "rb").read() == b"changed\n"


def test_get_file_name_from_url_and_keras_home(tmp_path, source, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "home"))
    path = tt.keras.utils.get_file(origin=_url(source / "data.csv"), cache_subdir="sub")
    assert path == os.path.join(tmp_path, "home", "sub", "data.csv")


@pytest.mark.parametrize("algorithm", ["sha256", "md5"])
def test_get_file_hashes(tmp_path, source, algorithm):
    digest = hashlib.new(algorithm, b"a,b\n1,2\n").hexdigest()
    url = _url(source / "data.csv")
    path = tt.keras.utils.get_file("h.csv", url, file_hash=digest, cache_dir=tmp_path)
    assert open(path, "rb").read() == b"a,b\n1,2\n"
    wrong = "0" * len(digest)
    with pytest.raises(ValueError, match=f"The {algorithm} file hash does not match"):
        tt.keras.utils.get_file("w.csv", url, file_hash=wrong, cache_dir=tmp_path)
    assert not os.path.exists(os.path.join(tmp_path, "datasets", "w.csv"))


def test_get_file_refetches_a_cached_copy_whose_hash_differs(tmp_path, source, capsys):
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "d.csv").write_bytes(b"stale")
    digest = hashlib.sha256(b"a,b\n1,2\n").hexdigest()
    path = tt.keras.utils.get_file(
        "d.csv", _url(source / "data.csv"), file_hash=digest, cache_dir=tmp_path
    )
    assert open(path, "rb").read() == b"a,b\n1,2\n"
    assert "file hash does not match the original value" in capsys.readouterr().out


def test_get_file_failure_message_and_no_partial_file(tmp_path, capsys):
    url = _closed_port_url()
    with pytest.raises(Exception, match=f"^URL fetch failure on {url}: None -- ") as error:
        tt.keras.utils.get_file("data.csv", url, cache_dir=tmp_path)
    assert type(error.value) is Exception  # Keras raises Exception itself
    assert os.listdir(tmp_path / "datasets") == []
    assert capsys.readouterr().out == f"Downloading data from {url}\n"


@pytest.mark.parametrize("name", ["../x.csv", "a/b.csv", "..", "."])
def test_get_file_refuses_paths_as_names(tmp_path, name):
    with pytest.raises(ValueError, match="must be a file's name, not a path"):
        tt.keras.utils.get_file(name, _closed_port_url(), cache_dir=tmp_path)
    assert not os.path.exists(tmp_path / "x.csv")


def _tar(path, members):
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def test_get_file_extracts_tar_and_zip(tmp_path, source):
    _tar(source / "photos.tgz", [("photos/a.txt", b"A"), ("photos/b/c.txt", b"C")])
    with zipfile.ZipFile(source / "cards.zip", "w") as archive:
        archive.writestr("cards.csv", "x\n1\n")
    folder = tt.keras.utils.get_file(
        "flower_photos", _url(source / "photos.tgz"), untar=True, cache_dir=tmp_path
    )
    assert folder == os.path.join(tmp_path, "datasets", "flower_photos")
    assert open(os.path.join(folder, "photos", "b", "c.txt")).read() == "C"
    assert os.path.isfile(os.path.join(tmp_path, "datasets", "flower_photos_archive"))
    cards = tt.keras.utils.get_file(
        "cards.zip", _url(source / "cards.zip"), extract=True, cache_dir=tmp_path
    )
    assert cards == os.path.join(tmp_path, "datasets", "cards_extracted")
    assert open(os.path.join(cards, "cards.csv")).read() == "x\n1\n"
    assert os.path.isfile(os.path.join(tmp_path, "datasets", "cards.zip"))


def _symlink_tar(path, links):
    with tarfile.open(path, "w") as archive:
        for name, target in links:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
        data = tarfile.TarInfo("l2/escaped.txt")
        data.size = 1
        archive.addfile(data, io.BytesIO(b"2"))


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlink", "chain", "zip"])
def test_get_file_refuses_archives_that_write_outside(tmp_path, source, kind):
    archive = source / ("evil.zip" if kind == "zip" else "evil.tar")
    if kind == "dotdot":
        _tar(archive, [("ok.txt", b"1"), ("../../escaped.txt", b"2")])
    elif kind == "absolute":
        _tar(archive, [(str(tmp_path / "escaped.txt"), b"2")])
    elif kind == "symlink":
        _symlink_tar(archive, [("link", "../../outside")])
    elif kind == "chain":  # each link inside on its own; through the first, the second leads out
        _symlink_tar(archive, [("l1", "."), ("l1/l2", "..")])
    else:
        with zipfile.ZipFile(archive, "w") as z:
            z.writestr("../../escaped.txt", "2")
    cache = tmp_path / "cache"
    with pytest.raises(ValueError, match="would be written outside|goes through a link"):
        tt.keras.utils.get_file("evil", _url(archive), extract=True, cache_dir=cache)
    assert not os.path.exists(cache / "datasets" / "evil")  # nothing of it extracted
    assert sorted(os.listdir(tmp_path)) == ["cache", "remote"]


def _idx(array):
    header = bytes([0, 0, 8, array.ndim]) + np.array(array.shape, ">u4").tobytes()
    return gzip.compress(header + array.astype(np.uint8).tobytes())


def test_fashion_mnist_reads_keras_files_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    folder = tmp_path / "datasets" / "fashion-mnist"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    x_train, x_test = rng.integers(0, 256, (5, 28, 28)), rng.integers(0, 256, (3, 28, 28))
    y_train, y_test = rng.integers(0, 10, 5), rng.integers(0, 10, 3)
    for name, array in zip(
        tt.keras.datasets.fashion_mnist.FILES, (y_train, x_train, y_test, x_test)
    ):
        (folder / name).write_bytes(_idx(array))
    (a, b), (c, d) = tt.keras.datasets.fashion_mnist.load_data()
    for got, want in ((a, x_train), (b, y_train), (c, x_test), (d, y_test)):
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got, want)
    (folder / "t10k-images-idx3-ubyte.gz").write_bytes(_idx(x_test)[:-9])  # a cut file
    with pytest.raises((ValueError, EOFError)):
        tt.keras.datasets.fashion_mnist.load_data()


def test_idx_reader_checks_header_against_length(tmp_path):
    from tracer.keras.datasets.idx import read_idx

    path = tmp_path / "x.idx"
    path.write_bytes(bytes([0, 0, 8, 2]) + np.array([2, 3], ">u4").tobytes() + bytes(5))
    with pytest.raises(ValueError, match=r"of shape \(2, 3\) .* holds 18 bytes, not 17"):
        read_idx(path)
    path.write_bytes(b"PK\x03\x04")
    with pytest.raises(ValueError, match="not an IDX file"):
        read_idx(path)


def test_mnist_loads_npz_checked_by_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    (tmp_path / "datasets").mkdir()
    arrays = {
        "x_train": np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28),
        "y_train": np.array([3, 4], np.uint8),
        "x_test": np.zeros((1, 28, 28), np.uint8),
        "y_test": np.array([7], np.uint8),
    }
    np.savez(tmp_path / "datasets" / "mnist.npz", **arrays)
    digest = hashlib.sha256((tmp_path / "datasets" / "mnist.npz").read_bytes()).hexdigest()
    monkeypatch.setattr(mnist, "SHA256", digest)
    monkeypatch.setattr(mnist, "ORIGIN", _closed_port_url())  # (never fetched: the hash holds)
    (x_train, y_train), (x_test, y_test) = tt.keras.datasets.mnist.load_data()
    np.testing.assert_array_equal(x_train, arrays["x_train"])
    np.testing.assert_array_equal(y_test, arrays["y_test"])
    monkeypatch.setattr(mnist, "SHA256", "0" * 64)  # a copy that is not the file: fetched again
    with pytest.raises(Exception, match="URL fetch failure"):
        tt.keras.datasets.mnist.load_data()
