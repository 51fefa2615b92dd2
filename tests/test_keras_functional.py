"""Keras's functional API (tracer/keras/functional.py): models of several inputs and outputs
against the same computation in numpy, shared layers, nested models, eager against compiled
against finite differences, Keras 3's graph structure and layer order, and the errors."""

import json

import numpy as np
import pytest

import tracer as tt
from tracer.keras.functional import Functional, functional_structure
from tracer.keras.keras_tensor import KerasTensor
from tracer.keras.layers.input_layer import Input, InputLayer
from tracer.keras.layers.merging import Add, Concatenate, Reshape, concatenate

layers = tt.keras.layers
rng = np.random.default_rng(11)


def two_branch_model(dtype="float32"):
    """Keras's guide's kind of model: two inputs, a layer shared by both branches, a join,
    and two outputs (the same graph as the Keras 3 structure below)."""
    a = Input(shape=(4,), name="a", dtype=dtype)
    b = Input(shape=(3,), name="b", dtype=dtype)
    shared = layers.Dense(5, activation="tanh", name="shared", dtype=dtype)
    h1 = shared(layers.Dense(4, name="da", dtype=dtype)(a))
    h2 = shared(layers.Dense(4, name="db", dtype=dtype)(b))
    joined = Concatenate(name="cat", dtype=dtype)([h1, h2])
    o1 = layers.Dense(2, name="o1", dtype=dtype)(joined)
    o2 = layers.Dense(1, name="o2", dtype=dtype)(h2)
    return tt.keras.Model([a, b], [o1, o2], name="two")


def by_hand(model, a, b):
    """The two-branch model's outputs in numpy, from its layers' weights."""
    w = {layer.name: layer.get_weights() for layer in model.layers}

    def dense(name, x):
        kernel, bias = w[name]
        return x @ kernel + bias

    h1 = np.tanh(dense("shared", dense("da", a)))
    h2 = np.tanh(dense("shared", dense("db", b)))
    return dense("o1", np.concatenate([h1, h2], axis=-1)), dense("o2", h2)


def test_inputs_are_symbolic_tensors_with_a_batch_axis_of_any_size():
    x = Input(shape=(28, 28), name="image")
    assert isinstance(x, KerasTensor)
    assert (x.shape, x.dtype, x.name, x.ndim) == ((None, 28, 28), "float32", "image", 3)
    assert isinstance(x._keras_history.operation, InputLayer)
    assert Input((3,), batch_size=8).shape == (8, 3)
    assert Input(batch_shape=(2, None, 3), dtype="int32").shape == (2, None, 3)
    y = layers.Dense(7)(layers.Flatten()(x))
    assert y.shape == (None, 7) and y.dtype == "float32"
    with pytest.raises(TypeError, match="symbolic"):
        np.asarray(x)


def test_keras_tensors_print_and_are_named_as_keras_3_names_them():
    tt.keras.backend.clear_session()
    x = Input((3,))
    y = layers.Dense(2)(x)
    named = Input((2,), name="inp")
    # Keras 3.15 on TensorFlow 2.21 printed these: an unnamed Input's tensor is a
    # `keras_tensor_<n>` like any layer output (its layer is `input_layer`).
    assert repr(x) == (
        "<KerasTensor shape=(None, 3), dtype=float32, sparse=False, ragged=False, "
        "name=keras_tensor>"
    )
    assert repr(y).endswith("name=keras_tensor_1>")
    assert repr(named).endswith("name=inp>") and repr(Input((2,))).endswith("keras_tensor_2>")
    assert x._keras_history.operation.name == "input_layer"


