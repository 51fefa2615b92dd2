"""Checkpoints that do not trust their files (issue 47, items 1-4): the directory's list
cannot reach outside it, object paths cannot collide, only regular files are read and no
header can make the reader allocate more than the file holds, and a failed save changes
nothing."""

import io
import json
import os
import pathlib
import tempfile
import threading
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracer as tt
from tracer.train import files

CheckpointError = tt.train.CheckpointError


def write_list(directory, names):
    """A `checkpoint` list file naming `names`, as an attacker would write it."""
    text = json.dumps({"format": "tracer-checkpoint", "checkpoints": names})
    (directory / "checkpoint").write_text(text)


def victim(tmp_path):
    """A checkpoint outside the manager's directory, and its bytes."""
    outside = tmp_path / "outside"
    path = tt.train.Checkpoint(v=tt.Variable(7.0)).write(str(outside / "victim"))
    return path + ".npz", (outside / "victim.npz").read_bytes()


def returns_within(seconds, call):
    """Run `call` in a thread; fail (instead of hanging) when it blocks."""
    outcome = {}

    def run():
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed to the test
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"{call} blocked for {seconds} s"
    return outcome


# 1. Checkpoints are confined to their directory.


OUTSIDE = {  # ways a list entry can name outside/victim, from run/
    "parent": lambda target: "../outside/victim",
    "inner parent": lambda target: "sub/../../outside/victim",
    "absolute": lambda target: target.removesuffix(".npz"),
}


