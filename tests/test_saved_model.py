"""tt.saved_model: a module saved and loaded gives the values, gradients and variable updates
of the original; a file that is not one tracer wrote is refused whole, with a clear error."""

import json
import os

import numpy as np
import pytest

import tracer as tt
from tracer.train import files

rng = np.random.default_rng(0)


@tt.custom_gradient
def clip_gradients(y):
    def backward(dy):
        return tt.clip_by_norm(dy, 0.5)

    return y, backward


class ClipModule(tt.Module):
    @tt.function(input_signature=[tt.TensorSpec(None)])
    def call_custom_grad(self, x):
        return clip_gradients(x)


def test_a_custom_gradient_saved_and_loaded_as_in_tensorflows_guide(tmp_path):
    """TensorFlow's advanced autodiff guide: the loaded function clips its gradient as the
    original does (4 clipped to norm 0.5, times dv*v/dv at 2: 2.0), at any rank."""
    tt.saved_model.save(
        ClipModule(),
        str(tmp_path),
        options=tt.saved_model.SaveOptions(experimental_custom_gradients=True),
    )
    assert os.listdir(tmp_path) == ["saved_model.npz"]
    assert tt.saved_model.contains_saved_model(str(tmp_path))
    loaded = tt.saved_model.load(str(tmp_path))
    v = tt.Variable(2.0)
    with tt.GradientTape() as tape:
        output = loaded.call_custom_grad(v * v)
    assert float(tape.gradient(output, v)) == 2.0
    with tt.GradientTape() as tape:
        output = loaded.call_custom_grad(tt.constant([[3.0, 4.0]]) * v)
    np.testing.assert_allclose(output.numpy(), [[6.0, 8.0]])
    np.testing.assert_allclose(tape.gradient(output, v).numpy(), 3.5 / np.sqrt(2.0), rtol=1e-6)


def test_without_custom_gradients_the_loaded_gradient_is_the_forwards(tmp_path):
    options = tt.saved_model.SaveOptions(experimental_custom_gradients=False)
    tt.saved_model.save(ClipModule(), str(tmp_path), options=options)
    loaded = tt.saved_model.load(str(tmp_path))
    v = tt.Variable(2.0)
    with tt.GradientTape() as tape:
        output = loaded.call_custom_grad(v * v)
    assert float(tape.gradient(output, v)) == 4.0  # d(v*v)/dv, unclipped


class Dense(tt.Module):
    def __init__(self, n_in, n_out):
        super().__init__()
        self.w = tt.Variable(rng.standard_normal((n_in, n_out)).astype(np.float32), name="w")
        self.b = tt.Variable(np.zeros(n_out, np.float32), name="b")

    def __call__(self, x):
        return tt.tanh(tt.matmul(x, self.w) + self.b)


class Model(tt.Module):
    def __init__(self):
        super().__init__()
        self.layers = [Dense(3, 4), Dense(4, 2)]
        self.steps = tt.Variable(0, trainable=False)

    @tt.function(input_signature=[tt.TensorSpec([None, 3])])
    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return {"out": x, "total": tt.reduce_sum(x)}

    @tt.function(input_signature=[tt.TensorSpec([None, 3]), tt.TensorSpec([None, 2])])
    def train(self, x, y):
        with tt.GradientTape() as tape:
            loss = tt.reduce_mean((self(x)["out"] - y) ** 2)
        grads = tape.gradient(loss, self.trainable_variables)
        for variable, grad in zip(self.trainable_variables, grads):
            variable.assign_sub(0.1 * grad)
        self.steps.assign_add(1)
        return loss

    @tt.function
    def clipped_sum(self, x, limit=1.0):
        total = tt.while_loop(lambda t: tt.reduce_sum(t) > limit, lambda t: t * 0.5, [x])[0]
        return tt.cond(tt.reduce_sum(total) > 0.0, lambda: total, lambda: -total)