def test_two_inputs_two_outputs_match_numpy():
    model = two_branch_model()
    assert isinstance(model, Functional)
    a = rng.standard_normal((6, 4)).astype(np.float32)
    b = rng.standard_normal((6, 3)).astype(np.float32)
    o1, o2 = model([a, b])
    want1, want2 = by_hand(model, a, b)
    np.testing.assert_allclose(o1.numpy(), want1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(o2.numpy(), want2, rtol=1e-5, atol=1e-6)
    assert model.input_shape == [(None, 4), (None, 3)]
    assert model.output_shape == [(None, 2), (None, 1)]
    assert [t.name for t in model.inputs] == ["a", "b"]
    assert [t.shape for t in model.outputs] == [(None, 2), (None, 1)]
    assert model.output_names == ["o1", "o2"]


def test_layers_in_keras_order_and_shared_weights_counted_once():
    model = two_branch_model()
    # Keras 3 lists these layers of this graph in this order
    assert [layer.name for layer in model.layers] == [
        "a", "b", "da", "db", "shared", "cat", "o1", "o2",
    ]  # fmt: skip
    shared = model.get_layer("shared")
    assert len(shared._inbound_nodes) == 2
    assert model.count_params() == 20 + 16 + 25 + 22 + 6  # Keras's 89
    names = [v.path for v in model.weights]
    assert len(names) == len(set(names)) == 10
    assert names[4:6] == ["shared/kernel", "shared/bias"]  # each layer's in layer order
    with tt.GradientTape() as tape:
        o1, o2 = model([np.ones((2, 4)), np.ones((2, 3))])
        loss = tt.reduce_sum(o1) + tt.reduce_sum(o2)
    grads = tape.gradient(loss, model.trainable_variables)
    assert len(grads) == 10 and all(g is not None for g in grads)
    shared.trainable = False
    assert len(model.trainable_variables) == 8


def test_dict_inputs_and_outputs_in_keras_order():
    q = Input(shape=(1,), name="q")
    p = Input(shape=(2,), name="p")
    z = layers.Dense(1, name="z")(p)
    model = tt.keras.Model({"q": q, "p": p}, {"z": z, "a": layers.Dense(1, name="a")(q)})
    assert [t.name for t in model.inputs] == ["p", "q"]  # a dict flattens by sorted keys
    assert [layer.name for layer in model.layers] == ["q", "p", "a", "z"]  # Keras 3's order
    assert model.input_shape == [(None, 2), (None, 1)]
    p_value, q_value = np.ones((3, 2), np.float32), np.full((3, 1), 2.0, np.float32)
    out = model({"q": q_value, "p": p_value})
    assert list(out) == ["z", "a"]
    kernel, bias = model.get_layer("z").get_weights()
    np.testing.assert_allclose(out["z"].numpy(), p_value @ kernel + bias, rtol=1e-6)
    with pytest.raises(ValueError, match="not in sorted order"):  # as Keras
        model([p_value, q_value])
    by_name = tt.keras.Model([p, q], z)({"q": q_value, "p": p_value})  # Inputs' names
    np.testing.assert_allclose(by_name.numpy(), out["z"].numpy())
    assert model.get_layer(index=0) is q._keras_history.operation


def test_nested_model_runs_as_a_layer():
    i = Input(shape=(3,), name="i")
    inner = tt.keras.Model(i, layers.Dense(2, activation="relu", name="d")(i), name="inner")
    x = Input(shape=(3,), name="x")
    y = layers.Dense(1, name="head")(inner(x))
    outer = tt.keras.Model(x, y, name="outer")
    assert [layer.name for layer in outer.layers] == ["x", "inner", "head"]
    assert y.shape == (None, 1)
    assert [v.path for v in outer.weights] == [
        "d/kernel", "d/bias", "head/kernel", "head/bias",
    ]  # fmt: skip
    values = rng.standard_normal((5, 3)).astype(np.float32)
    dk, db = inner.get_layer("d").get_weights()
    hk, hb = outer.get_layer("head").get_weights()
    want = np.maximum(values @ dk + db, 0) @ hk + hb
    np.testing.assert_allclose(outer(values).numpy(), want, rtol=1e-5, atol=1e-6)
    assert outer.count_params() == 8 + 3


def float64_model():
    a = Input(shape=(3,), name="a", dtype="float64")
    b = Input(shape=(2,), name="b", dtype="float64")
    h = layers.Dense(4, activation="tanh", dtype="float64")(a)
    joined = Add(dtype="float64")([h, layers.Dense(4, dtype="float64")(b)])
    return tt.keras.Model([a, b], layers.Dense(1, activation="sigmoid", dtype="float64")(joined))


def test_eager_compiled_and_finite_differences_agree():
    model = float64_model()
    a = rng.standard_normal((5, 3))
    b = rng.standard_normal((5, 2))
    weights = model.trainable_variables

    def loss_and_grads(a, b):
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum(tt.square(model([a, b])))
        return loss, tape.gradient(loss, weights)

    eager_loss, eager_grads = loss_and_grads(tt.constant(a), tt.constant(b))
    compiled_loss, compiled_grads = tt.function(loss_and_grads)(tt.constant(a), tt.constant(b))
    np.testing.assert_allclose(compiled_loss.numpy(), eager_loss.numpy(), rtol=1e-12)
    for eager, compiled in zip(eager_grads, compiled_grads):
        np.testing.assert_allclose(compiled.numpy(), eager.numpy(), rtol=1e-10, atol=1e-12)

    # along a random direction in weight space: <grad, v> against a central difference
    direction = [rng.standard_normal(v.shape) for v in weights]
    start = [v.numpy() for v in weights]

    def loss_at(step):
        for variable, value, d in zip(weights, start, direction):
            variable.assign(value + step * d)
        return float(tt.reduce_sum(tt.square(model([a, b]))).numpy())

    eps = 1e-6
    numeric = (loss_at(eps) - loss_at(-eps)) / (2 * eps)
    loss_at(0.0)
    analytic = sum(float(np.sum(g.numpy() * d)) for g, d in zip(eager_grads, direction))
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6)


