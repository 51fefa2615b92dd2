"""tt.train.Checkpoint and CheckpointManager: round trips, resuming training exactly, atomic
saves, and clear errors for mismatched models and damaged files."""

import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tracer as tt

rng = np.random.default_rng(3)
FEATURES = rng.standard_normal((32, 5)).astype(np.float32)
LABELS = rng.integers(0, 3, 32)


def classifier(seed):
    tt.random.set_seed(seed)
    return tt.keras.Sequential(
        [
            tt.keras.layers.Dense(8, activation="relu"),
            tt.keras.layers.Dropout(0.25),
            tt.keras.layers.Dense(3),
        ]
    )


def train_step(model, optimizer):
    loss_fn = tt.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tt.function
    def step(x, y):
        with tt.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


def values(variables):
    return [np.array(v.numpy()) for v in variables]


def test_resumed_training_equals_uninterrupted_training(tmp_path):
    model, optimizer = classifier(1), tt.keras.optimizers.Adam(0.01)
    step = train_step(model, optimizer)
    for _ in range(5):
        step(FEATURES, LABELS)
    manager = tt.train.CheckpointManager(
        tt.train.Checkpoint(model=model, optimizer=optimizer), tmp_path, max_to_keep=3
    )
    manager.save()
    uninterrupted = [float(step(FEATURES, LABELS)) for _ in range(5)]

    # a new process would do this: a fresh model (other weights, not built yet), restored
    fresh, fresh_optimizer = classifier(2), tt.keras.optimizers.Adam(0.01)
    checkpoint = tt.train.Checkpoint(model=fresh, optimizer=fresh_optimizer)
    status = checkpoint.restore(tt.train.latest_checkpoint(tmp_path))
    with pytest.raises(AssertionError, match="wait for their layers"):
        status.assert_consumed()
    resumed_step = train_step(fresh, fresh_optimizer)
    resumed = [float(resumed_step(FEATURES, LABELS)) for _ in range(5)]
    status.assert_consumed()
    assert resumed == uninterrupted  # dropout masks, Adam's moments and step included
    for got, want in zip(values(fresh.variables), values(model.variables)):
        np.testing.assert_array_equal(got, want)
    assert int(fresh_optimizer.iterations.numpy()) == 10


def test_restore_into_a_built_model_assigns_at_once(tmp_path):
    model = tt.keras.Sequential([tt.keras.layers.Dense(2)])
    model(FEATURES)
    saved = values(model.variables)
    path = tt.train.Checkpoint(model=model).save(tmp_path / "ckpt")
    assert path == str(tmp_path / "ckpt-1") and os.path.isfile(path + ".npz")
    for v in model.variables:
        v.assign(tt.zeros_like(v))
    tt.train.Checkpoint(model=model).restore(path).assert_consumed()
    for got, want in zip(values(model.variables), saved):
        np.testing.assert_array_equal(got, want)


def test_modules_with_containers_round_trip(tmp_path):
    module = tt.Module()
    module.weights = {"w": tt.Variable([1.0, 2.0]), "blocks": [tt.Variable(3.0), tt.Variable(4)]}
    checkpoint = tt.train.Checkpoint(module=module)
    path = checkpoint.write(str(tmp_path / "exact"))
    assert path == str(tmp_path / "exact")
    saved = values(module.variables)
    for v in module.variables:
        v.assign(tt.zeros_like(v))
    status = checkpoint.read(path)
    status.assert_existing_objects_matched()
    for got, want in zip(values(module.variables), saved):
        np.testing.assert_array_equal(got, want)
    assert sorted(np.load(path + ".npz").files) == [
        ".index",
        "module/weights/blocks/0",
        "module/weights/blocks/1",
        "module/weights/w",
    ]


