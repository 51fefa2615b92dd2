"""Tensors, tt.print and signatures print as TensorFlow 2.21 prints them.

Each expected string is TensorFlow 2.21's output for the same code, observed with TensorFlow
and written here by hand, with `tracer` where TensorFlow writes `tf` (`tracer.Tensor`, and
tracer's dtypes, `tt.float32`, in specs).
"""

import functools
import io
import timeit

import numpy as np
import pytest

import tracer as tt

# --- symbolic tensors -----------------------------------------------------------------------


def shown_while_traced(function, *args, **options):
    """`str` of each tensor `function(*args)` returns in a list, taken while it is traced
    (as a function with `function`'s parameters, which name its arguments)."""
    shown = []

    @functools.wraps(function)
    def traced(*inputs):
        shown.extend(str(t) for t in function(*inputs))
        return inputs[0]

    tt.function(traced, **options)(*args)
    return shown


def test_an_argument_prints_its_name_and_shape():
    assert shown_while_traced(lambda x: [x], tt.constant([1, 2, 3])) == [
        'Tensor("x:0", shape=(3,), dtype=int32)'
    ]


def test_an_unknown_dimension_prints_as_none():
    signature = [tt.TensorSpec([None], tt.int32)]
    assert shown_while_traced(lambda x: [x], tt.constant([1, 2]), input_signature=signature) == [
        'Tensor("x:0", shape=(None,), dtype=int32)'
    ]


def test_the_repr_of_a_symbolic_tensor():
    shown = []

    @tt.function(input_signature=[tt.TensorSpec([None], tt.int32)])
    def f(x):
        shown.append(repr(x))
        return x

    f(tt.constant([1]))
    assert shown == ["<tracer.Tensor 'x:0' shape=(None,) dtype=int32>"]


def test_computed_values_print_tensorflows_op_names():
    def ops(x, y):
        m = tt.matmul(tt.reshape(tt.cast(x, tt.float32), (-1, 1)), tt.ones((1, 3)))
        return [x + 1, x - 1, tt.reduce_sum(x), tt.cast(x, tt.float32) / 2.0, m]

    assert shown_while_traced(ops, tt.constant([1, 2, 3]), tt.constant(1.0)) == [
        'Tensor("add:0", shape=(3,), dtype=int32)',
        'Tensor("sub:0", shape=(3,), dtype=int32)',
        'Tensor("Sum:0", shape=(), dtype=int32)',
        'Tensor("truediv:0", shape=(3,), dtype=float32)',
        'Tensor("MatMul:0", shape=(3, 3), dtype=float32)',
    ]


def test_unary_ops_print_tensorflows_op_names():
    def ops(x):
        return [tt.exp(x), tt.math.log(x), tt.sin(x), tt.sqrt(x), tt.nn.relu(x), x > 0]

    assert shown_while_traced(ops, tt.constant(1.0)) == [
        'Tensor("Exp:0", shape=(), dtype=float32)',
        'Tensor("Log:0", shape=(), dtype=float32)',
        'Tensor("Sin:0", shape=(), dtype=float32)',
        'Tensor("Sqrt:0", shape=(), dtype=float32)',
        'Tensor("Relu:0", shape=(), dtype=float32)',
        'Tensor("Greater:0", shape=(), dtype=bool)',
    ]


def test_composite_ops_print_as_tensorflows_one_op():
    # one op each in TensorFlow, several primitives in tracer: the primitives inside take
    # no names, so the sum after the mean is `Sum`, as in TensorFlow's graph
    def ops(x):
        m = tt.math
        return [
            tt.reduce_mean(x), tt.square(x), tt.stack([x, x]), tt.nn.softmax(x),
            tt.reduce_sum(x), tt.nn.log_softmax(x), tt.nn.relu6(x), tt.nn.elu(x), m.sinh(x),
            m.reciprocal(x), m.squared_difference(x, x), m.is_nan(x), tt.reduce_any(m.is_nan(x)),
            m.xlogy(x, x), m.divide_no_nan(x, x), m.cosh(x), m.asinh(x), m.acosh(x),
            m.atanh(x), m.is_inf(x), tt.reduce_mean(x, name="avg"), tt.stack([x, x], axis=1),
        ]  # fmt: skip

    shown = [s.split('"')[1] for s in shown_while_traced(ops, tt.constant([1.0, 2.0]))]
    assert shown == [
        "Mean:0", "Square:0", "stack:0", "Softmax:0", "Sum:0", "LogSoftmax:0", "Relu6:0",
        "Elu:0", "Sinh:0", "Reciprocal:0", "SquaredDifference:0", "IsNan:0", "Any:0",
        "Xlogy:0", "div_no_nan:0", "Cosh:0", "Asinh:0", "Acosh:0", "Atanh:0", "IsInf:0",
        "avg:0", "stack_1:0",
    ]  # fmt: skip