def test_compiled_model_takes_any_batch_size():
    model = two_branch_model()
    run = tt.function(lambda a, b: model([a, b]))
    for batch in (2, 3):
        a = rng.standard_normal((batch, 4)).astype(np.float32)
        b = rng.standard_normal((batch, 3)).astype(np.float32)
        for got, want in zip(run(a, b), by_hand(model, a, b)):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_training_reaches_dropout():
    x = Input(shape=(200,))
    model = tt.keras.Model(x, layers.Dropout(0.5)(x))
    ones = np.ones((2, 200), np.float32)
    np.testing.assert_array_equal(model(ones).numpy(), ones)
    dropped = model(ones, training=True).numpy()
    assert set(np.unique(dropped)) == {0.0, 2.0}
    always = Input(shape=(200,))
    on = tt.keras.Model(always, layers.Dropout(0.5)(always, training=True))
    assert (on(ones).numpy() == 0).any()  # the call's own training=True is kept


def test_merging_and_reshape_layers():
    a, b = Input((2, 3)), Input((2, 1))
    joined = concatenate([a, b])
    flat = Reshape((-1,))(joined)
    assert (joined.shape, flat.shape) == ((None, 2, 4), (None, 8))
    model = tt.keras.Model([a, b], flat)
    x, y = np.ones((3, 2, 3), np.float32), np.zeros((3, 2, 1), np.float32)
    want = np.concatenate([x, y], axis=-1).reshape(3, 8)
    np.testing.assert_array_equal(model([x, y]).numpy(), want)


def test_structure_matches_keras_3_config():
    structure = functional_structure(two_branch_model())
    got = json.loads(json.dumps({k: v for k, v in structure.items() if k != "layers"}))
    assert got == {
        "name": "two",
        "trainable": True,
        "input_layers": [["a", 0, 0], ["b", 0, 0]],
        "output_layers": [["o1", 0, 0], ["o2", 0, 0]],
    }

    def tensor(shape, history):
        return {
            "class_name": "__keras_tensor__",
            "config": {"shape": shape, "dtype": "float32", "keras_history": history},
        }

    # what Keras 3's model.get_config()["layers"] holds for the same graph
    keras_inbound_nodes = {
        "a": [],
        "b": [],
        "da": [{"args": [tensor([None, 4], ["a", 0, 0])], "kwargs": {}}],
        "db": [{"args": [tensor([None, 3], ["b", 0, 0])], "kwargs": {}}],
        "shared": [
            {"args": [tensor([None, 4], ["da", 0, 0])], "kwargs": {}},
            {"args": [tensor([None, 4], ["db", 0, 0])], "kwargs": {}},
        ],
        "cat": [
            {
                "args": [
                    [tensor([None, 5], ["shared", 0, 0]), tensor([None, 5], ["shared", 1, 0])]
                ],
                "kwargs": {},
            }
        ],
        "o1": [{"args": [tensor([None, 10], ["cat", 0, 0])], "kwargs": {}}],
        "o2": [{"args": [tensor([None, 5], ["shared", 1, 0])], "kwargs": {}}],
    }
    entries = structure["layers"]
    assert [e["name"] for e in entries] == list(keras_inbound_nodes)
    assert {e["name"]: json.loads(json.dumps(e["inbound_nodes"])) for e in entries} == (
        keras_inbound_nodes
    )
    assert entries[4]["inbound"] == [[("da", 0, 0)], [("db", 0, 0)]]
    assert entries[0]["layer"].get_config() == {
        "batch_shape": [None, 4],
        "dtype": "float32",
        "sparse": False,
        "ragged": False,
        "name": "a",
        "optional": False,
    }


