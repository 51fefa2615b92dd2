"""How tt.function binds a call to the Python function's parameters before it keys a trace,
and to an input_signature, as TensorFlow 2.21 does (each test states what TF does; the
values were observed with tensorflow 2.21)."""

import dataclasses

import numpy as np
import pytest

import tracer as tt


def test_defaults_and_keywords_are_bound_before_the_trace_is_keyed():
    """TF: `f(x)`, `f(x, y=2)`, `f(x, 2)` and `f(x=x)` of `def f(x, y=2)` are one trace."""
    traces = []

    @tt.function
    def f(x, y=2):
        traces.append(y)
        return x * y

    x = tt.constant(1.5)
    results = [f(x), f(x, y=2), f(x, 2), f(x=x), f(y=2, x=x)]
    assert [float(r) for r in results] == [3.0] * 5
    assert f.experimental_get_tracing_count() == 1 and traces == [2]
    assert float(f(x, 3)) == 4.5 and float(f(x, y=3)) == 4.5  # another value: one more trace
    assert f.experimental_get_tracing_count() == 2


def test_a_call_that_leaves_out_a_default_is_one_trace_and_keeps_the_compiled_entry():
    """TF: `f(x)` and `f(x, 2.0)` of `def f(x, y=2.0)` are one trace. The trace of `f(x)`
    (made as f(x, 2.0)) is still called by position through its entry in C."""

    @tt.function(backend="c")
    def f(x, y=2.0):
        return x * y

    x = tt.constant([1.0, 2.0])
    f(x), f(x, 2.0)
    assert f.experimental_get_tracing_count() == 1
    f(x)
    if f._fast is not None:  # (where the backend gives the function an entry in C)
        hits = f._fast.hits
        np.testing.assert_array_equal(f(x).numpy(), [2.0, 4.0])
        assert f._fast.hits == hits + 1


def test_a_call_by_keyword_takes_the_compiled_entry_of_the_call_by_position():
    """`f(x, y=y)`, `f(y=y, x=x)` and `f(x, y, scale=2.0)` of `def f(x, y, scale=2.0)` are
    the trace of `f(x, y)`, and each such form of call, once bound, reaches its entry in C
    (no binding at each call). Keyword-only parameters and `**` keep their keywords; a call
    the parameters refuse raises Python's message."""

    @tt.function(backend="c")
    def f(x, y, scale=2.0):
        return x * y * scale

    x, y = tt.constant([1.0, 2.0]), tt.constant([3.0, 4.0])
    forms = (lambda: f(x, y), lambda: f(x, y=y), lambda: f(y=y, x=x), lambda: f(x, y, scale=2.0))
    for call in forms * 2:
        np.testing.assert_array_equal(call().numpy(), [6.0, 16.0])
    assert f.experimental_get_tracing_count() == 1
    if f._fast is not None:  # (where the backend gives the function an entry in C)
        hits = f._fast.hits
        f(y=y, x=x)
        assert f._fast.hits == hits + 1
    np.testing.assert_array_equal(f(y=x, x=y, scale=1.0).numpy(), [3.0, 8.0])
    assert f.experimental_get_tracing_count() == 2
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        f(x, x=y)
    with pytest.raises(TypeError, match="missing a required argument: 'y'"):
        f(x=x)

    @tt.function
    def g(x, *, power=2, **extra):
        return x**power * sum(extra.values(), 1.0)

    assert [float(g(tt.constant(3.0), power=3)) for _ in range(2)] == [27.0, 27.0]
    assert float(g(tt.constant(3.0), a=1.0)) == 18.0


def test_a_concrete_function_binds_keywords_to_the_parameters_they_name():
    """`c(y=y, x=x)` of `def f(y, x)`'s concrete function is `f(y, x)`, whatever order the
    keywords come in, with or without an input_signature, with `**` keywords too (tracer
    once took them in the order of their sorted names: x - y came out negated)."""
    x, y = tt.constant([10.0, 20.0]), tt.constant([1.0, 2.0])

    def difference(y, x):
        return x - y

    spec = tt.TensorSpec([2], tt.float32)
    by_calls = tt.function(difference).get_concrete_function(y=spec, x=spec)
    by_table = tt.function(difference, input_signature=[spec, spec]).get_concrete_function()
    for concrete in (by_calls, by_table):
        for call in (
            lambda: concrete(y=y, x=x),
            lambda: concrete(x=x, y=y),
            lambda: concrete(y, x=x),
        ):
            np.testing.assert_array_equal(call().numpy(), [9.0, 18.0])

    @tt.function
    def g(y, x, scale=2.0, **more):
        return (x - y) * scale + more["z"]

    concrete = g.get_concrete_function(x=spec, y=spec, z=spec)
    np.testing.assert_array_equal(concrete(z=x, x=x, y=y).numpy(), [28.0, 56.0])


