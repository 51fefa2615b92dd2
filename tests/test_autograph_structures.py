"""Autograph: what a tensor `if` or loop carries, as TensorFlow's autograph carries it.
Tuples, lists, dicts and namedtuples stay structures of tensors (each of its own dtype);
names declared `global` or `nonlocal` and attributes and items (`st.v`, `d["a"]`) are carried
too; a name first bound in a loop, or None before it, gets a value from it (TensorFlow 2.21);
and the errors are TensorFlow's classes. Each expected value is TensorFlow 2.21's."""

import collections

import numpy as np
import pytest

import tracer as tt

BACKENDS = ["interpreter", "c"]

COUNTER = None  # a global that `test_a_global_assigned_in_a_tensor_loop_is_carried` assigns


def _numbers(structure):
    return [float(leaf) for leaf in structure]


# --- structures ------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tuple_bound_in_a_tensor_if_stays_a_tuple(backend):
    def f(x):
        if x > 0:
            pair = (x, x + 1.0)
        else:
            pair = (x - 1.0, x)
        return pair + (tt.constant(10.0),)

    result = tt.function(f, backend=backend)(tt.constant(1.0))
    # TensorFlow: the tuple (1.0, 2.0, 10.0), not one tensor [11.0, 12.0]
    assert isinstance(result, tuple) and _numbers(result) == [1.0, 2.0, 10.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tuple_state_of_a_tensor_loop_stays_a_tuple(backend):
    def f(n):
        h, c = tt.zeros((2, 2)), tt.ones((2, 2))
        state = (h, c)
        for _ in tt.range(n):
            h, c = state
            state = (h + c, c * 2.0)
        return state

    result = tt.function(f, backend=backend)(tt.constant(3))
    # h: 1 + 2 + 4 = 7, c: 8 (an RNN's (h, c) state: a tuple of two [2, 2] tensors in
    # TensorFlow, not one [2, 2, 2] tensor)
    assert isinstance(result, tuple) and len(result) == 2
    h, c = result
    np.testing.assert_array_equal(h.numpy(), np.full((2, 2), 7.0, np.float32))
    np.testing.assert_array_equal(c.numpy(), np.full((2, 2), 8.0, np.float32))


def test_a_list_state_of_a_tensor_loop_stays_a_list():
    def f(n):
        w = [1.0, 2.0]
        for _ in tt.range(n):
            w = [w[0] + 1.0, w[1]]
        return w + [0.0]

    result = tt.function(f)(tt.constant(3))
    # TensorFlow: the list [4.0, 2.0, 0.0]
    assert isinstance(result, list) and _numbers(result) == [4.0, 2.0, 0.0]


def test_a_namedtuple_and_a_dict_of_mixed_dtypes_stay_themselves():
    Pair = collections.namedtuple("Pair", "count total")

    def f(n):
        pair = Pair(tt.constant(0), tt.constant(1.0))
        d = {"a": tt.constant(0), "b": 1.0}
        for i in tt.range(n):
            pair = Pair(pair.count + i, pair.total * 2.0)
            d = {"a": d["a"] + 1, "b": d["b"] + 0.5}
        return pair, d

    pair, d = tt.function(f)(tt.constant(4))
    # TensorFlow: Pair(count=6 (int32), total=16.0), {'a': 4 (int32), 'b': 3.0}
    assert isinstance(pair, Pair) and pair.count.dtype == tt.int32
    assert (int(pair.count), float(pair.total)) == (6, 16.0)
    assert d["a"].dtype == tt.int32 and (int(d["a"]), float(d["b"])) == (4, 3.0)


def test_a_tuple_of_mixed_dtypes_is_a_loop_state():
    def f(n):
        st = (tt.constant(0), tt.constant(1.0))
        for i in tt.range(n):
            st = (st[0] + i, st[1] * 2.0)
        return st

    count, total = tt.function(f)(tt.constant(4))
    assert (int(count), float(total)) == (6, 16.0)  # TensorFlow: (6, 16.0)


def test_a_dict_bound_in_both_branches_is_carried():
    def f(x):
        if x > 0:
            d = {"a": x, "b": x * 2.0}
        else:
            d = {"a": -x, "b": x}
        return d["b"]

    assert float(tt.function(f)(tt.constant(1.0))) == 2.0  # TensorFlow: 2.0


# --- global and nonlocal ---------------------------------------------------------------------


def test_a_nonlocal_in_a_nested_function_leaves_the_function_converted():
    def f(x):
        total = x

        def add(k):
            nonlocal total
            total = total + k

        add(1)
        if x > 0:  # a tensor `if`
            total = total * 2
        return total

    assert int(tt.function(f)(tt.constant(4))) == 10  # TensorFlow: 10


def test_a_global_declared_in_the_function_leaves_it_converted():
    def f(n):
        global COUNTER
        COUNTER = 0
        s = tt.constant(0)
        for i in tt.range(n):  # a tensor loop
            s += i
        return s

    assert int(tt.function(f)(tt.constant(4))) == 6  # TensorFlow: 6


def test_a_global_assigned_in_a_tensor_loop_is_carried():
    def f(n):
        global COUNTER
        COUNTER = tt.constant(0)
        for i in tt.range(n):
            if i > 0:
                COUNTER = COUNTER + i
        return COUNTER

    assert int(tt.function(f)(tt.constant(4))) == 6  # TensorFlow: 6


def test_a_nonlocal_of_the_function_assigned_in_a_tensor_loop_is_carried():
    def outer():
        acc = tt.constant(1)

        def inner(n):
            nonlocal acc
            for _ in tt.range(n):
                acc = acc * 2
            return acc

        return inner

    assert int(tt.function(outer())(tt.constant(3))) == 8  # TensorFlow: 8


# --- attributes and items ---------------------------------------------------------------------


class _State:
    pass


def test_an_attribute_assigned_in_a_tensor_if_is_carried():
    st = _State()

    def f(x):
        st.v = x
        if x > 0:
            st.v = x * 10
        return st.v

    assert int(tt.function(f)(tt.constant(2))) == 20  # TensorFlow: 20


def test_an_item_assigned_in_a_tensor_loop_is_carried():
    def f(n):
        d = {"a": tt.constant(0), "b": tt.constant(1)}
        for i in tt.range(n):
            d["a"] = d["a"] + i
        return d["a"], d["b"]

    a, b = tt.function(f)(tt.constant(4))
    assert (int(a), int(b)) == (6, 1)  # TensorFlow: (6, 1)


# --- names first bound in a loop ---------------------------------------------------------------


def test_a_name_first_bound_in_a_tensor_loop_is_its_last_value():
    def f(n):
        for i in tt.range(n):
            t = i * 2
        return t

    assert int(tt.function(f)(tt.constant(4))) == 6  # TensorFlow 2.21: 6


def test_a_name_none_before_a_tensor_loop_is_its_last_value():
    def f(n):
        s = None
        for i in tt.range(n):
            s = i
        return s

    assert int(tt.function(f)(tt.constant(4))) == 3  # TensorFlow 2.21: 3


# --- error classes ----------------------------------------------------------------------------


def test_a_name_of_two_dtypes_after_a_tensor_if_is_a_type_error():
    def f(x):
        if x > 0:
            k = 1
        else:
            k = 2.5
        return k

    # TensorFlow: TypeError: 'k' has dtype int32 in the main branch, but dtype float32 in the
    # else branch
    with pytest.raises(
        TypeError, match=r"'k' has dtype int32 in the true branch, but dtype float32"
    ):
        tt.function(f)(tt.constant(1))


def test_a_condition_that_is_not_a_boolean_is_a_value_error():
    def f(x):
        if x:
            return x
        return x + 1.0

    # TensorFlow: ValueError: condition of if statement expected to be `tf.bool` scalar
    with pytest.raises(ValueError, match="condition of if statement expected to be `tt.bool`"):
        tt.function(f)(tt.constant(0.0))


# --- builtins and chained comparisons ----------------------------------------------------------


def test_range_len_int_and_float_of_tensors_are_converted():
    def py_range(n):
        s = tt.constant(0)
        for i in range(n):
            s += i
        return s

    def py_len(x):
        s = tt.constant(0.0)
        for i in tt.range(len(x)):
            s += x[i]
        return s

    def py_int(x):
        return int(x) * 2

    def py_float(x):
        return float(x) / 2

    # TensorFlow: range -> tf.range (6), len -> tf.shape(x)[0] (6.0), int -> tf.cast (6),
    # float -> tf.cast to float32 (1.5)
    assert int(tt.function(py_range)(tt.constant(4))) == 6
    spec = [tt.TensorSpec([None], tt.float32)]
    assert float(tt.function(py_len, input_signature=spec)(tt.constant([1.0, 2.0, 3.0]))) == 6.0
    assert int(tt.function(py_int)(tt.constant(3))) == 6
    assert float(tt.function(py_float)(tt.constant(3))) == 1.5


def test_a_chained_comparison_of_tensors_is_a_logical_and():
    def f(x):
        if 0 < x < 5:
            return tt.constant(1)
        return tt.constant(0)

    g = tt.function(f)
    # TensorFlow: (0 < x) & (x < 5): 1, 0, 0
    assert [int(g(tt.constant(v))) for v in (3, 7, -1)] == [1, 0, 0]