def test_a_model_loaded_gives_its_values_gradients_and_training_steps(tmp_path):
    model = Model()
    x = rng.standard_normal((5, 3)).astype(np.float32)
    y = rng.standard_normal((5, 2)).astype(np.float32)
    model.clipped_sum(tt.constant([3.0, 2.0]))  # traced once: that signature is saved
    tt.saved_model.save(model, str(tmp_path), signatures=model.__call__)
    loaded = tt.saved_model.load(str(tmp_path))

    assert [v.name for v in loaded.trainable_variables] == [
        v.name for v in model.trainable_variables
    ]
    for mine, theirs in zip(loaded.variables, model.variables):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    want = model(tt.constant(x))
    got = loaded(x)
    np.testing.assert_allclose(got["out"].numpy(), want["out"].numpy(), rtol=1e-6)
    served = loaded.signatures["serving_default"](x=tt.constant(x))
    np.testing.assert_allclose(served["total"].numpy(), want["total"].numpy(), rtol=1e-6)

    with tt.GradientTape() as tape:
        total = loaded(x)["total"]
    mine = tape.gradient(total, loaded.trainable_variables)
    with tt.GradientTape() as tape:
        total = model(tt.constant(x))["total"]
    theirs = tape.gradient(total, model.trainable_variables)
    for a, b in zip(mine, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)

    losses = [float(loaded.train(x, y)), *(float(loaded.train(x=x, y=y)) for _ in range(2))]
    want_losses = [float(model.train(tt.constant(x), tt.constant(y))) for _ in range(3)]
    np.testing.assert_allclose(losses, want_losses, rtol=1e-6)
    assert int(loaded.steps.numpy()) == 3
    for mine, theirs in zip(loaded.variables, model.variables):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6)

    start = tt.constant([3.0, 2.0])
    np.testing.assert_allclose(loaded.clipped_sum(start).numpy(), model.clipped_sum(start).numpy())
    with pytest.raises(TypeError, match="was saved for the arguments"):
        loaded.clipped_sum(tt.constant([1.0, 2.0, 3.0]))


def test_what_a_file_cannot_hold_is_refused_when_saving(tmp_path):
    class Printing(tt.Module):
        @tt.function(input_signature=[tt.TensorSpec([])])
        def f(self, x):
            tt.print("x is", x)
            return x * 2.0

    with pytest.raises(TypeError, match=r"cannot save root\.f: print .*test_saved_model\.py"):
        tt.saved_model.save(Printing(), str(tmp_path))
    with pytest.raises(TypeError, match="must be a tt.Module"):
        tt.saved_model.save(lambda x: x, str(tmp_path))


def _saved(tmp_path):
    tt.saved_model.save(ClipModule(), str(tmp_path))
    path = os.path.join(str(tmp_path), "saved_model")
    arrays = files.read(path)
    program = json.loads(arrays.pop("program").tobytes())
    return path, program, arrays


def _rewritten(path, program, arrays):
    text = program if isinstance(program, str) else json.dumps(program)
    raw = np.frombuffer(text.encode(), np.uint8)
    files.write(path, {"program": raw, **arrays})


def _first_graph(program):
    return program["functions"][0]["concrete"][0]["graph"]


def _node_of(graph, op):
    return next(node for node in graph["nodes"] if node["op"] == op)


TAMPERED = {
    "an op tracer lacks": lambda p: _node_of(_first_graph(p), "get").update(op="rm_rf"),
    "a shape its op does not give": lambda p: _node_of(_first_graph(p), "get").update(shape=[7]),
    "an input after its node": lambda p: _node_of(_first_graph(p), "get").update({"in": [99]}),
    "an attribute of unknown kind": lambda p: _node_of(_first_graph(p), "get")["attrs"].update(
        index={"t": "pickle", "v": "..."}
    ),
    "a variable's value missing": lambda p: p.update(
        variables=[{"name": "v", "trainable": True, "dtype": "float32", "key": "variables/9"}]
    ),
    "another format": lambda p: p.update(format="something-else"),
    "a call back into Python": lambda p: _node_of(_first_graph(p), "get").update(op="print"),
    "a reference to nothing": lambda p: p["objects"][0]["attributes"].update(
        extra={"function": 42}
    ),
    "a name of Python's": lambda p: p["objects"][0]["attributes"].update(__class__={"object": 0}),
    "arguments that are not the parameters": lambda p: p["functions"][0]["concrete"][0].update(
        arguments={"y": {"tensor": 0}}
    ),
    "an attribute its op does not take": lambda p: _node_of(_first_graph(p), "get")["attrs"].update(
        hosted_op="get */ int escaped; /*"
    ),
    "JSON nested past any limit": lambda p: (
        json.dumps(p)[:-1] + ', "deep": ' + "[" * 5000 + "]" * 5000 + "}"
    ),
}


