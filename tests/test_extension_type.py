"""tt.experimental.ExtensionType: fields converted to their types, TensorFlow 2.21's reprs
and errors (the texts below are what TensorFlow printed for the same classes in its
extension_type guide), immutability, equality, Specs, and values through compiled
functions (one trace per type, gradients through the fields)."""

from collections.abc import Mapping

import numpy as np
import pytest

import tracer as tt


class MaskedTensor(tt.experimental.ExtensionType):
    values: tt.Tensor
    mask: tt.Tensor

    def __validate__(self):
        self.values.shape.assert_is_compatible_with(self.mask.shape)
        assert self.mask.dtype.is_bool, "mask.dtype must be bool"


class Pencil(tt.experimental.ExtensionType):
    color: str = "black"
    has_erasor: bool = True
    length: tt.Tensor = 1.0


class Player(tt.experimental.ExtensionType):
    name: tt.Tensor
    attributes: Mapping[str, tt.Tensor]


class Node(tt.experimental.ExtensionType):
    value: tt.Tensor
    children: tuple["Node", ...] = ()


class Pair(tt.experimental.ExtensionType):
    left: "Node"
    right: "Node"


class Toy(tt.experimental.ExtensionType):
    name: str
    price: tt.Tensor

    def __init__(self, name, price, discount=0):
        self.name = name
        self.price = price * (1 - discount)


def test_fields_are_converted_to_their_types():
    mt = MaskedTensor(
        values=[[1, 2, 3], [4, 5, 6]], mask=[[True, True, False], [True, False, True]]
    )
    assert isinstance(mt.values, tt.Tensor) and mt.values.dtype == tt.int32
    np.testing.assert_array_equal(mt.mask.numpy(), [[True, True, False], [True, False, True]])
    anne = Player("Anne", {"height": 8.3, "speed": 28.1})
    assert anne.name.numpy() == b"Anne"
    assert sorted(anne.attributes) == ["height", "speed"]
    np.testing.assert_allclose(anne.attributes["speed"].numpy(), 28.1)
    assert Node(5).children == () and Pair(Node(1), Node(2)).right.value.numpy() == 2
    with pytest.raises(TypeError, match=r"^children\[0\]: Unsupported type annotation 'Node'$"):
        Node(3, [Node(5), Node(2)])  # (a name inside a generic: TF 2.21's error too)


def test_reprs_are_tensorflows():
    assert repr(Pencil()) == (
        "Pencil(color='black', has_erasor=True, "
        "length=<tracer.Tensor: shape=(), dtype=float32, numpy=1.0>)"
    )
    assert str(Toy("ball", 5.0, discount=0.2)) == (
        "Toy(name='ball', price=<tracer.Tensor: shape=(), dtype=float32, numpy=4.0>)"
    )


def test_bad_fields_raise_tensorflows_errors():
    with pytest.raises(TypeError, match="^mask: expected a Tensor, got 'NoneType'$"):
        MaskedTensor([1, 2, 3], None)
    with pytest.raises(AssertionError, match="mask.dtype must be bool"):
        MaskedTensor([1, 2, 3], [0, 1, 0])
    with pytest.raises(ValueError, match=r"^Shapes \(3,\) and \(2,\) are incompatible$"):
        MaskedTensor([1, 2, 3], [True, False])
    with pytest.raises(TypeError, match="^color: expected 'str', got 'int'$"):
        Pencil(color=3)
    with pytest.raises(TypeError, match="missing a required argument: 'price'"):
        Toy.Spec(name="ball")  # (a Spec takes the fields, whatever the constructor takes)


def test_fields_cannot_change():
    mt = MaskedTensor([1, 2, 3], [True, False, True])
    message = "Cannot mutate attribute `mask` outside the custom constructor of ExtensionType."
    with pytest.raises(AttributeError, match=message):
        mt.mask = [True, True, True]
    with pytest.raises(AttributeError, match=message):
        del mt.mask
    with pytest.raises(TypeError):
        Player("Anne", {"height": 8.3}).attributes["height"] = 1.0


def test_equality_compares_tensors():
    a = MaskedTensor([1, 2], [True, False])
    b = MaskedTensor([[3, 4], [5, 6]], [[False, True], [True, True]])
    assert bool(a == a) and (a == b) is False and (a == a.values) is False
    assert bool(a != MaskedTensor([1, 3], [True, False]))
    assert f"{a == a}" == "True"