def test_a_tensor_default_is_a_tensor_argument_of_the_trace():
    """TF: `td(x)`, `td(x, tf.constant(2.))` and `td(x, y=tf.constant(5.))` of
    `def td(x, y=tf.constant(2.))` are one trace; the default is an input."""
    two = tt.constant(2.0)

    @tt.function
    def f(x, y=two):
        return x * y

    x = tt.constant(3.0)
    assert [float(f(x)), float(f(x, tt.constant(2.0))), float(f(x, y=tt.constant(5.0)))] == [
        6.0,
        6.0,
        15.0,
    ]
    assert float(f(x)) == 6.0
    assert f.experimental_get_tracing_count() == 1


def test_python_numbers_equal_in_value_are_one_trace():
    """TF: f(x, 1) then f(x, True), and f(x, 1) then f(x, 1.0), trace once (Literal keys
    compare with ==), the later call seeing the value traced first. -0.0 stays apart from
    0.0 (tracer keeps a float's bits where == would lose them: 1 / y differs)."""
    seen = []

    @tt.function
    def f(x, y):
        seen.append(y)
        return x * 1

    x = tt.constant(1.0)
    f(x, 1), f(x, True), f(x, 1.0)
    assert f.experimental_get_tracing_count() == 1 and seen == [1]
    f(x, 0.0), f(x, -0.0), f(x, 0), f(x, False)
    assert f.experimental_get_tracing_count() == 3


def test_input_signature_converts_python_and_numpy_values():
    """TF: a Python list for TensorSpec([None]) is 3.0; a numpy float64 array for a float32
    spec is cast (3.0); Python ints for float32 specs are converted (2.0); a Variable is
    read. A tensor of another dtype is refused, as is a Python float for an int spec."""

    @tt.function(input_signature=[tt.TensorSpec([None], tt.float32)])
    def total(x):
        return tt.reduce_sum(x)

    @tt.function(input_signature=[tt.TensorSpec([], tt.float32), tt.TensorSpec([], tt.float32)])
    def sub(x, y):
        return x - y

    assert float(total([1.0, 2.0])) == 3.0
    assert float(total(np.array([1.0, 2.0]))) == 3.0
    assert float(total((1, 2))) == 3.0
    assert float(sub(3, 1)) == 2.0
    assert float(sub(tt.Variable(5.0), np.int64(1))) == 4.0
    assert total.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError, match="float64"):
        total(tt.constant(np.array([1.0, 2.0])))
    with pytest.raises(TypeError):
        total([[1.0, 2.0]])  # rank 2 for a rank-1 spec
    at_int = tt.function(lambda x: x, input_signature=[tt.TensorSpec([], tt.int32)])
    with pytest.raises(TypeError):
        at_int(3.0)  # TF: "Cannot convert 3.0 to EagerTensor of dtype int32"
    assert int(at_int(np.float32(3.7))) == 3  # numpy values are cast as numpy casts


def test_input_signature_binds_keywords_and_defaults():
    """TF: `sub(y=tf.constant(1.), x=tf.constant(5.))` is 4.0; a parameter the signature does
    not list takes only its default ("Can not cast 3 to Literal[2]"); a missing argument,
    too many, or a keyword-only parameter without a default are TypeErrors."""

    @tt.function(input_signature=[tt.TensorSpec([], tt.float32), tt.TensorSpec([], tt.float32)])
    def sub(x, y):
        return x - y

    assert float(sub(y=tt.constant(1.0), x=tt.constant(5.0))) == 4.0
    assert float(sub(5.0, y=1.0)) == 4.0
    with pytest.raises(TypeError, match="missing a required argument: 'y'"):
        sub(5.0)
    with pytest.raises(TypeError, match="too many positional arguments"):
        sub(5.0, 1.0, 2.0)

    @tt.function(input_signature=[tt.TensorSpec([], tt.float32)])
    def scaled(x, y=2):
        return x * y

    assert float(scaled(3.0)) == 6.0 and float(scaled(3.0, y=2)) == 6.0
    with pytest.raises(TypeError, match="default"):
        scaled(3.0, y=3)

    def keyword_only(x, *, y):
        return x + y

    f = tt.function(keyword_only, input_signature=[tt.TensorSpec([]), tt.TensorSpec([])])
    with pytest.raises(TypeError, match="keyword-only parameter `y` must have a default"):
        f(1.0, y=2.0)


def test_nested_input_signature():
    """TF: input_signature=[{"a": TensorSpec([None]), "b": TensorSpec([], int32)}] is taken
    when the function is decorated; `nested({"a": [1., 2.], "b": 3})` is 9.0; a dict of
    other keys, or a tuple for a list spec, is a TypeError."""

    def nested_fn(d):
        return tt.reduce_sum(d["a"]) * tt.cast(d["b"], tt.float32)

    spec = {"a": tt.TensorSpec([None], tt.float32), "b": tt.TensorSpec([], tt.int32)}
    nested = tt.function(nested_fn, input_signature=[spec])
    assert float(nested({"a": tt.constant([1.0, 2.0]), "b": tt.constant(3)})) == 9.0
    assert float(nested({"a": [1, 2, 3], "b": 3})) == 18.0
    assert float(nested(d={"a": [1.0], "b": 2})) == 2.0
    assert nested.experimental_get_tracing_count() == 1
    with pytest.raises(TypeError):
        nested({"a": [1.0, 2.0]})

    pair = tt.function(
        lambda xs: xs[0] + xs[1], input_signature=[[tt.TensorSpec([]), tt.TensorSpec([])]]
    )
    assert float(pair([1.0, 2.0])) == 3.0
    with pytest.raises(TypeError):
        pair((1.0, 2.0))