@pytest.mark.parametrize("damage", sorted(TAMPERED))
def test_a_tampered_saved_model_is_refused_whole(tmp_path, damage):
    path, program, arrays = _saved(tmp_path)
    text = TAMPERED[damage](program)  # (a damage made in the JSON's text returns it)
    _rewritten(path, text if isinstance(text, str) else program, arrays)
    with pytest.raises(tt.saved_model.SavedModelError, match="saved_model.npz"):
        tt.saved_model.load(str(tmp_path))


def test_a_missing_or_damaged_file_is_a_clear_error(tmp_path):
    with pytest.raises(tt.saved_model.SavedModelError, match="no file"):
        tt.saved_model.load(str(tmp_path / "nothing"))
    tt.saved_model.save(ClipModule(), str(tmp_path))
    target = tmp_path / "saved_model.npz"
    target.write_bytes(target.read_bytes()[:100])
    with pytest.raises(tt.saved_model.SavedModelError, match="damaged"):
        tt.saved_model.load(str(tmp_path))


def test_every_op_and_region_of_the_catalogues_survives_a_save_and_load(tmp_path):
    """Each op of the gradient catalogue and each construct of the region catalogue, traced
    in a module, saved and loaded, gives the original's values: every kind of attribute
    (literals, dtypes, held graphs, a custom gradient's record) is written and read back.
    Both run their graphs op by op (the original on the interpreter, the loaded one eagerly),
    so that the test compiles nothing: the loaded graphs' compiled runs are tested above."""
    from tests import test_gradients, test_region_catalogue
    from tracer import nest

    cases = dict(test_gradients.ALL_CASES)
    for name, construct in test_region_catalogue.CONSTRUCTS.items():
        cases[f"region {name}"] = (construct, [test_region_catalogue.X])
    for k, (name, (fn, args)) in enumerate(sorted(cases.items())):
        holder = tt.Module()
        holder.f = tt.function(getattr(fn, "python_function", fn), backend="interpreter")
        inputs = [tt.constant(a) for a in args]
        want = nest.flatten(holder.f(*inputs))
        tt.saved_model.save(holder, str(tmp_path / str(k)))
        loaded = tt.saved_model.load(str(tmp_path / str(k)))
        tt.config.run_functions_eagerly(True)
        try:
            got = nest.flatten(loaded.f(*inputs))
        finally:
            tt.config.run_functions_eagerly(False)
        assert len(got) == len(want) > 0, name
        for a, b in zip(got, want):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14, err_msg=name)