def test_specs():
    anne = Player("Anne", {"height": 8.3, "speed": 28.1})
    spec = tt.type_spec_from_value(anne)
    assert isinstance(spec, Player.Spec) and spec == Player.Spec.from_value(anne)
    assert repr(spec.name) == "TensorSpec(shape=(), dtype=tt.string, name=None)"
    assert repr(spec.attributes) == (
        "ImmutableDict({'height': TensorSpec(shape=(), dtype=tt.float32, name=None), "
        "'speed': TensorSpec(shape=(), dtype=tt.float32, name=None)})"
    )
    with pytest.raises(TypeError, match="^name: expected a TensorSpec, got 'str'$"):
        Player.Spec(name="x", attributes={})


def test_a_compiled_function_traces_once_per_type():
    traces = []

    @tt.function
    def anonymize(player):
        traces.append(1)
        return Player("<anonymous>", player.attributes)

    out = anonymize(Player("Anne", {"height": 8.3, "speed": 28.1}))
    assert isinstance(out, Player) and out.name.numpy() == b"<anonymous>"
    np.testing.assert_allclose(out.attributes["height"].numpy(), 8.3, rtol=1e-6)
    anonymize(Player("Bart", {"height": 8.1, "speed": 25.3}))
    assert len(traces) == 1
    anonymize(Player("Chuck", {"height": 11.0, "jump": 5.3}))
    assert len(traces) == 2


def test_input_signature_and_gradients():
    class Pastry(tt.experimental.ExtensionType):
        sweetness: tt.Tensor
        chewiness: tt.Tensor

    spec = Pastry.Spec(tt.TensorSpec([2]), tt.TensorSpec(2))

    @tt.function(input_signature=[spec])
    def increase(x):
        return Pastry(x.sweetness * 3.0, x.chewiness)

    cookie = Pastry(sweetness=[1.2, 0.4], chewiness=[0.8, 0.2])
    np.testing.assert_allclose(increase(cookie).sweetness.numpy(), [3.6, 1.2], rtol=1e-6)
    x = tt.constant([1.0, 2.0])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(increase(Pastry(x, x)).sweetness ** 2)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 18.0 * np.array([1.0, 2.0]))


class Masked(tt.experimental.BatchableExtensionType):
    values: tt.Tensor
    mask: tt.Tensor


class Network(tt.experimental.BatchableExtensionType):
    shape: tt.TensorShape
    work: tt.Tensor

    def __init__(self, work):
        self.work = tt.convert_to_tensor(work)
        self.shape = self.work.shape[:-1]


def test_datasets_of_extension_types():
    values, mask = np.arange(20).reshape(5, 4), np.arange(20).reshape(5, 4) % 3 == 0
    rows = list(tt.data.Dataset.from_tensor_slices(Masked(values, mask)))
    assert all(isinstance(r, Masked) for r in rows) and len(rows) == 5
    np.testing.assert_array_equal(rows[3].values.numpy(), values[3])
    np.testing.assert_array_equal(rows[3].mask.numpy(), mask[3])
    (whole,) = tt.data.Dataset.from_tensors(Masked(values, mask))
    np.testing.assert_array_equal(whole.values.numpy(), values)

    def generated():
        for k in range(2, 7):
            yield Masked(np.arange(10), np.arange(10) % k != 0)

    spec = Masked.Spec(values=tt.TensorSpec([10], tt.int64), mask=tt.TensorSpec([10], tt.bool))
    ds = tt.data.Dataset.from_generator(generated, output_signature=spec)
    batches = list(ds.batch(2))
    assert [b.values.shape for b in batches] == [(2, 10), (2, 10), (1, 10)]
    np.testing.assert_array_equal(batches[1].mask.numpy()[1], np.arange(10) % 5 != 0)
    assert ds.batch(2).element_spec == Masked.Spec(
        values=tt.TensorSpec([None, 10], tt.int64), mask=tt.TensorSpec([None, 10], tt.bool)
    )
    again = list(ds.batch(2).unbatch())
    np.testing.assert_array_equal(again[4].mask.numpy(), np.arange(10) % 6 != 0)


def test_a_tensorshape_field_is_not_batched_silently():
    batch = Network([[5.0, 3.0], [3.0, 4.0]])
    with pytest.raises(NotImplementedError, match="field 'shape' is a TensorShape"):
        tt.data.Dataset.from_tensor_slices(batch)
    with pytest.raises(NotImplementedError, match="tt.map_fn of Network values"):
        tt.map_fn(lambda n: n, batch)