def test_input_signature_of_a_method():
    """A method's instance is not in its input_signature; keywords bind after it."""

    class Model:
        @tt.function(input_signature=[tt.TensorSpec([None], tt.float32)])
        def total(self, x, scale=2.0):
            return tt.reduce_sum(x) * scale

    model = Model()
    assert float(model.total([1.0, 2.0])) == 6.0
    assert float(model.total(x=np.array([1.0, 2.0, 3.0]))) == 12.0
    assert model.total.experimental_get_tracing_count() == 1


def test_tensorflow_options_are_taken():
    """TF: experimental_relax_shapes is the deprecated name of reduce_retracing (three sizes,
    2 traces); experimental_follow_type_hints, experimental_implements and
    experimental_autograph_options are accepted (TF 2.21 traces f(1), f(2), f(3) of a
    parameter annotated tf.Tensor 3 times)."""
    relaxed = tt.function(lambda x: x + 1, experimental_relax_shapes=True)
    for n in (1, 2, 3):
        relaxed(tt.constant(list(range(n))))
    assert relaxed.experimental_get_tracing_count() == 2
    assert relaxed._reduce_retracing is True

    @tt.function(experimental_follow_type_hints=True, experimental_implements="foo")
    def f(x: tt.Tensor):
        return x + 1

    f(1), f(2), f(3)
    assert f.experimental_get_tracing_count() == 3
    assert f.experimental_options == {"follow_type_hints": True, "implements": "foo"}
    g = tt.function(lambda x: x + 1, experimental_autograph_options=())
    assert int(g(tt.constant(1))) == 2


def test_concrete_function_outputs():
    """TF: ConcreteFunction.structured_outputs is the traced result's structure of graph
    tensors; outputs their flat list."""

    @tt.function
    def h(x):
        return {"a": x * 2, "b": [x, 3]}

    concrete = h.get_concrete_function(tt.constant([1.0, 2.0]))
    structured = concrete.structured_outputs
    assert sorted(structured) == ["a", "b"] and len(structured["b"]) == 2
    assert [tuple(t.shape) for t in concrete.outputs] == [(2,), (2,), ()]
    assert [t.dtype for t in concrete.outputs] == [tt.float32, tt.float32, tt.int32]


def test_a_dataclass_argument_is_keyed_by_all_its_fields():
    """TensorFlow 2.21 traces a frozen dataclass argument again when a field its `__eq__`
    leaves out (`compare=False`) changes, and computes with the new value (2.0 then 3.0);
    tracer keyed it by `==` and returned 2.0 twice, from the first trace. Equal dataclasses
    share a trace (TensorFlow's count: 1), and a tensor field is the trace's own constant:
    another tensor is another trace."""

    @dataclasses.dataclass(frozen=True)
    class Config:
        name: str
        scale: float = dataclasses.field(compare=False)

    @dataclasses.dataclass(frozen=True)
    class Held:
        offset: object

    traces = []

    @tt.function
    def scaled(x, config):
        traces.append(config)
        return x * config.scale

    @tt.function
    def shifted(x, held):
        return x + held.offset

    x = tt.constant(1.0)
    assert [float(scaled(x, Config("a", s))) for s in (2.0, 3.0, 3.0)] == [2.0, 3.0, 3.0]
    assert len(traces) == 2
    assert [float(shifted(x, Held(tt.constant(v)))) for v in (1.0, 5.0)] == [2.0, 6.0]


def test_tensor_spec_is_compatible_with_a_spec_or_a_tensor():
    """TensorFlow's one argument: a TensorSpec, a tensor or an array; a dimension None on
    either side fits any (TF 2.21: True, True, True, False, False, False)."""
    spec = tt.TensorSpec([None, 3], tt.float32)
    assert spec.is_compatible_with(tt.TensorSpec([2, 3], tt.float32))
    assert spec.is_compatible_with(tt.ones([5, 3]))
    assert tt.TensorSpec([2, 3], tt.float32).is_compatible_with(spec)
    assert not spec.is_compatible_with(tt.TensorSpec([2, 4], tt.float32))
    assert not spec.is_compatible_with(tt.ones([5, 3], tt.float64))
    assert not spec.is_compatible_with(np.ones(3, np.float32))


def test_a_traced_tensor_has_no_numpy_and_a_returned_string_is_a_tensor():
    """TensorFlow 2.21: inside tf.function `hasattr(x, "numpy")` is False (programs ask it to
    tell eager from traced), and `return "tag"` gives a string tensor, as `return 3` gives an
    int32 one."""
    seen = []

    @tt.function
    def tagged(x):
        seen.append(hasattr(x, "numpy"))
        return x, "tag"

    x, tag = tagged(tt.constant(1.0))
    assert seen == [False] and hasattr(x, "numpy")
    assert isinstance(tag, tt.Tensor) and tag.dtype == tt.string and tag.numpy() == b"tag"