def test_a_keras_model_is_saved_with_its_call_and_serving_signature(tmp_path):
    """As TensorFlow saves a Keras model: its call in inference mode (dropout off) for a batch
    of any size, and the `serving_default` signature."""
    keras = tt.keras
    model = keras.Sequential(
        [keras.layers.Dense(4, activation="relu"), keras.layers.Dropout(0.5), keras.layers.Dense(2)]
    )
    x = rng.standard_normal((3, 5)).astype(np.float32)
    want = model(x, training=False).numpy()
    tt.saved_model.save(model, str(tmp_path))
    loaded = tt.saved_model.load(str(tmp_path))
    # (float32 sums of unseeded weights: an output near 0 differs in its last bits)
    np.testing.assert_allclose(loaded(x).numpy(), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(loaded(x[:1]).numpy(), want[:1], rtol=1e-6, atol=1e-6)
    served = loaded.signatures["serving_default"](x)
    np.testing.assert_allclose(served["output_0"].numpy(), want, rtol=1e-6, atol=1e-6)
    assert len(loaded.trainable_variables) == 4
    assert not hasattr(loaded, "_build_input_shape")  # a tuple of numbers: nothing tracked


class Flagged(tt.Module):
    def __init__(self):
        super().__init__()
        self.scale = tt.Variable(3.0)

    @tt.function
    def apply(self, x, training=False, *, shift=1.0):
        return x * self.scale + shift if training else x + shift


def test_a_loaded_function_binds_its_python_arguments_as_the_original_did(tmp_path):
    """Each trace is saved with the Python values it was traced for (defaults filled in); a
    loaded call is bound to the function's parameters and runs the trace of its values."""
    model = Flagged()
    x = tt.constant([1.0, 2.0])
    model.apply(x)
    model.apply(x, True)
    model.apply(x, training=True, shift=0.0)
    tt.saved_model.save(model, str(tmp_path))
    loaded = tt.saved_model.load(str(tmp_path))
    np.testing.assert_allclose(loaded.apply(x).numpy(), [2.0, 3.0])
    np.testing.assert_allclose(loaded.apply(x, training=False).numpy(), [2.0, 3.0])
    np.testing.assert_allclose(loaded.apply(x, True).numpy(), [4.0, 7.0])
    np.testing.assert_allclose(loaded.apply(x=x, training=True, shift=0.0).numpy(), [3.0, 6.0])
    with pytest.raises(TypeError, match=r"was saved for .*training=True.*called with"):
        loaded.apply(x, training=True, shift=2.0)  # never traced with that shift
    with pytest.raises(TypeError, match="unexpected argument 'bias'"):
        loaded.apply(x, bias=1.0)
    with pytest.raises(TypeError, match="missing the argument 'x'"):
        loaded.apply(training=True)


def test_no_node_attribute_reaches_the_c_but_a_hosted_steps_op(tmp_path):
    """A step's C comment names its op; only the node that hands a step back to Python
    (codegen/string_handles.py) names another, and only by an op's name: an attribute of any
    other node, which a hostile file could set, never reaches the C (a `*/` in it once ended
    the comment, and what followed compiled and ran)."""
    from codegen.forms import HOSTED, shown_op
    from codegen.loops import comment_text
    from tracer.ir import Node

    def node(op, hosted):
        return Node(op, (), {"hosted_op": hosted}, (), tt.float32, None)

    escape = "x */ system(0); /*"
    assert shown_op(node("matmul", escape)) == "matmul"
    assert shown_op(node(HOSTED, escape)) == HOSTED
    assert shown_op(node(HOSTED, "as_string")) == "as_string (in Python)"
    assert "*/" not in comment_text("a */ b\n#define x")
    assert "\n" not in comment_text("a */ b\n#define x")


def test_a_tensor_default_is_saved_with_its_function(tmp_path):
    """A call binds a tensor default as an argument of the trace (as TensorFlow's), so the
    loaded function holds the default: a call that leaves it out gets it, one that gives it
    another value runs with that."""
    holder, default = tt.Module(), tt.constant([2.0, 3.0])
    holder.f = tt.function(lambda x, scale=default: x * scale)
    x = tt.constant([1.0, 1.0])
    np.testing.assert_array_equal(holder.f(x).numpy(), [2.0, 3.0])
    tt.saved_model.save(holder, str(tmp_path))
    loaded = tt.saved_model.load(str(tmp_path))
    np.testing.assert_array_equal(loaded.f(x).numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(loaded.f(x, tt.constant([5.0, 7.0])).numpy(), [5.0, 7.0])


def test_string_constants_come_back_as_their_bytes(tmp_path):
    """A function's string constants (a numpy array of str included, as tf.gather of class
    names takes them) load as the same bytes, also bytes that are not UTF-8."""
    names = np.array(["down", "go", "ñ"])
    raw = tt.constant([b"\xff\x00", b"ok"])

    class Labels(tt.Module):
        @tt.function(input_signature=[tt.TensorSpec([None], tt.int64)])
        def __call__(self, ids):
            return tt.gather(names, ids), tt.gather(raw, ids % 2)

    tt.saved_model.save(Labels(), str(tmp_path))
    words, data = tt.saved_model.load(str(tmp_path))(tt.constant([2, 0], tt.int64))
    assert words.numpy().tolist() == ["ñ".encode(), b"down"]
    assert data.numpy().tolist() == [b"\xff\x00", b"\xff\x00"]