def test_save_counter_numbers_checkpoints_and_is_restored(tmp_path):
    v = tt.Variable(1.0)
    checkpoint = tt.train.Checkpoint(v=v)
    first = checkpoint.save(tmp_path / "c")
    second = checkpoint.save(tmp_path / "c")
    assert (first, second) == (str(tmp_path / "c-1"), str(tmp_path / "c-2"))
    assert tt.train.latest_checkpoint(tmp_path) == second
    other = tt.train.Checkpoint(v=tt.Variable(0.0))
    other.restore(first)
    assert int(other.save_counter.numpy()) == 1 and float(other._objects["v"].numpy()) == 1.0
    other.read(second)  # read leaves the counter alone
    assert int(other.save_counter.numpy()) == 1


def test_manager_keeps_the_latest_and_a_new_manager_finds_them(tmp_path):
    v = tt.Variable(0.0)
    checkpoint = tt.train.Checkpoint(v=v)
    manager = tt.train.CheckpointManager(checkpoint, tmp_path, max_to_keep=2)
    assert manager.latest_checkpoint is None and manager.restore_or_initialize() is None
    for value in range(4):
        v.assign(float(value))
        manager.save()
    kept = [str(tmp_path / "ckpt-3"), str(tmp_path / "ckpt-4")]
    assert manager.checkpoints == kept
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "ckpt-3.npz", "ckpt-4.npz"]
    assert manager.save(checkpoint_number=100) == str(tmp_path / "ckpt-100")

    w = tt.Variable(-1.0)
    again = tt.train.CheckpointManager(tt.train.Checkpoint(v=w), tmp_path, max_to_keep=2)
    assert again.checkpoints == [kept[1], str(tmp_path / "ckpt-100")]
    assert again.restore_or_initialize() == str(tmp_path / "ckpt-100")
    assert float(w.numpy()) == 3.0
    with pytest.raises(ValueError, match="max_to_keep"):
        tt.train.CheckpointManager(checkpoint, tmp_path, max_to_keep=0)


def test_shape_or_dtype_mismatch_names_the_variable_and_restores_nothing(tmp_path):
    small = tt.keras.Sequential([tt.keras.layers.Dense(3, name="head")])
    small(FEATURES)
    path = tt.train.Checkpoint(model=small).write(str(tmp_path / "small"))
    other = tt.keras.Sequential([tt.keras.layers.Dense(4, name="head_4")])
    other(FEATURES)
    before = values(other.variables)
    with pytest.raises(ValueError, match=r"head_4/bias: .*shape \(4,\).*\(3,\)"):
        tt.train.Checkpoint(model=other).read(path)
    for got, want in zip(values(other.variables), before):
        np.testing.assert_array_equal(got, want)  # nothing was assigned, not even the kernel

    tt.train.Checkpoint(v=tt.Variable(1.0, dtype=tt.float64)).write(str(tmp_path / "f64"))
    with pytest.raises(ValueError, match="dtype float32.*float64"):
        tt.train.Checkpoint(v=tt.Variable(1.0)).read(str(tmp_path / "f64"))


def _damaged(data):
    """Ways of damaging a checkpoint file's bytes."""
    middle = len(data) // 2
    return {
        "truncated": data[:middle],
        "empty": b"",
        "garbage": bytes(rng.integers(0, 256, len(data), dtype=np.uint8)),
        "flipped": data[:middle] + bytes([data[middle] ^ 0x40]) + data[middle + 1 :],
    }


@pytest.mark.parametrize("damage", ["truncated", "empty", "garbage", "flipped"])
def test_damaged_files_are_refused_before_anything_is_restored(tmp_path, damage):
    v = tt.Variable(np.arange(4000, dtype=np.float32))
    path = tt.train.Checkpoint(v=v).write(str(tmp_path / "ckpt"))
    with open(path + ".npz", "rb") as file:
        data = file.read()
    with open(path + ".npz", "wb") as file:
        file.write(_damaged(data)[damage])
    target = tt.Variable(np.zeros(4000, dtype=np.float32))
    with pytest.raises(tt.train.CheckpointError, match="damaged|not a tracer checkpoint"):
        tt.train.Checkpoint(v=target).read(path)
    assert not np.any(target.numpy())


