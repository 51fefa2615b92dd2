"""tt.Module and tt.name_scope, against tf.Module's documented behaviour; tensor formatting."""

import collections

import numpy as np
import pytest

import tracer as tt


class Dense(tt.Module):
    def __init__(self, in_features, out_features, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.w = tt.Variable(tt.ones((in_features, out_features)), name="w")
            self.b = tt.Variable(tt.zeros((out_features,)), name="b")

    def __call__(self, x):
        return tt.nn.relu(tt.matmul(x, self.w) + self.b)


class MLP(tt.Module):
    def __init__(self, sizes, name=None):
        super().__init__(name=name)
        with self.name_scope:
            self.layers = [Dense(a, b) for a, b in zip(sizes, sizes[1:])]
            self.scale = tt.Variable(2.0, trainable=False, name="scale")

    @tt.Module.with_name_scope
    def __call__(self, x):
        if not hasattr(self, "calls"):
            self.calls = tt.Variable(0, name="calls")  # made in the module's scope
        for layer in self.layers:
            x = layer(x)
        return x * self.scale


def test_names_follow_the_module_scope_as_tensorflow_names_them():
    mlp = MLP([3, 4, 2], name="mlp")
    assert mlp.name == "mlp" and mlp.name_scope.name == "mlp/"
    assert [v.name for v in mlp.layers[0].variables] == ["mlp/dense/b:0", "mlp/dense/w:0"]
    mlp(tt.ones((1, 3)))
    assert mlp.calls.name == "mlp/calls:0"  # made inside with_name_scope
    assert tt.Variable(1.0, name="outside").name == "outside:0"


def test_default_names_are_the_class_name_in_snake_case_and_bad_names_are_refused():
    class MyModule(tt.Module):
        pass

    class MLPBlock(tt.Module):
        pass

    assert MyModule().name == "my_module" and MLPBlock().name == "mlp_block"
    with pytest.raises(ValueError, match="'a b' is not a valid module name"):
        tt.Module(name="a b")


def test_variables_and_submodules_are_found_through_attributes_and_containers():
    mlp = MLP([3, 4, 4, 2])
    first, second, third = mlp.layers
    # the module's own leaves first (attributes by name), then each submodule's, depth first
    assert mlp.variables == (mlp.scale, first.b, first.w, second.b, second.w, third.b, third.w)
    assert mlp.trainable_variables == (first.b, first.w, second.b, second.w, third.b, third.w)
    assert mlp.non_trainable_variables == (mlp.scale,)
    assert mlp.submodules == (first, second, third)
    holder = tt.Module()
    holder.parts = {"b": mlp, "a": (first, [tt.Variable(1.0)])}
    assert holder.submodules[:2] == (first, mlp)  # dict keys sorted: "a" before "b"
    # the list's variable, then first's two, then mlp's five that first does not hold
    assert holder.variables[1:3] == (first.b, first.w) and len(holder.variables) == 8


def test_the_walk_passes_over_plain_values_and_searches_every_container():
    Pair = collections.namedtuple("Pair", "first second")
    v = [tt.Variable(float(i), name=f"v{i}") for i in range(4)]
    holder = tt.Module()
    holder.text, holder.size, holder.flag = "x", 3, True
    holder.kind, holder.nothing = tt.float32, None
    holder.pair = Pair(v[0], {"k": [v[1]]})  # a named tuple, a dict, a list
    holder.z = (lambda: None, len, v[2], [v[3]])
    assert holder.variables == tuple(v)


def test_shared_and_cyclic_references_are_visited_once():
    a, b = tt.Module(name="a"), tt.Module(name="b")
    a.child, b.parent = b, a
    a.v = b.v = tt.Variable(1.0)
    assert a.submodules == (b,) and a.variables == (a.v,)


def test_module_gradients_train_on_the_tape():
    model = Dense(2, 1)
    x = tt.constant([[1.0, 2.0]])
    with tt.GradientTape() as tape:
        y = tt.reduce_sum(model(x))
    grads = tape.gradient(y, model.trainable_variables)
    np.testing.assert_allclose(grads[0].numpy(), [1.0])  # d/db
    np.testing.assert_allclose(grads[1].numpy(), [[1.0], [2.0]])  # d/dw


def test_name_scope_nests_resets_and_validates():
    with tt.name_scope("outer") as outer:
        with tt.name_scope("inner") as inner:
            v = tt.Variable(1.0, name="v")
        with tt.name_scope("absolute/") as absolute:
            w = tt.Variable(1.0)
    assert (outer, inner, absolute) == ("outer/", "outer/inner/", "absolute/")
    assert (v.name, w.name) == ("outer/inner/v:0", "absolute/Variable:0")
    with pytest.raises(ValueError, match="not a valid scope name"):
        tt.name_scope("bad name")


def test_scalar_tensors_take_format_specs():
    loss = tt.constant(1.23456)
    assert f"{loss:.3f}" == "1.235" and f"{loss:>8.2e}" == "1.23e+00"
    assert f"{tt.Variable(3):04d}" == "0003"
    # an empty spec formats the value as numpy does, as TensorFlow 2.21's eager tensors print
    # in f-strings (its outputs: "1.2345600128173828", "7", "[0.1     1.23456]"); a
    # variable's is its repr
    assert f"{loss}" == "1.2345600128173828" and f"{tt.constant(7)}" == "7"
    assert f"{tt.constant([0.1, 1.23456])}" == "[0.1     1.23456]"
    assert f"{tt.Variable(3.0)}" == repr(tt.Variable(3.0))
    with pytest.raises(TypeError):
        f"{tt.constant([1.0, 2.0]):.2f}"

    @tt.function
    def formats(x):
        return f"{x:.2f}"

    with pytest.raises(TypeError, match="symbolic tensor"):
        formats(tt.constant(1.0))


def test_a_list_that_is_not_rectangular_is_refused_in_tensorflows_words():
    """TensorFlow's tensor guide prints the message of `tf.constant(ragged_list)`."""
    for convert in (tt.constant, tt.convert_to_tensor):
        with pytest.raises(ValueError) as raised:
            convert([[0, 1, 2, 3], [4, 5], [6, 7, 8], [9]])
        assert str(raised.value) == "Can't convert non-rectangular Python sequence to Tensor."