def test_a_symbolic_tensor_has_a_name_and_an_eager_one_has_none():
    names = []

    @tt.function
    def f(x):
        names.append((x.name, (x * 2).name, tt.reduce_mean(x).name))
        return x

    f(tt.constant([1.0]))
    assert names == [("x:0", "mul:0", "Mean:0")]
    with pytest.raises(AttributeError, match="Tensor.name is undefined when eager execution"):
        getattr(tt.constant(1.0), "name")  # noqa: B009 (the attribute access is the test)


def test_names_are_made_unique_per_function_as_tensorflow_does():
    def ops(x):
        b = x * 2
        c = b * 3
        return [c, c * c]

    expected = [
        'Tensor("mul_1:0", shape=(3,), dtype=int32)',
        'Tensor("mul_2:0", shape=(3,), dtype=int32)',
    ]
    assert shown_while_traced(ops, tt.constant([1, 2, 3])) == expected
    # each traced function counts from the start
    assert shown_while_traced(ops, tt.constant([1, 2, 3])) == expected


def test_arguments_take_their_names_first_and_case_does_not_count():
    def ops(sum, add):
        return [tt.reduce_sum(sum), add + 1, sum * 2]

    assert shown_while_traced(ops, tt.constant([1, 2, 3]), tt.constant(1)) == [
        'Tensor("Sum_1:0", shape=(), dtype=int32)',
        'Tensor("add_1:0", shape=(), dtype=int32)',
        'Tensor("mul:0", shape=(3,), dtype=int32)',
    ]


def test_results_of_loops_and_branches():
    def ops(x):
        c = tt.cond(x[0] > 0, lambda: (x, x * 2), lambda: (-x, x))
        d = tt.cond(x[0] > 0, lambda: x, lambda: -x)
        r = tt.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2), (0, x))
        return [*c, d, *r]

    assert shown_while_traced(ops, tt.constant([1.0])) == [
        'Tensor("cond/Identity:0", shape=(1,), dtype=float32)',
        'Tensor("cond/Identity_1:0", shape=(1,), dtype=float32)',
        'Tensor("cond_1/Identity:0", shape=(1,), dtype=float32)',
        'Tensor("while:2", shape=(), dtype=int32)',
        'Tensor("while:3", shape=(1,), dtype=float32)',
    ]


# --- eager tensors --------------------------------------------------------------------------


def test_the_repr_of_a_value_of_several_lines_starts_on_a_new_line():
    assert repr(tt.constant([[1.0, 2.0], [3.0, 4.0]])) == (
        "<tracer.Tensor: shape=(2, 2), dtype=float32, numpy=\n"
        "array([[1., 2.],\n"
        "       [3., 4.]], dtype=float32)>"
    )


def test_the_repr_of_a_value_of_one_line_stays_on_it():
    assert repr(tt.constant([True, False])) == (
        "<tracer.Tensor: shape=(2,), dtype=bool, numpy=array([ True, False])>"
    )
    assert repr(tt.constant(3.5)) == "<tracer.Tensor: shape=(), dtype=float32, numpy=3.5>"


def test_the_repr_of_a_scalar_shows_its_python_value_as_tensorflows():
    """TF 2.21 (numpy 2.4): `repr(tf.constant(8.3))` is `<tf.Tensor: shape=(), dtype=float32,
    numpy=8.300000190734863>` (the float32's Python float); `str` keeps numpy's `8.3`."""
    assert repr(tt.constant(8.3)).endswith("dtype=float32, numpy=8.300000190734863>")
    assert str(tt.constant(8.3)) == "tracer.Tensor(8.3, shape=(), dtype=float32)"
    assert repr(tt.constant(8.3, tt.float64)).endswith("numpy=8.3>")
    assert repr(tt.Variable(8.3)).endswith("dtype=float32, numpy=8.300000190734863>")
    assert repr(tt.constant(np.float16(0.1))).endswith("numpy=0.0999755859375>")
    assert repr(tt.constant(b"ab")).endswith("dtype=string, numpy=b'ab'>")
    assert repr(tt.constant(True)).endswith("dtype=bool, numpy=True>")


def test_str_of_a_matrix():
    assert str(tt.constant(np.arange(12.0).reshape(3, 4))) == (
        "tracer.Tensor(\n"
        "[[ 0.  1.  2.  3.]\n"
        " [ 4.  5.  6.  7.]\n"
        " [ 8.  9. 10. 11.]], shape=(3, 4), dtype=float64)"
    )


# --- tt.print -------------------------------------------------------------------------------


def printed(*inputs, **options):
    stream = io.StringIO()
    tt.print(*inputs, output_stream=stream, **options)
    return stream.getvalue()