def test_files_that_are_not_checkpoints_are_refused(tmp_path):
    np.savez(tmp_path / "plain.npz", v=np.ones(3))
    with pytest.raises(tt.train.CheckpointError, match="not a tracer checkpoint"):
        tt.train.Checkpoint(v=tt.Variable(np.zeros(3))).read(str(tmp_path / "plain"))
    with pytest.raises(tt.train.CheckpointError, match="no checkpoint at"):
        tt.train.Checkpoint(v=tt.Variable(1.0)).read(str(tmp_path / "missing"))
    (tmp_path / "checkpoint").write_text("{not json")
    with pytest.raises(tt.train.CheckpointError, match="checkpoint list .* is damaged"):
        tt.train.latest_checkpoint(tmp_path)


def test_a_save_killed_midway_leaves_the_previous_checkpoint_readable(tmp_path):
    script = textwrap.dedent(
        f"""
        import os, signal
        import numpy as np
        import tracer as tt
        v = tt.Variable(np.full(1000, 1.0))
        manager = tt.train.CheckpointManager(tt.train.Checkpoint(v=v), {str(tmp_path)!r}, 2)
        manager.save()
        v.assign(np.full(1000, 2.0))
        os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)  # dies with the data written
        manager.save()
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert run.returncode == -9, run.stderr.decode()
    v = tt.Variable(np.zeros(1000))
    manager = tt.train.CheckpointManager(tt.train.Checkpoint(v=v), tmp_path, 2)
    assert manager.checkpoints == [str(tmp_path / "ckpt-1")]
    manager.restore_or_initialize()
    np.testing.assert_array_equal(v.numpy(), np.full(1000, 1.0))


def test_restore_of_nothing_and_of_values_with_no_variable(tmp_path):
    v = tt.Variable(1.0)
    checkpoint = tt.train.Checkpoint(a=v, b=tt.Variable(2.0))
    with pytest.raises(AssertionError, match="no checkpoint was given"):
        checkpoint.restore(None).assert_consumed()  # no checkpoint yet: nothing restored
    path = checkpoint.write(str(tmp_path / "two"))
    restored = tt.train.Checkpoint(a=v)
    status = restored.read(path)
    with pytest.raises(AssertionError, match=r"\['b'\] wait for .* checkpoints' objects"):
        status.assert_consumed()
    status.expect_partial()
    restored.b = later = tt.Variable(0.0)  # as TensorFlow's deferred restoration
    assert later.numpy() == 2.0 and restored.b is later
    status.assert_consumed()
    with pytest.raises(AssertionError, match=r"\['b'\] matched no variable"):
        tt.train.Checkpoint(a=v, b=[]).read(path).assert_consumed()
    with pytest.raises(AssertionError, match=r"no saved value: \['c'\]"):
        tt.train.Checkpoint(a=v, c=tt.Variable(0.0)).read(path).assert_existing_objects_matched()


def test_objects_a_checkpoint_cannot_save_are_refused():
    with pytest.raises(TypeError, match="model=1.5 is not something a checkpoint saves"):
        tt.train.Checkpoint(model=1.5)


def test_optimizer_slots_restore_into_an_optimizer_that_has_none_yet(tmp_path):
    w = tt.Variable([1.0, 2.0])
    optimizer = tt.keras.optimizers.SGD(0.1, momentum=0.9)
    optimizer.apply_gradients([(tt.constant([1.0, -1.0]), w)])
    path = tt.train.Checkpoint(w=w, optimizer=optimizer).write(str(tmp_path / "sgd"))
    w2, fresh = tt.Variable([0.0, 0.0]), tt.keras.optimizers.SGD(0.1, momentum=0.9)
    tt.train.Checkpoint(w=w2, optimizer=fresh).read(path).assert_consumed()
    np.testing.assert_allclose(fresh.get_slot(w2, "momentum").numpy(), [-0.1, 0.1])
    for opt, var in ((optimizer, w), (fresh, w2)):
        opt.apply_gradients([(tt.constant([1.0, 1.0]), var)])
    np.testing.assert_array_equal(w2.numpy(), w.numpy())


def test_keras_style_example_resumes_where_an_uninterrupted_run_would_be(tmp_path, capsys):
    path = pathlib.Path(__file__).parent.parent / "examples" / "train_keras_style.py"
    spec = importlib.util.spec_from_file_location("train_keras_style", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    example.train(tmp_path / "interrupted", steps=200, every=100)
    resumed = example.train(tmp_path / "interrupted", steps=400, every=100)
    assert "resumed from" in capsys.readouterr().out
    uninterrupted = example.train(tmp_path / "whole", steps=400, every=100)
    assert resumed == {step: uninterrupted[step] for step in (300, 400)}
    loss, accuracy = uninterrupted[400]
    assert loss < 0.2 and accuracy > 0.9
    assert sorted(os.listdir(tmp_path / "whole")) == [
        "checkpoint",
        "ckpt-2.npz",
        "ckpt-3.npz",
        "ckpt-4.npz",
    ]


def test_list_and_load_variables_read_a_file_or_a_directory_s_latest(tmp_path):
    module = tt.Module()
    module.w = tt.Variable(np.arange(6.0).reshape(2, 3))
    manager = tt.train.CheckpointManager(tt.train.Checkpoint(net=module), tmp_path, 1)
    path = manager.save()
    listed = [("net/w", [2, 3]), ("save_counter", [])]
    assert tt.train.list_variables(path) == tt.train.list_variables(tmp_path) == listed
    np.testing.assert_array_equal(tt.train.load_variable(tmp_path, "net/w"), module.w.numpy())
    with pytest.raises(ValueError, match="no value 'net/b'"):
        tt.train.load_variable(path, "net/b")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(tt.train.CheckpointError, match="no checkpoint listed"):
        tt.train.list_variables(empty)


def test_a_checkpoints_objects_are_its_attributes_and_objects_set_later_are_saved(tmp_path):
    """TensorFlow's guide: `ckpt.step.assign_add(1)`, and objects set on a checkpoint after
    it is made (`checkpoint.net = ...`), saved and restored as keyword arguments are."""
    checkpoint = tt.train.Checkpoint(step=tt.Variable(1))
    checkpoint.step.assign_add(4)
    checkpoint.extra = {"w": tt.Variable([1.0, 2.0])}
    path = checkpoint.save(str(tmp_path / "ckpt"))
    again = tt.train.Checkpoint(step=tt.Variable(0), extra={"w": tt.Variable([0.0, 0.0])})
    again.restore(path).assert_consumed()
    assert int(again.step) == 5 and again.extra["w"].numpy().tolist() == [1.0, 2.0]
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        checkpoint.missing  # noqa: B018
    with pytest.raises(TypeError, match="other=1.5 is not something a checkpoint saves"):
        checkpoint.other = 1.5
    with pytest.raises(AttributeError, match="save_counter"):
        checkpoint.save_counter = tt.Variable(0)


def test_a_value_waits_on_a_checkpoint_object_until_its_attribute_is_set(tmp_path):
    """The checkpoint guide's deferred restoration through checkpoints standing for layers:
    a value whose variable is not set yet is assigned when it is."""
    net = tt.keras.Sequential([tt.keras.layers.Dense(3)])
    net(tt.ones([1, 2]))
    path = tt.train.Checkpoint(net=net).save(str(tmp_path / "ckpt"))
    bias = tt.Variable(tt.zeros([3]))
    fake_layer = tt.train.Checkpoint(bias=bias)
    root = tt.train.Checkpoint(net=tt.train.Checkpoint(layers=[fake_layer]))
    root.restore(path).assert_existing_objects_matched()
    np.testing.assert_array_equal(bias.numpy(), net.layers[0].bias.numpy())
    kernel = tt.Variable(tt.zeros([2, 3]))
    fake_layer.kernel = kernel
    np.testing.assert_array_equal(kernel.numpy(), net.layers[0].kernel.numpy())


def test_a_dataset_iterator_resumes_where_its_checkpoint_was(tmp_path):
    """An iterator in a checkpoint saves how many elements it gave; restored (into a new
    iterator, or the same one moved on) its next element is the one after them."""
    dataset = tt.data.Dataset.range(5).repeat().batch(2)
    iterator = iter(dataset)
    checkpoint = tt.train.Checkpoint(iterator=iterator)
    taken = [next(iterator).numpy().tolist() for _ in range(4)]
    assert taken == [[0, 1], [2, 3], [4, 0], [1, 2]]
    path = checkpoint.save(str(tmp_path / "ckpt"))
    assert next(iterator).numpy().tolist() == [3, 4]
    checkpoint.restore(path)
    assert next(iterator).numpy().tolist() == [3, 4]  # back where it was saved
    fresh = iter(dataset)
    tt.train.Checkpoint(iterator=fresh).restore(path).assert_consumed()
    assert [next(fresh).numpy().tolist() for _ in range(2)] == [[3, 4], [0, 1]]
    assert tt.train.load_checkpoint(path).get_tensor("iterator/position") == 4
    finite = iter(tt.data.Dataset.range(3))
    tt.train.Checkpoint(iterator=finite).restore(path)  # past its end: it is exhausted
    with pytest.raises(StopIteration):
        next(finite)


def test_the_manager_gives_paths_in_the_directory_as_it_was_given(tmp_path, monkeypatch):
    """`./tf_ckpts/ckpt-1`, as TensorFlow prints them in its checkpoint guide; the files are
    where the directory was when the manager was made."""
    monkeypatch.chdir(tmp_path)
    checkpoint = tt.train.Checkpoint(v=tt.Variable(1.0))
    manager = tt.train.CheckpointManager(checkpoint, "./tf_ckpts", max_to_keep=2)
    assert [manager.save() for _ in range(3)] == [f"./tf_ckpts/ckpt-{n}" for n in (1, 2, 3)]
    assert manager.checkpoints == ["./tf_ckpts/ckpt-2", "./tf_ckpts/ckpt-3"]
    assert manager.latest_checkpoint == "./tf_ckpts/ckpt-3" and manager.directory == "./tf_ckpts"
    assert tt.train.latest_checkpoint("./tf_ckpts/") == "./tf_ckpts/ckpt-3"
    assert sorted(p.name for p in (tmp_path / "tf_ckpts").glob("ckpt-*")) == [
        "ckpt-2.npz",
        "ckpt-3.npz",
    ]
    monkeypatch.chdir(tmp_path.parent)
    checkpoint.v.assign(5.0)
    assert manager.restore_or_initialize() == "./tf_ckpts/ckpt-3"
    assert float(checkpoint.v) == 1.0


def test_a_checkpoint_reader_gives_shapes_dtypes_and_values(tmp_path):
    v = tt.Variable(np.arange(6.0).reshape(2, 3))
    path = tt.train.Checkpoint(model={"w": v}, n=tt.Variable(3)).save(str(tmp_path / "c"))
    reader = tt.train.load_checkpoint(str(tmp_path))
    assert reader.get_variable_to_shape_map() == {"model/w": [2, 3], "n": [], "save_counter": []}
    assert reader.get_variable_to_dtype_map()["n"] == tt.int32
    np.testing.assert_array_equal(reader.get_tensor("model/w"), v.numpy())
    assert reader.has_tensor("n") and not reader.has_tensor("m")
    with pytest.raises(tt.errors.NotFoundError, match="Key m not found in checkpoint"):
        reader.get_tensor("m")
    assert tt.train.load_checkpoint(path).get_tensor("n") == 3