def test_structure_of_nested_and_reused_layers_as_keras_writes_it():
    i = Input(shape=(3,), name="i")
    inner = tt.keras.Model(i, layers.Dense(2, name="d")(i), name="inner")
    dense = layers.Dense(2, name="dd")
    dense(Input(shape=(3,)))  # a call outside the model: not counted in its node indices
    x = Input(shape=(3,), name="x")
    outer = tt.keras.Model(x, [inner(x), dense(x)], name="outer")
    structure = functional_structure(outer)
    by_name = {e["name"]: json.loads(json.dumps(e["inbound_nodes"])) for e in structure["layers"]}
    keras_x = {
        "class_name": "__keras_tensor__",
        "config": {"shape": [None, 3], "dtype": "float32", "keras_history": ["x", 0, 0]},
    }
    # Keras 3 records mask=None for a nested model, and counts a Functional's output node
    # from 1 in output_layers
    assert by_name["inner"] == [{"args": [keras_x], "kwargs": {"mask": None}}]
    assert by_name["dd"] == [{"args": [keras_x], "kwargs": {}}]
    assert structure["output_layers"] == [["inner", 1, 0], ["dd", 0, 0]]
    assert structure["input_layers"] == ["x", 0, 0]


def test_summary_rows_as_keras_prints_them():
    rows = two_branch_model()._summary_rows()
    assert rows[4] == ("shared", "Dense", "(None, 5)", "25", ["da[0][0]", "db[0][0]"], "Y")
    cat = ("cat", "Concatenate", "(None, 10)", "0", ["shared[0][0]", "shared[1][0]"], "-")
    assert rows[5] == cat  # (the last: show_trainable's mark, "-" for a layer without weights)
    assert rows[0] == ("a", "InputLayer", "(None, 4)", "0", [], "-")
    x = Input((3,), name="x")
    line = tt.keras.Model(x, layers.Dense(1, name="h")(layers.Dense(2, name="g")(x)))
    assert [row[4] for row in line._summary_rows()] == [None, None, None]  # no Connected to


def test_wrong_number_of_inputs_is_a_value_error():
    model = two_branch_model()
    with pytest.raises(ValueError, match=r"expects 2 input\(s\) \['a', 'b'\].*called with 1"):
        model([np.ones((2, 4))])
    with pytest.raises(ValueError, match=r"input 1 \('b'\).*shape \(2, 5\).*\(None, 3\)"):
        model([np.ones((2, 4)), np.ones((2, 5))])


def test_layer_on_incompatible_shape_is_a_value_error():
    dense = layers.Dense(3, name="narrow")
    dense(Input((4,)))
    with pytest.raises(ValueError, match=r"'narrow' \(Dense\).*\(None, 6\).*matmul"):
        dense(Input((6,)))
    with pytest.raises(ValueError, match="'concatenate.*cannot be called"):
        Concatenate()([Input((2, 3)), Input((4, 3))])


def test_output_not_connected_to_the_inputs_is_a_value_error():
    a, b = Input((2,), name="left"), Input((2,), name="right")
    joined = Add()([a, b])
    with pytest.raises(ValueError, match="not connected.*needs the Input 'right'"):
        tt.keras.Model(a, joined)
    with pytest.raises(ValueError, match="must be KerasTensors"):
        tt.keras.Model(a, np.ones(3))
    with pytest.raises(ValueError, match="tt.keras.Input tensors"):
        tt.keras.Model(joined, layers.Dense(1)(joined))


def test_layer_restored_before_its_first_call_gets_the_saved_weights(tmp_path):
    saved = layers.Dense(2)
    saved.build((None, 3))
    path = tt.train.Checkpoint(layer=saved).save(tmp_path / "ckpt")
    fresh = layers.Dense(2)
    tt.train.Checkpoint(layer=fresh).restore(path)
    x = Input((3,))
    model = tt.keras.Model(inputs=x, outputs=fresh(x))
    for got, want in zip(model.get_weights(), saved.get_weights()):
        np.testing.assert_array_equal(got, want)


def test_structure_of_dict_inputs_and_outputs_keeps_their_keys():
    q, p = Input(shape=(1,), name="q"), Input(shape=(2,), name="p")
    outputs = {"z": layers.Dense(1, name="z")(p), "a": layers.Dense(1, name="a")(q)}
    structure = functional_structure(tt.keras.Model({"q": q, "p": p}, outputs))
    # Keras 3's get_config() of this model
    assert structure["input_layers"] == {"q": ["q", 0, 0], "p": ["p", 0, 0]}
    assert structure["output_layers"] == {"z": ["z", 0, 0], "a": ["a", 0, 0]}
    assert list(structure["input_layers"]) == ["q", "p"]
    assert [e["name"] for e in structure["layers"]] == ["q", "p", "a", "z"]