@pytest.mark.parametrize(
    "value, text",
    [
        (tt.constant(0.744097471), "0.744097471"),
        (tt.constant(1.0), "1"),
        (tt.constant(1 / 3), "0.333333343"),
        (tt.constant(123456789.0), "123456792"),
        (tt.constant(1e-8), "1e-08"),
        (tt.constant(1e20), "1e+20"),
        (tt.constant(-0.0), "-0"),
        (tt.constant(float("nan")), "nan"),
        (tt.constant(np.float16(0.1)), "0.0999755859"),
        (tt.constant(0.1, tt.float64), "0.1"),
        (tt.constant(1 / 3, tt.float64), "0.33333333333333331"),
        (tt.constant(np.pi, tt.float64), "3.1415926535897931"),
        (tt.constant(3), "3"),
        (tt.constant(2**40, tt.int64), "1099511627776"),
        (tt.constant(True), "1"),
    ],
)
def test_print_of_a_scalar(value, text):
    assert printed(value) == text + "\n"


def test_print_of_vectors_and_bools():
    assert printed(tt.constant([1, 2, 3])) == "[1 2 3]\n"
    assert printed(tt.constant([1.5, 2.0, 0.744097471])) == "[1.5 2 0.744097471]\n"
    assert printed(tt.constant([0.5, 100.25, 1e10])) == "[0.5 100.25 1e+10]\n"
    assert printed(tt.constant([True, False])) == "[1 0]\n"
    assert printed(tt.constant(np.zeros(0, np.float32))) == "[]\n"


def test_print_of_matrices():
    assert printed(tt.constant([[1, 2], [3, 4]])) == "[[1 2]\n [3 4]]\n"
    assert printed(tt.constant([[0.1, 0.2]], tt.float64)) == "[[0.1 0.2]]\n"
    assert printed(tt.constant(np.arange(8).reshape(2, 2, 2))) == (
        "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]\n"
    )


def test_print_summarizes_long_axes():
    assert printed(tt.constant(np.arange(6))) == "[0 1 2 3 4 5]\n"
    assert printed(tt.constant(np.arange(7.0))) == "[0 1 2 ... 4 5 6]\n"
    assert printed(tt.constant(np.arange(10)), summarize=2) == "[0 1 ... 8 9]\n"
    assert printed(tt.constant(np.arange(10)), summarize=-1) == "[0 1 2 3 4 5 6 7 8 9]\n"
    assert printed(tt.constant(np.arange(1000000.0))) == "[0 1 2 ... 999997 999998 999999]\n"
    assert printed(tt.constant(np.arange(100).reshape(10, 10))) == (
        "[[0 1 2 ... 7 8 9]\n"
        " [10 11 12 ... 17 18 19]\n"
        " [20 21 22 ... 27 28 29]\n"
        " ...\n"
        " [70 71 72 ... 77 78 79]\n"
        " [80 81 82 ... 87 88 89]\n"
        " [90 91 92 ... 97 98 99]]\n"
    )


def test_print_of_every_element_takes_time_linear_in_their_number():
    """summarize=-1 writes all 10**6 elements in about the time joining their texts takes
    (numpy's array2string, on one line, took minutes: quadratic in the elements)."""
    values = np.arange(1_000_000)
    x = tt.constant(values)

    def seconds(task):
        return min(timeit.repeat(task, number=1, repeat=3))

    # NOTE: relative to a linear baseline measured alongside, never absolute: the machine
    # may be slow or busy; printing takes 1-2 times the join here, the quadratic way > 500
    joined = seconds(lambda: " ".join(map(str, values.tolist())))
    shown = seconds(lambda: printed(x, summarize=-1))
    assert printed(x, summarize=-1) == "[" + " ".join(map(str, values.tolist())) + "]\n"
    assert shown < 20 * joined


def test_print_of_complex_and_empty_values_is_tensorflows():
    """TF 2.21 (run here): tf.print has no format for complex values and writes `?` for
    each, three at most; an empty tensor whose first axis is not empty prints as `[`, a
    line break per further axis and ` ...]`."""
    ones = np.ones((2, 2)) * (1 + 1j)
    assert printed(tt.constant(1.5 + 0j, tt.complex128)) == "?\n"
    assert printed(tt.constant([1 + 2j, 3 - 4.5j], tt.complex64)) == "[? ?]\n"
    assert printed(tt.constant(ones, tt.complex64)) == "[? ? ?...]\n"
    assert printed(tt.constant([[1j]], tt.complex128)) == "[?]\n"
    assert printed("a", tt.constant(2j, tt.complex64)) == "a ?\n"
    assert printed(tt.zeros([2, 0])) == "[\n ...]\n"
    assert printed(tt.zeros([2, 3, 0])) == "[\n\n ...]\n"
    assert printed(tt.zeros([0, 3])) == "[]\n"
    assert printed(tt.zeros([0, 0])) == "[]\n"

    stream = io.StringIO()

    @tt.function
    def f(x):
        tt.print(x, tt.zeros([2, 0]), output_stream=stream)

    f(tt.constant([1j], tt.complex64))
    assert stream.getvalue() == "[?] [\n ...]\n"


