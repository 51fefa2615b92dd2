"""tt.nest: TensorFlow's tf.nest functions a program calls on its own structures
(map_structure, assert_same_structure, is_nested), with the values and exception types
TensorFlow 2.21 printed for the same calls."""

import collections

import pytest

import tracer as tt

Pair = collections.namedtuple("Pair", "a b")


def test_map_structure_maps_the_leaves_of_structures_alike():
    """TF 2.21: {'x': 11, 'y': (22, 33)}; [Pair(a=2, b=4), {'k': 6}]; []."""
    added = tt.nest.map_structure(
        lambda a, b: a + b, {"x": 1, "y": (2, 3)}, {"x": 10, "y": (20, 30)}
    )
    assert added == {"x": 11, "y": (22, 33)} and type(added["y"]) is tuple
    doubled = tt.nest.map_structure(lambda a: a * 2, [Pair(1, 2), {"k": 3}])
    assert doubled == [Pair(2, 4), {"k": 6}] and type(doubled[0]) is Pair
    assert tt.nest.map_structure(lambda a: a, []) == []
    tensors = tt.nest.map_structure(tt.square, {"w": tt.constant([1.0, 2.0])})
    assert tensors["w"].numpy().tolist() == [1.0, 4.0]
    with pytest.raises(ValueError):
        tt.nest.map_structure(lambda a, b: a, [1], [1, 2])


def test_assert_same_structure_and_is_nested():
    """TF 2.21: a list against a tuple is a TypeError (nothing with check_types=False), other
    lengths and other keys ValueErrors; is_nested of [1], 1 and {}: True, False, True."""
    with pytest.raises(TypeError):
        tt.nest.assert_same_structure([1, 2], (1, 2))
    tt.nest.assert_same_structure([1, 2], (1, 2), check_types=False)
    for first, second in (([1], [1, 2]), ({"a": 1}, {"b": 1})):
        with pytest.raises(ValueError):
            tt.nest.assert_same_structure(first, second)
    assert [tt.nest.is_nested(v) for v in ([1], 1, {})] == [True, False, True]
