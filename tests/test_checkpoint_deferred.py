"""Deferred restoration, as TensorFlow's: a value restored before its variable exists is
assigned when the variable is made: when a module sets the attribute that holds it (a
variable, or a module holding it), or when a layer makes its weights, however it is built."""

import gc

import numpy as np
import pytest

import tracer as tt


class Lazy(tt.Module):
    """Makes its variable on its first call."""

    def __call__(self, x):
        if not hasattr(self, "w"):
            self.w = tt.Variable(tt.ones([2]))
        return x * self.w


class Holder(tt.Module):
    """Gets its sub-module later (`holder.inner = ...`)."""


class Eager(tt.Module):
    """Makes its variable when it is made."""

    def __init__(self):
        super().__init__()
        self.w = tt.Variable(tt.ones([2]))


def saved_lazy(tmp_path, value):
    module = Lazy()
    module(tt.constant([1.0, 1.0]))
    module.w.assign(value)
    return tt.train.Checkpoint(model=module).save(tmp_path / "ckpt")


def test_a_module_variable_made_on_the_first_call_gets_the_saved_value(tmp_path):
    path = saved_lazy(tmp_path, [5.0, 6.0])
    fresh = Lazy()
    status = tt.train.Checkpoint(model=fresh).restore(path)
    with pytest.raises(AssertionError, match=r"\['model/w'\] wait"):
        status.assert_consumed()
    np.testing.assert_array_equal(fresh(tt.constant([1.0, 2.0])).numpy(), [5.0, 12.0])
    status.assert_consumed()
    gc.collect()  # (modules of other tests that values waited on)
    tt.Module()
    assert "__setattr__" not in vars(tt.Module)  # nothing waits: attributes cost nothing more


def test_a_sub_module_set_later_gets_the_saved_values_now_or_when_it_makes_them(tmp_path):
    holder = Holder()
    holder.eager, holder.lazy = Eager(), Lazy()
    holder.lazy(tt.constant([1.0, 1.0]))
    holder.eager.w.assign([3.0, 4.0])
    holder.lazy.w.assign([-1.0, 2.0])
    path = tt.train.Checkpoint(model=holder).save(tmp_path / "ckpt")

    fresh = Holder()
    status = tt.train.Checkpoint(model=fresh).restore(path)
    fresh.eager = Eager()  # its variable exists: assigned as the attribute is set
    np.testing.assert_array_equal(fresh.eager.w.numpy(), [3.0, 4.0])
    fresh.lazy = Lazy()  # no variable yet: the value waits on it, for `w`
    np.testing.assert_array_equal(fresh.lazy(tt.constant([1.0, 1.0])).numpy(), [-1.0, 2.0])
    status.assert_consumed()


def test_optimizer_slots_wait_with_their_variable(tmp_path):
    module, optimizer = Lazy(), tt.keras.optimizers.SGD(0.1, momentum=0.9)
    module(tt.constant([1.0, 1.0]))
    optimizer.apply_gradients([(tt.constant([1.0, 1.0]), module.w)])
    module.w.assign([5.0, 6.0])
    optimizer.get_slot(module.w, "momentum").assign([0.5, -0.5])
    path = tt.train.Checkpoint(model=module, optimizer=optimizer).save(tmp_path / "ckpt")

    fresh, fresh_optimizer = Lazy(), tt.keras.optimizers.SGD(0.1, momentum=0.9)
    status = tt.train.Checkpoint(model=fresh, optimizer=fresh_optimizer).restore(path)
    fresh(tt.constant([1.0, 1.0]))
    np.testing.assert_array_equal(fresh.w.numpy(), [5.0, 6.0])
    np.testing.assert_array_equal(
        fresh_optimizer.get_slot(fresh.w, "momentum").numpy(), [0.5, -0.5]
    )
    status.assert_consumed()


def test_a_waiting_value_of_another_shape_is_an_error_when_its_variable_is_set(tmp_path):
    path = saved_lazy(tmp_path, [5.0, 6.0])
    fresh = Holder()
    tt.train.Checkpoint(model=fresh).restore(path)
    with pytest.raises(ValueError, match=r"shape \(3,\).*'model/w' has shape \(2,\)"):
        fresh.w = tt.Variable(tt.zeros([3]))


def dense(units=2):
    return tt.keras.layers.Dense(units, kernel_initializer="zeros")


def saved_dense(tmp_path):
    layer = dense()
    layer(tt.ones([1, 3]))
    layer.kernel.assign(tt.fill([3, 2], 7.0))
    layer.bias.assign([1.0, -1.0])
    return tt.train.Checkpoint(layer=layer).save(tmp_path / "dense")


def test_a_layer_built_explicitly_gets_the_saved_values(tmp_path):
    path = saved_dense(tmp_path)
    layer = dense()
    status = tt.train.Checkpoint(layer=layer).restore(path)
    layer.build((None, 3))
    np.testing.assert_array_equal(layer.kernel.numpy(), np.full((3, 2), 7.0))
    np.testing.assert_array_equal(layer(tt.ones([1, 3])).numpy(), [[22.0, 20.0]])  # 3*7 + b
    status.assert_consumed()


class OwnWeights(tt.keras.layers.Layer):
    """Keeps its weight only where add_weight puts it (no attribute of its own)."""

    def build(self, input_shape):
        self.add_weight("w", shape=(2,), initializer="zeros")

    def call(self, inputs):
        return inputs * self.weights[0]


def test_a_weight_kept_by_add_weight_alone_gets_its_value_when_made(tmp_path):
    layer = OwnWeights()
    layer(tt.ones([2]))
    layer.weights[0].assign([2.0, 3.0])
    path = tt.train.Checkpoint(layer=layer).save(tmp_path / "own")
    fresh = OwnWeights()
    status = tt.train.Checkpoint(layer=fresh).restore(path)
    fresh.build((2,))
    np.testing.assert_array_equal(fresh.weights[0].numpy(), [2.0, 3.0])
    status.assert_consumed()


def test_a_restore_refused_for_a_mismatch_leaves_nothing_waiting(tmp_path):
    layer = dense()
    layer(tt.ones([1, 3]))
    layer.kernel.assign(tt.fill([3, 2], 7.0))
    path = tt.train.Checkpoint(layer=layer, v=tt.Variable([1.0, 2.0])).save(tmp_path / "two")
    fresh = dense()
    with pytest.raises(ValueError, match="cannot restore"):
        tt.train.Checkpoint(layer=fresh, v=tt.Variable([0.0, 0.0, 0.0])).restore(path)
    fresh(tt.ones([1, 3]))
    np.testing.assert_array_equal(fresh.kernel.numpy(), np.zeros((3, 2)))  # nothing assigned