def test_layers_are_built_for_keras_shapes_with_none():
    class Probe(layers.Layer):
        def build(self, input_shape):
            self.seen = input_shape

        def call(self, inputs):
            return inputs

    single, pair = Probe(), Probe()
    a, b = Input((None, 3)), Input((2, 3), batch_size=4)
    single(a)
    pair([a, b])
    assert single.seen == (None, None, 3)
    assert pair.seen == [(None, None, 3), (4, 2, 3)]  # a list of shapes, as Keras gives


def test_docstring_examples():
    import doctest

    from tracer.keras import functional, keras_tensor
    from tracer.keras.layers import input_layer

    for module in (functional, keras_tensor, input_layer):
        result = doctest.testmod(module, extraglobs={"tt": tt}, optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_keras_tensors_carry_the_masks_layers_attach():
    # TF 2.21: an Input has no _keras_mask; after Embedding(mask_zero=True) it is
    # <KerasTensor shape=(None, 3), dtype=bool ...>, kept by a Dense and dropped by Flatten
    inputs = Input(shape=(3,), dtype="int32")
    assert not hasattr(inputs, "_keras_mask")
    embedded = layers.Embedding(5, 2, mask_zero=True)(inputs)
    assert isinstance(embedded._keras_mask, KerasTensor)
    assert embedded._keras_mask.shape == (None, 3) and embedded._keras_mask.dtype == "bool"
    dense = layers.Dense(2)(embedded)
    assert dense._keras_mask.shape == (None, 3)
    assert not hasattr(layers.Flatten()(embedded), "_keras_mask")
    # a layer whose call takes the mask is traced with it
    ragged = Input(shape=(None,), dtype="int32")
    sequence = layers.LSTM(3, return_sequences=True)(layers.Embedding(5, 2, mask_zero=True)(ragged))
    assert sequence._keras_mask.shape == (None, None)


def test_python_operators_on_keras_tensors_are_operations_of_the_model():
    # TF 2.21 printed these outputs, layers ['input_layer', 'dense', 'input_layer_1'] and
    # summary rows "get_item (GetItem)", "multiply (Multiply)", ... for the same model
    i = Input((5, 3))
    j = Input((3,))
    x = layers.Dense(3)(i)
    y = (2.0 * x[:, -1] + j) / 4 - 1
    z = -(abs(y) ** 2)
    model = tt.keras.Model([i, j], [y, z, x[:, :2] @ np.ones((3, 2), np.float32)])
    model.set_weights([np.full((3, 3), 0.1, np.float32), np.arange(3, dtype=np.float32)])
    assert [type(layer).__name__ for layer in model.layers] == ["InputLayer", "Dense", "InputLayer"]
    assert model.output_shape == [(None, 3), (None, 3), (None, 2, 2)]
    y_out, z_out, product = model([np.ones((2, 5, 3), np.float32), np.ones((2, 3), np.float32)])
    np.testing.assert_allclose(y_out.numpy(), [[-0.6, -0.1, 0.4]] * 2, rtol=1e-6)
    np.testing.assert_allclose(z_out.numpy(), [[-0.36, -0.01, -0.16]] * 2, rtol=1e-6)
    np.testing.assert_allclose(product.numpy(), np.full((2, 2, 2), 3.9), rtol=1e-6)
    kinds = [row[1] for row in model._summary_rows()]
    assert kinds[2:4] == ["GetItem", "Multiply"] and "TrueDivide" in kinds
    assert "Negative" in kinds and "Matmul" in kinds and "Absolute" in kinds
    with pytest.raises(ValueError, match="operation GetItem on KerasTensors"):
        model.get_config()


def test_input_takes_keras_3s_arguments_only():
    """Keras 3 (TF 2.21's extension_type guide) has no `type_spec=`: Python's TypeError."""
    with pytest.raises(
        TypeError, match=r"^Input\(\) got an unexpected keyword argument 'type_spec'$"
    ):
        tt.keras.Input(type_spec=tt.TensorSpec([None, 2]))
    assert tt.keras.Input((3,), None, "int32", False).shape == (None, 3)
