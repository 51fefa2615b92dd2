"""Errors raised while `map` and `filter` run the user's function: TensorFlow raises them
from the iterator, at the element that raised, and so does tracer. Only a function tracer
cannot trace runs eagerly instead (tests/test_data.py: fill([x], x)); an error of a run is
never answered by running the element again."""

import traceback

import pytest

import tracer as tt

Dataset = tt.data.Dataset


def test_a_map_whose_run_raises_stops_the_pass_at_that_element():
    """range(8).map of a tt.py_function that raises ValueError at its fifth call (a corrupt
    record): the pass gives 0, 10, 20, 30, then the error, with the user's line; element 4
    ran once, and a later pass still runs the compiled map, not an eager one."""
    calls, traces = [], []

    def parse(x):
        calls.append(int(x))
        if len(calls) == 5:
            raise ValueError("bad record")
        return x * 10

    def mapped(x):
        traces.append(x)  # runs when traced, and at each element where the map runs eagerly
        return tt.py_function(parse, [x], tt.int64)

    dataset = Dataset.range(8).map(mapped)
    got = []
    with pytest.raises(ValueError, match="bad record") as raised:
        for element in dataset:
            got.append(int(element))
    assert got == [0, 10, 20, 30] and calls == [0, 1, 2, 3, 4]
    assert "parse" in [frame.name for frame in traceback.extract_tb(raised.tb)]
    assert [int(e) for e in dataset] == list(range(0, 80, 10))
    assert len(traces) == 2  # map()'s trace, as TensorFlow's, and the first element's


@pytest.mark.parametrize("error", [ValueError, TypeError])
def test_a_map_whose_first_run_raises_runs_that_element_once(error):
    """The first element's tt.py_function runs while the map is traced (its results' shapes
    come from that run): where it raises, that is the element's error, and the element is
    not run again eagerly as a function tracer cannot trace would be."""
    calls = []

    def parse(x):
        calls.append(int(x))
        if int(x) == 0:
            raise error("bad first record")
        return x * 10

    dataset = Dataset.range(3).map(lambda x: tt.py_function(parse, [x], tt.int64))
    with pytest.raises(error, match="bad first record") as raised:
        list(dataset)
    assert calls == [0]
    assert "parse" in [frame.name for frame in traceback.extract_tb(raised.tb)]


def test_an_error_raised_from_a_first_run_s_error_runs_that_element_once():
    """The map function turns the tt.py_function's error into its own (`raise ... from`):
    that is the element's error too."""
    calls = []

    def parse(x):
        calls.append(int(x))
        raise KeyError("no field")

    def mapped(x):
        try:
            return tt.py_function(parse, [x], tt.int64)
        except KeyError as error:
            raise ValueError("bad record") from error

    with pytest.raises(ValueError, match="bad record"):
        list(Dataset.range(3).map(mapped))
    assert calls == [0]


def test_a_filter_whose_run_raises_stops_the_pass_at_that_element():
    """A predicate whose tt.py_function raises TypeError at its third call: the pass keeps
    elements 0 and 1, then raises; element 2 ran once."""
    calls = []

    def keep(x):
        calls.append(int(x))
        if len(calls) == 3:
            raise TypeError("cannot read record")
        return True

    dataset = Dataset.range(5).filter(lambda x: tt.py_function(keep, [x], tt.bool))
    got = []
    with pytest.raises(TypeError, match="cannot read record"):
        for element in dataset:
            got.append(int(element))
    assert got == [0, 1] and calls == [0, 1, 2]


def test_a_map_tracer_cannot_trace_still_runs_eagerly_and_raises_its_own_errors():
    """fill([x], x) cannot be traced (its shape is x's value): it runs eagerly; where the
    eager call fails too, its error is the one raised."""
    ragged = Dataset.range(1, 4).map(lambda x: tt.fill([x], x))
    assert [e.tolist() for e in ragged.as_numpy_iterator()] == [[1], [2, 2], [3, 3, 3]]

    def broken(x):
        tt.fill([x], x)  # what the trace stops at
        raise ValueError(f"no record {int(x)}")  # what the eager call raises

    with pytest.raises(ValueError, match="no record 1"):
        list(Dataset.range(1, 2).map(broken))