def test_print_of_tensors_among_python_values():
    shown = printed("x:", tt.constant(1.0), [tt.constant(2.0), 3], {"a": tt.constant([1, 2])}, 0.5)
    assert shown == "x: 1 [2, 3] {'a': [1 2]} 0.5\n"


def test_print_in_a_compiled_function():
    stream = io.StringIO()

    @tt.function
    def f(x):
        tt.print(x, x * 2.0, output_stream=stream)

    f(tt.constant(0.744097471))
    assert stream.getvalue() == "0.744097471 1.48819494\n"


# --- signatures -----------------------------------------------------------------------------


def test_pretty_printed_signature_of_an_input_signature():
    f = tt.function(
        lambda x, y: x,
        input_signature=[tt.TensorSpec([None], tt.int32), tt.TensorSpec([], tt.float32)],
    )
    assert f.get_concrete_function().pretty_printed_signature() == (
        "Input Parameters:\n"
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None,), dtype=tt.int32, name=None)\n"
        "  y (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tt.float32, name=None)\n"
        "Output Type:\n"
        "  TensorSpec(shape=(None,), dtype=tt.int32, name=None)\n"
        "Captures:\n"
        "  None"
    )


def test_a_spec_shows_its_name_and_an_unknown_rank():
    assert repr(tt.TensorSpec([None, 2], tt.float64, name="inp")) == (
        "TensorSpec(shape=(None, 2), dtype=tt.float64, name='inp')"
    )
    assert repr(tt.TensorSpec(None, tt.float32)) == (
        "TensorSpec(shape=<unknown>, dtype=tt.float32, name=None)"
    )


def test_parameter_kinds_defaults_and_nested_values():
    @tt.function
    def f(a, b, *args, c=1, **kw):
        return [a, {"k": b}]

    concrete = f.get_concrete_function(
        tt.constant(1), [tt.constant(2.0), 3], 4, tt.constant(5), c=2, e=tt.constant(1.0), d="s"
    )
    assert concrete.pretty_printed_signature().splitlines() == [
        "Input Parameters:",
        "  a (POSITIONAL_ONLY): TensorSpec(shape=(), dtype=tt.int32, name=None)",
        "  b (POSITIONAL_ONLY): List[TensorSpec(shape=(), dtype=tt.float32, name=None), "
        "Literal[3]]",
        "  args_0 (POSITIONAL_ONLY): Literal[4]",
        "  args_1 (POSITIONAL_ONLY): TensorSpec(shape=(), dtype=tt.int32, name=None)",
        "  c (KEYWORD_ONLY): Literal[2]",
        "  d (KEYWORD_ONLY): Literal['s']",
        "  e (KEYWORD_ONLY): TensorSpec(shape=(), dtype=tt.float32, name=None)",
        "Output Type:",
        "  List[TensorSpec(shape=(), dtype=tt.int32, name=None), Dict[['k', "
        "List[TensorSpec(shape=(), dtype=tt.float32, name=None), "
        "TensorSpec(shape=(), dtype=tt.int32, name=None)]]]]",
        "Captures:",
        "  None",
    ]


def test_a_variable_argument_and_the_short_form():
    v = tt.Variable([1.0, 2.0])

    @tt.function
    def g(x, var):
        return var + x

    concrete = g.get_concrete_function(tt.constant([1.0, 2.0]), v)
    spec = "TensorSpec(shape=(2,), dtype=tt.float32, name=None)"
    variable = "VariableSpec(shape=(2,), dtype=tt.float32, trainable=True, alias_id=0)"
    assert concrete.pretty_printed_signature().splitlines()[2] == (
        f"  var (POSITIONAL_OR_KEYWORD): {variable}"
    )
    assert concrete.pretty_printed_signature(verbose=False) == (
        f"(x: {spec}, var: {variable}) -> {spec}"
    )


def test_a_captured_variable_is_listed_by_id():
    v = tt.Variable(1.0)

    @tt.function
    def h(x):
        return x * v

    text = h.get_concrete_function(tt.constant(2.0)).pretty_printed_signature()
    assert text.splitlines()[-2:] == [
        "Captures:",
        f"  {id(v)}: TensorSpec(shape=(), dtype=tt.resource, name=None)",
    ]


def test_a_function_without_parameters_or_tensors():
    @tt.function
    def n():
        return None

    assert n.get_concrete_function().pretty_printed_signature() == (
        "Input Parameters:\nOutput Type:\n  Literal[None]\nCaptures:\n  None"
    )