@pytest.mark.parametrize("how", sorted(OUTSIDE))
def test_a_list_naming_a_file_outside_is_refused_and_nothing_is_deleted(tmp_path, how):
    target, data = victim(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    write_list(run, [OUTSIDE[how](target)])
    v = tt.Variable(0.0)
    with pytest.raises(CheckpointError, match="checkpoint list .* entry"):
        tt.train.CheckpointManager(tt.train.Checkpoint(v=v), run, max_to_keep=1).save()
    with pytest.raises(CheckpointError, match="checkpoint list .* entry"):
        tt.train.latest_checkpoint(run)
    with pytest.raises(CheckpointError, match="checkpoint list .* entry"):
        tt.train.Checkpoint(v=v).save(run / "ckpt")
    assert os.path.isfile(target) and open(target, "rb").read() == data
    assert float(v.numpy()) == 0.0  # nothing was restored from outside either
    assert sorted(os.listdir(run)) == ["checkpoint"]


def test_a_listed_symlink_that_leads_outside_is_refused(tmp_path):
    target, data = victim(tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    os.symlink(target, run / "ckpt-1.npz")
    write_list(run, ["ckpt-1"])
    v = tt.Variable(0.0)
    with pytest.raises(CheckpointError, match="'ckpt-1' leads out of the directory"):
        manager = tt.train.CheckpointManager(tt.train.Checkpoint(v=v), run, max_to_keep=1)
        manager.restore_or_initialize()
    assert float(v.numpy()) == 0.0
    assert open(target, "rb").read() == data


def test_the_manager_deletes_only_checkpoints_of_its_own_name(tmp_path):
    v = tt.Variable(1.0)
    tt.train.Checkpoint(v=v).write(str(tmp_path / "precious"))
    manager = tt.train.CheckpointManager(tt.train.Checkpoint(v=v), tmp_path, max_to_keep=1)
    manager.save()
    write_list(tmp_path, ["precious", "ckpt-1"])  # an entry the manager did not write
    manager = tt.train.CheckpointManager(tt.train.Checkpoint(v=v), tmp_path, max_to_keep=1)
    assert manager.checkpoints == [str(tmp_path / "precious"), str(tmp_path / "ckpt-1")]
    manager.save(checkpoint_number=2)
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-2.npz", "precious.npz"]
    assert manager.checkpoints == [str(tmp_path / "ckpt-2")]


@pytest.mark.parametrize("name", ["../ckpt", "a/b", "", ".."])
def test_a_checkpoint_name_with_a_directory_is_refused(tmp_path, name):
    with pytest.raises(ValueError, match="checkpoint_name must be a file name"):
        tt.train.CheckpointManager(tt.train.Checkpoint(), tmp_path, 1, checkpoint_name=name)


# 2. Object paths cannot collide.


def round_trip(tmp_path, objects, variables):
    """Save `objects`, zero `variables`, restore; each must get its own value back."""
    wanted = [float(i + 1) for i in range(len(variables))]
    for variable, value in zip(variables, wanted):
        variable.assign(value)
    checkpoint = tt.train.Checkpoint(**objects)
    path = checkpoint.save(tmp_path / "ckpt")
    for variable in variables:
        variable.assign(0.0)
    checkpoint.restore(path).assert_consumed()
    assert [float(v.numpy()) for v in variables] == wanted
    return [name for name, _ in tt.train.list_variables(path)]


def test_a_slash_in_a_name_is_escaped_as_tensorflow_does(tmp_path):
    v1, v2 = tt.Variable(0.0), tt.Variable(0.0)
    saved = round_trip(tmp_path, {"a/b": v1, "a": {"b": v2}}, [v1, v2])
    assert saved == ["a.Sb", "a/b", "save_counter"]


def test_names_that_clash_with_the_file_format_round_trip(tmp_path):
    # `.index` is the index's own key; `file` and `allow_pickle` are np.savez's arguments
    v = [tt.Variable(0.0) for _ in range(4)]
    objects = {".index": v[0], "file": v[1], "allow_pickle": v[2], "x.npy": {"": v[3]}}
    saved = round_trip(tmp_path, objects, v)
    assert saved == ["..index", "allow_pickle", "file", "save_counter", "x..npy/"]


def test_a_dict_key_that_is_not_a_string_is_refused_naming_both(tmp_path):
    v1, v2 = tt.Variable(1.0), tt.Variable(2.0)
    with pytest.raises(ValueError, match=r"at 'd'.*dict key 1 \(int, holding a Variable\)"):
        tt.train.Checkpoint(d={1: v1, "1": v2})
    module = tt.Module()
    checkpoint = tt.train.Checkpoint(m=module)
    module.table = {0: v1}  # added after the checkpoint was made: refused when saving
    with pytest.raises(ValueError, match="at 'm/table'.*dict key 0"):
        checkpoint.save(tmp_path / "ckpt")
    assert int(checkpoint.save_counter.numpy()) == 0 and not os.listdir(tmp_path)


def test_save_counter_is_reserved(tmp_path):
    with pytest.raises(ValueError, match="'save_counter' names the checkpoint's own"):
        tt.train.Checkpoint(save_counter=tt.Variable(5, dtype=tt.int64))


def test_a_name_with_a_nul_is_refused():
    with pytest.raises(ValueError, match="NUL"):
        tt.train.Checkpoint(**{"a\x00b": tt.Variable(1.0)})


NAMES = st.one_of(
    st.text(max_size=6),
    st.sampled_from(["/", "..", ".", "a/b", "a.Sb", ".S", "1", "01", "save_counter", "é/ü"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    layout=st.dictionaries(
        NAMES,
        st.one_of(st.none(), st.dictionaries(st.one_of(NAMES, st.integers(-2, 12)), st.none())),
        min_size=1,
        max_size=4,
    )
)
def test_any_names_round_trip_or_are_refused_clearly(layout):
    variables, objects = [], {}
    for name, inner in layout.items():
        if inner is None:
            objects[name] = tt.Variable(0.0)
            variables.append(objects[name])
        else:
            objects[name] = {key: tt.Variable(0.0) for key in inner}
            variables.extend(objects[name].values())
    keys = [key for inner in layout.values() if inner for key in inner]
    texts = list(layout) + [key for key in keys if isinstance(key, str)]
    reasons = [  # why the names are refused; the first found is reported
        *(["save_counter"] if "save_counter" in layout else []),
        *(["NUL"] if any("\x00" in text for text in texts) else []),
        *(["is not a string"] if any(not isinstance(key, str) for key in keys) else []),
    ]
    if reasons:
        with pytest.raises(ValueError, match="|".join(reasons)):
            tt.train.Checkpoint(**objects)
        return
    with tempfile.TemporaryDirectory() as directory:
        saved = round_trip(pathlib.Path(directory), objects, variables)
    assert len(saved) == len(variables) + 1  # one path each, and the save counter


def test_an_object_named_self_round_trips(tmp_path):
    """`self=` is a name like any other (hypothesis found it colliding with the method's own
    parameter): saved and restored beside `root`."""
    path = tt.train.Checkpoint(self=tt.Variable(2.0), root=tt.Variable(3.0)).save(
        str(tmp_path / "ckpt")
    )
    named_self, root = tt.Variable(0.0), tt.Variable(0.0)
    tt.train.Checkpoint(self=named_self, root=root).restore(path)
    assert (float(named_self.numpy()), float(root.numpy())) == (2.0, 3.0)


# 3. Only regular files are read, and no header allocates more than the file holds.


def test_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "ckpt.npz")
    checkpoint = tt.train.Checkpoint(v=tt.Variable(1.0))
    outcome = returns_within(20, lambda: checkpoint.restore(str(tmp_path / "ckpt")))
    assert isinstance(outcome.get("error"), CheckpointError)
    assert "is a FIFO (named pipe), not a checkpoint file" in str(outcome["error"])

    os.mkfifo(tmp_path / "checkpoint")  # the list file too
    outcome = returns_within(20, lambda: tt.train.latest_checkpoint(tmp_path))
    assert isinstance(outcome.get("error"), CheckpointError)
    assert "FIFO" in str(outcome["error"])


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_symlink_to_a_device_is_refused(tmp_path):
    os.symlink("/dev/zero", tmp_path / "ckpt.npz")
    with pytest.raises(CheckpointError, match="is a character device, not a checkpoint file"):
        tt.train.Checkpoint(v=tt.Variable(1.0)).restore(str(tmp_path / "ckpt"))
    (tmp_path / "dir.npz").mkdir()
    with pytest.raises(CheckpointError, match="is a directory, not a checkpoint file"):
        tt.train.Checkpoint(v=tt.Variable(1.0)).restore(str(tmp_path / "dir"))


def npy(header, data=b""):
    """A .npy member whose header says `header`, followed by `data`."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue() + data


def forge(path, members, compression=zipfile.ZIP_STORED):
    """A checkpoint file holding exactly `members` ({name: bytes}) and a plausible index."""
    index = {"format": "tracer-checkpoint", "version": 1, "values": {}}
    index_bytes = json.dumps(index).encode()
    header = {"descr": "|u1", "fortran_order": False, "shape": (len(index_bytes),)}
    with zipfile.ZipFile(str(path) + ".npz", "w") as archive:
        archive.writestr(".index.npy", npy(header, index_bytes))
        for name, data in members.items():
            archive.writestr(name, data, compress_type=compression)


def test_a_header_claiming_a_huge_shape_is_refused_before_allocating(tmp_path):
    huge = {"descr": "<f8", "fortran_order": False, "shape": (2**40,)}
    forge(tmp_path / "ckpt", {"v.npy": npy(huge, b"\0" * 8)})
    with pytest.raises(CheckpointError, match=r"'v.npy' claims shape \(1099511627776,\)"):
        tt.train.Checkpoint(v=tt.Variable(1.0)).restore(str(tmp_path / "ckpt"))


def test_a_compressed_member_is_refused(tmp_path):
    # a deflated member can expand far beyond the file: tracer never writes one
    zeros = {"descr": "<f8", "fortran_order": False, "shape": (2**20,)}
    forge(tmp_path / "ckpt", {"v.npy": npy(zeros, bytes(8 << 20))}, zipfile.ZIP_DEFLATED)
    assert os.path.getsize(tmp_path / "ckpt.npz") < 100_000
    with pytest.raises(CheckpointError, match="'v.npy' is compressed"):
        tt.train.Checkpoint(v=tt.Variable(1.0)).restore(str(tmp_path / "ckpt"))


def test_a_member_claiming_more_bytes_than_the_file_is_refused(tmp_path):
    v = tt.Variable(np.arange(64.0))
    path = tt.train.Checkpoint(v=v).write(str(tmp_path / "ckpt"))
    data = bytearray(open(path + ".npz", "rb").read())
    central = data.rindex(b"PK\x01\x02")  # the last member's central directory entry
    data[central + 24 : central + 28] = (2**31).to_bytes(4, "little")  # its size
    data[central + 20 : central + 24] = (2**31).to_bytes(4, "little")
    open(path + ".npz", "wb").write(bytes(data))
    with pytest.raises(CheckpointError, match="claims 2147483648 bytes that the"):
        tt.train.Checkpoint(v=tt.Variable(np.zeros(64))).restore(path)


def test_an_object_dtype_is_refused(tmp_path):
    forge(tmp_path / "ckpt", {"v.npy": npy({"descr": "|O", "fortran_order": False, "shape": ()})})
    with pytest.raises(CheckpointError, match="holds dtype object, which no variable has"):
        tt.train.Checkpoint(v=tt.Variable(1.0)).restore(str(tmp_path / "ckpt"))


@pytest.mark.parametrize(
    "text, message",
    [
        ("[1, 2]", "is not a tracer checkpoint list"),
        ('{"format": "tracer-checkpoint", "checkpoints": [1]}', "its entry 1 is not the name"),
        ('{"format": "tracer-checkpoint", "checkpoints": ["a\\u0000"]}', "is not the name"),
        ("[" * 100_000 + "]" * 100_000, "is damaged: RecursionError"),
        ("\xff", "is damaged"),
    ],
)
def test_a_malformed_list_file_is_a_checkpoint_error(tmp_path, text, message):
    (tmp_path / "checkpoint").write_text(text, encoding="latin-1")
    with pytest.raises(CheckpointError, match=message):
        tt.train.latest_checkpoint(tmp_path)
    with pytest.raises(CheckpointError, match=message):
        tt.train.CheckpointManager(tt.train.Checkpoint(), tmp_path, max_to_keep=1)


# 4. A failed save changes nothing.


def test_a_save_into_a_directory_that_is_a_file_leaves_the_counter(tmp_path):
    (tmp_path / "blocked").write_text("not a directory")
    checkpoint = tt.train.Checkpoint(v=tt.Variable(1.0))
    with pytest.raises(OSError):
        checkpoint.save(tmp_path / "blocked" / "ckpt")
    assert int(checkpoint.save_counter.numpy()) == 0
    assert checkpoint.save(tmp_path / "ckpt") == str(tmp_path / "ckpt-1")


def snapshot(directory):
    """{name: bytes} of the files in `directory`."""
    return {
        name: (directory / name).read_bytes()
        for name in sorted(os.listdir(directory))
        if (directory / name).is_file()
    }


def test_a_manager_save_that_cannot_replace_its_file_changes_nothing(tmp_path):
    v = tt.Variable(1.0)
    checkpoint = tt.train.Checkpoint(v=v)
    manager = tt.train.CheckpointManager(checkpoint, tmp_path, max_to_keep=1)
    manager.save()
    (tmp_path / "ckpt-2.npz").mkdir()  # the new file cannot be renamed into place
    before = snapshot(tmp_path)
    v.assign(2.0)
    with pytest.raises(IsADirectoryError):
        manager.save()
    assert int(checkpoint.save_counter.numpy()) == 1
    assert snapshot(tmp_path) == before  # list and ckpt-1 as they were, no temp file
    assert manager.checkpoints == [str(tmp_path / "ckpt-1")]
    (tmp_path / "ckpt-2.npz").rmdir()
    assert manager.save() == str(tmp_path / "ckpt-2")
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-2.npz"]


def test_a_manager_save_whose_list_cannot_be_written_changes_nothing(tmp_path, monkeypatch):
    v = tt.Variable(1.0)
    checkpoint = tt.train.Checkpoint(v=v)
    manager = tt.train.CheckpointManager(checkpoint, tmp_path, max_to_keep=1)
    manager.save()
    before = snapshot(tmp_path)

    def refuse(directory, paths):
        raise PermissionError(13, "Permission denied", os.path.join(directory, "checkpoint"))

    monkeypatch.setattr(files, "write_state", refuse)
    v.assign(2.0)
    with pytest.raises(PermissionError):
        manager.save()
    with pytest.raises(PermissionError):
        checkpoint.save(tmp_path / "other")
    assert int(checkpoint.save_counter.numpy()) == 1
    assert snapshot(tmp_path) == before  # ckpt-1 kept (not deleted past max_to_keep)
    monkeypatch.undo()
    v.assign(0.0)
    manager.restore_or_initialize()
    assert float(v.numpy()) == 1.0


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_save_into_a_read_only_directory_leaves_the_counter(tmp_path):
    checkpoint = tt.train.Checkpoint(v=tt.Variable(1.0))
    checkpoint.save(tmp_path / "ckpt")
    before = snapshot(tmp_path)
    os.chmod(tmp_path, 0o555)
    try:
        with pytest.raises(PermissionError):
            checkpoint.save(tmp_path / "ckpt")
    finally:
        os.chmod(tmp_path, 0o755)
    assert int(checkpoint.save_counter.numpy()) == 1
    assert snapshot(tmp_path) == before
