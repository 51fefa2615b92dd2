"""Autograph: Python `if`, `while` and `for` on tensors inside tt.function become tt.cond and
tt.while_loop; on Python values they stay Python. Values against plain Python and numpy,
gradients against finite differences, and the errors that name the line."""

import ast
import inspect
import linecache
import logging
import sys
import textwrap
import types
import warnings

import numpy as np
import pytest

import tracer as tt
from tracer import autograph

BACKENDS = ["interpreter", "c"]


def collatz(n):
    steps = 0
    while n > 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps = steps + 1
    return steps


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_while_and_an_if_on_tensors_become_one_loop(backend):
    f = tt.function(collatz, backend=backend)
    for n in (1, 6, 27, 97):
        assert f(tt.constant(n)).numpy() == collatz(n)
    assert f.experimental_get_tracing_count() == 1  # one trace serves every n
    source = f.get_concrete_function(tt.constant(6)).ir("traced")
    assert "while[" in source and "cond[" in source


def absolute_sum(x):
    if tt.reduce_sum(x) > 0:
        return tt.reduce_sum(x * x)
    return -tt.reduce_sum(tt.sin(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_if_that_returns_in_both_ways(backend):
    f = tt.function(absolute_sum, backend=backend)
    for values in ([1.0, 2.0], [-1.0, 0.5]):
        x = tt.constant(values, tt.float64)
        np.testing.assert_allclose(f(x).numpy(), absolute_sum(x).numpy())
    assert f.experimental_get_tracing_count() == 1


def euler(x, theta, n):
    for _ in tt.range(n):
        x = x + 0.05 * (tt.sin(theta * x) - 0.5 * x * x * x)
    return tt.reduce_sum(x * x)


def test_for_over_tt_range_of_a_python_int_is_one_compiled_loop_with_gradients():
    x, theta = tt.constant(np.linspace(-1, 1, 6)), tt.constant(np.linspace(0.5, 1.5, 6))

    def value_and_grad(x, theta):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = euler(x, theta, 200)
        return y, tape.gradient(y, x)

    want_y = euler(x, theta, 200).numpy()  # eagerly: Python's loop
    v, eps = np.linspace(1, 2, 6), 1e-6
    numeric = (euler(x + eps * v, theta, 200).numpy() - euler(x - eps * v, theta, 200).numpy()) / (
        2 * eps
    )
    for backend in BACKENDS:
        f = tt.function(value_and_grad, backend=backend)
        y, g = f(x, theta)
        np.testing.assert_allclose(y.numpy(), want_y, rtol=1e-12)
        np.testing.assert_allclose(np.dot(g.numpy(), v), numeric, rtol=1e-6, atol=1e-9)
    source = tt.function(value_and_grad, backend="c").get_concrete_function(x, theta).c_source()
    assert source.count("k_sin") < 10 and "for (" in source  # a loop, not 200 copies


def test_for_over_tt_range_of_a_tensor():
    def squares(n):
        total = 0
        for i in tt.range(n):
            total = total + i * i
        return total

    f = tt.function(squares)
    for n in (0, 1, 5, 9):
        assert f(tt.constant(n)).numpy() == sum(i * i for i in range(n))
    assert f.experimental_get_tracing_count() == 1


def test_for_over_the_rows_of_a_tensor():
    def column_sums(m):
        total = tt.zeros(3, tt.float64)
        for row in m:
            total = total + row
        return total

    m = tt.constant(np.arange(12.0).reshape(4, 3))
    np.testing.assert_array_equal(tt.function(column_sums)(m).numpy(), m.numpy().sum(axis=0))


def test_python_conditions_stay_python():
    traced = []

    def f(x, flag):
        if flag:
            traced.append("true")
            y = x + 1
        else:
            traced.append("false")
            y = x - 1
        for k in range(3):  # a Python range: unrolled
            y = y * 2
        return y

    g = tt.function(f)
    assert g(tt.constant(1.0), True).numpy() == 16.0 and traced == ["true"]
    assert g(tt.constant(1.0), False).numpy() == 0.0 and traced == ["true", "false"]


def test_gradient_through_a_converted_if():
    def f(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            if x > 0.0:
                y = x * x * x
            else:
                y = tt.sin(x)
        return tape.gradient(y, x)

    for backend in BACKENDS:
        g = tt.function(f, backend=backend)
        assert g(tt.constant(2.0, tt.float64)).numpy() == 12.0
        assert g(tt.constant(-1.0, tt.float64)).numpy() == np.cos(-1.0)


def test_autograph_false_leaves_python_control_flow():
    f = tt.function(absolute_sum, autograph=False)
    with pytest.raises(TypeError, match="symbolic"):
        f(tt.constant([1.0]))


def count_until(n):
    i = 0
    while True:
        i = i + 1
        if i >= n:
            break
    return i


def first_above(xs, limit):
    found = -1
    for i in tt.range(tt.size(xs)):
        if xs[i] > limit:
            found = i
            break
    return found


def sum_even(items):
    s = 0
    for c in items:
        if c % 2 > 0:
            continue
        s += c
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_break_and_continue_in_tensor_loops(backend):
    assert tt.function(count_until, backend=backend)(tt.constant(7)).numpy() == 7
    assert int(tt.function(count_until)(3)) == 3  # a Python bound: Python's loop
    find = tt.function(first_above, backend=backend)
    assert find(tt.constant([1.0, 5.0, 7.0]), tt.constant(4.0)).numpy() == 1
    assert find(tt.constant([1.0, 2.0]), tt.constant(4.0)).numpy() == -1
    items = [10, 12, 15, 20, 7]
    assert tt.function(sum_even, backend=backend)(tt.constant(items)).numpy() == sum_even(items)


def test_boolean_operators_on_tensors():
    def f(n, limit):
        i, s = 0, 0.0
        while i < n and s < limit:
            s = s + 1.5
            i = i + 1
        if not i > 2 or s > 100.0:
            s = -s
        return i, s

    g = tt.function(f)
    for n, limit in ((10, 5.0), (2, 5.0)):
        want = f(n, limit)
        got = g(tt.constant(n), tt.constant(limit))
        assert (got[0].numpy(), got[1].numpy()) == want


def test_return_inside_a_tensor_loop_returns_as_python():
    def f(n):
        i = 0
        while i < n:
            if i > 3:
                return i
            i = i + 1
        return i

    assert int(tt.function(f)(tt.constant(10))) == 4
    assert int(tt.function(f)(7)) == 4  # a Python bound: Python's loop, with its return


def test_a_variable_bound_in_one_branch_only_is_named():
    def f(x):
        if x > 0:
            y = x
        return y

    # TensorFlow 2.21: ValueError: 'y' must also be initialized in the else branch
    with pytest.raises(
        ValueError, match=r"'y' is not defined on every path .* at test_autograph.py:\d+"
    ):
        tt.function(f)(tt.constant(1.0))


def test_a_name_bound_in_one_branch_only_and_not_used_after_is_no_error():
    """A temporary of one branch (TensorFlow's autograph carries only the names used after
    the `if`): the function runs, eagerly and compiled, with the values of numpy."""

    def f(x):
        if tt.reduce_sum(x) > 0.0:
            t = tt.sin(x)
            x = t * 2.0
        return x

    for value in ([0.5, 1.0], [-0.5, -1.0]):
        x = np.array(value)
        want = 2.0 * np.sin(x) if x.sum() > 0 else x
        for backend in ("interpreter", "c"):
            got = tt.function(f, backend=backend)(tt.constant(x)).numpy()
            np.testing.assert_allclose(got, want, rtol=1e-15)


def test_a_long_unrolled_python_loop_warns(caplog):
    def f(x):
        for k in range(600):
            x = tt.sin(x) * 1.01 + x * 0.5
        return x

    with caplog.at_level(logging.WARNING, logger="tracer.autograph"):
        tt.function(f)(tt.ones(3))
    assert any("unrolled" in r.message and "tt.range" in r.message for r in caplog.records)
    assert any("test_autograph.py" in r.getMessage() for r in caplog.records)


def test_a_long_python_loop_over_objects_does_not_warn(caplog):
    """A loop over models and optimizers (a CycleGAN's four) has nothing to iterate as a
    tensor: however many nodes it unrolls into, the advice to iterate over tt.range would
    not apply, and TensorFlow says nothing. A loop over a range inside it still warns."""
    parts = [{"scale": tt.constant(0.5)}, {"scale": tt.constant(0.25)}]

    def f(x):
        for part in parts:
            for _ in range(600):
                x = tt.tanh(x * part["scale"] + 0.1) * 0.9
        return x

    with caplog.at_level(logging.WARNING, logger="tracer.autograph"):
        tt.function(f)(tt.ones(3))
    warned = [r.getMessage() for r in caplog.records if "unrolled" in r.getMessage()]
    assert len(warned) == 1 and "600 iterations" in warned[0]  # the loop over range(600)


def test_to_code_shows_the_converted_source():
    code = tt.autograph.to_code(collatz)
    assert "ag__.while_stmt" in code and "ag__.if_stmt" in code


def test_methods_and_closures_are_converted():
    scale = tt.constant(3.0)

    class Model:
        def __init__(self):
            self.bias = tt.constant(1.0)

        @tt.function
        def __call__(self, x):
            if tt.reduce_sum(x) > 0:
                x = x * scale + self.bias
            return x

    model = Model()
    np.testing.assert_array_equal(model(tt.constant([1.0, 2.0])).numpy(), [4.0, 7.0])
    np.testing.assert_array_equal(model(tt.constant([-1.0, -2.0])).numpy(), [-1.0, -2.0])


class _Scaler:
    def __init__(self, factor):
        self.__factor = factor

    def scaled(self, x):
        if tt.reduce_sum(x) > 0:
            x = x * self.__factor
        return x


class _Tripled:
    def scaled(self, x):
        return x * 3.0


class _Doubled(_Tripled):
    def scaled(self, x):
        if tt.reduce_sum(x) > 0:
            x = super().scaled(x) * 2.0
        return x


@pytest.mark.parametrize(
    "method, factor",
    [(_Scaler(3.0).scaled, 3.0), (_Doubled().scaled, 6.0)],
    ids=["private attribute", "super()"],
)
def test_methods_keep_their_private_names_and_super(method, factor):
    """`self.__factor` in a method is `self._Scaler__factor`: the converted code is compiled
    inside a class of the same name. A converted `if` on a tensor runs its branches as
    functions of their own, where `super()` alone would take the branch's first argument for
    the instance: autograph names the class and the instance. (`factor`: where x > 0.)"""
    for values, scale in (([1.0, 2.0], factor), ([-1.0, -2.0], 1.0)):
        x = tt.constant(values)
        np.testing.assert_allclose(autograph.convert(method)(x).numpy(), scale * x.numpy())
        for backend in BACKENDS:
            got = tt.function(method, backend=backend)(x).numpy()
            np.testing.assert_allclose(got, scale * np.array(values, np.float32))


def test_a_converted_function_is_not_converted_again():
    """tt.function of tt.autograph.convert(f) (or convert twice) runs f's converted code once
    converted, eagerly and compiled."""
    converted = tt.autograph.convert(absolute_sum)
    assert tt.autograph.convert(converted) is converted
    for values in ([1.0, 2.0], [-1.0, 0.5]):
        x = tt.constant(values, tt.float64)
        want = absolute_sum(x).numpy()
        np.testing.assert_allclose(converted(x).numpy(), want)
        for backend in BACKENDS:
            np.testing.assert_allclose(tt.function(converted, backend=backend)(x).numpy(), want)


@pytest.mark.parametrize(
    "edit",
    ['"""an unterminated string\n', "def another(x, flag):\n    if flag:\n        return x\n", ""],
    ids=["unterminated", "another function", "emptied"],
)
def test_a_function_whose_file_was_edited_since_import_runs_unconverted(tmp_path, edit):
    import importlib.util
    import linecache

    path = tmp_path / "edited_module.py"
    path.write_text("def step(x, flag):\n    if flag:\n        return x * 2.0\n    return -x\n")
    spec = importlib.util.spec_from_file_location("edited_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path.write_text(edit)  # the function's line no longer holds it
    linecache.checkcache(str(path))
    f = tt.function(module.step)
    assert f(tt.constant(3.0), True).numpy() == 6.0  # its own code, not the file's new text


def _ends_in_no_ops(x):
    if tt.reduce_sum(x) > 0:
        y = x * 2.0
    else:
        y = -x
        pass
    return y
    """a string statement after the return: no instruction comes from it"""


def _ends_in_an_else_that_only_passes(x, log=None):
    y = x
    for _ in range(2):
        y = y * 2.0
    if log is not None:
        log.append(y)
    else:
        pass


def _ends_in_a_nested_function_and_a_long_expression(x):
    def twice(v):
        return v * 2.0

    if tt.reduce_sum(x) > 0:
        x = twice(x)
    return tt.stack(
        [
            x,
            -x,
        ]
    )


def _returns_before_a_yield(n):
    for _ in range(n):
        n = n * 2
    return n
    yield  # unreachable, yet it makes the function a generator


scale = 3.0


def _annotates_after_returning(x):
    if x > 0:
        return x * scale  # noqa: F823 (this function's own unbound name, not the module's)
    return -x
    scale: float  # noqa: F842 (no instruction, yet it makes `scale` a local name)


def _no_ops_removed(node):
    """`node` without the `pass` and string statements that end its blocks."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)  # a lambda's body is an expression
        while (
            isinstance(block, list)
            and block
            and (
                isinstance(block[-1], ast.Pass)
                or isinstance(block[-1], ast.Expr)
                and isinstance(block[-1].value, ast.Constant)
            )
        ):
            block.pop()
    for child in ast.iter_child_nodes(node):
        _no_ops_removed(child)
    return node


@pytest.mark.parametrize(
    "function",
    [
        _ends_in_no_ops,
        _ends_in_an_else_that_only_passes,
        _ends_in_a_nested_function_and_a_long_expression,
        collatz,
    ],
)
def test_the_source_read_from_instruction_positions_is_the_whole_function(function):
    """Autograph ends a function at the last line its code comes from: the statements that
    tokenizing its lines finds (inspect), less the `pass` and strings that end a block."""
    text, first = autograph._source(function.__code__)
    assert first == function.__code__.co_firstlineno
    tokenized = textwrap.dedent(inspect.getsource(function))
    got, want = (_no_ops_removed(ast.parse(t)) for t in (text, tokenized))
    assert ast.dump(got) == ast.dump(want)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="instruction positions: Python 3.11")
def test_a_function_read_to_its_last_instruction_is_not_tokenized(monkeypatch):
    """Where the lines after the last instruction hold nothing that changes the function,
    its text is read without tokenizing (inspect.getblock); where they make it another
    function (a generator, another local name), it is tokenized."""

    def tokenized(lines):
        tokenized.calls += 1
        return getblock(lines)

    others = (_returns_before_a_yield, _annotates_after_returning)
    whole = {f: textwrap.dedent(inspect.getsource(f)) for f in others}
    getblock, tokenized.calls = inspect.getblock, 0
    monkeypatch.setattr(inspect, "getblock", tokenized)
    autograph._source.cache_clear()
    for function in (
        _ends_in_no_ops,
        _ends_in_a_nested_function_and_a_long_expression,
        _ends_in_an_else_that_only_passes,
    ):
        assert autograph._source(function.__code__) is not None
    assert tokenized.calls == 0
    for function in others:
        assert autograph._source(function.__code__)[0] == whole[function]
    assert tokenized.calls == 2
    assert list(autograph.convert(_returns_before_a_yield)(3)) == []
    assert autograph.convert(_annotates_after_returning)(-2.0) == 2.0
    with pytest.raises(UnboundLocalError):
        autograph.convert(_annotates_after_returning)(2.0)


def test_functions_ending_in_no_ops_convert_and_run():
    for values in ([1.0, 2.0], [-1.0, -3.0]):
        x, scale = tt.constant(values), 2.0 if sum(values) > 0 else -1.0
        for backend in BACKENDS:
            got = tt.function(_ends_in_no_ops, backend=backend)(x)
            np.testing.assert_allclose(got.numpy(), scale * np.array(values))
            stacked = tt.function(_ends_in_a_nested_function_and_a_long_expression, backend=backend)
            doubled = np.array(values) * max(scale, 1.0)
            np.testing.assert_allclose(stacked(x).numpy(), [doubled, -doubled])
        log = []
        assert autograph.convert(_ends_in_an_else_that_only_passes)(x, log) is None
        np.testing.assert_allclose(log[0].numpy(), 4.0 * np.array(values))


def test_every_function_of_tracer_is_found_whole():
    """Over every function and method in the library's files (compiled here, not imported:
    importing tracer.distribute would register its ops for the tests after): the source
    autograph reads is the one tokenizing finds, less trailing `pass` and strings."""
    import pathlib

    def functions(code):
        for inner in code.co_consts:
            if isinstance(inner, types.CodeType):
                if inner.co_flags & inspect.CO_NEWLOCALS and not inner.co_name.startswith("<"):
                    yield inner
                yield from functions(inner)

    codes = set()
    for path in pathlib.Path(tt.__file__).parent.rglob("*.py"):
        codes.update(functions(compile(path.read_text(), str(path), "exec")))
    assert len(codes) > 500
    for code in codes:
        text, _ = autograph._source(code)
        lines = linecache.getlines(code.co_filename)[code.co_firstlineno - 1 :]
        tokenized = textwrap.dedent("".join(inspect.getblock(lines)))
        if text != tokenized:  # (the same text nearly always: parsing both is most of the time)
            got, want = (_no_ops_removed(ast.parse(t)) for t in (text, tokenized))
            assert ast.dump(got) == ast.dump(want), f"{code.co_filename}:{code.co_firstlineno}"


def test_a_conditional_expression_on_a_tensor_is_a_cond_with_its_gradient():
    """TensorFlow's autograph converts `a if c else b` with a tensor `c` to tf.cond; tracer
    did not, and the branch's tensor escaped the trace (a confusing "out of scope")."""

    @tt.function
    def clipped_square(x, limit):
        y = x * x if x < limit else limit * x
        return y + (1.0 if limit > 0 else -1.0)  # a Python condition stays Python's

    for x, want, slope in [(1.5, 1.5**2 + 1.0, 3.0), (3.0, 2.0 * 3.0 + 1.0, 2.0)]:
        value = tt.constant(x)
        with tt.GradientTape() as tape:
            tape.watch(value)
            got = clipped_square(value, 2.0)
        assert got.numpy() == pytest.approx(want)
        assert tape.gradient(got, value).numpy() == pytest.approx(slope)
    assert clipped_square.experimental_get_tracing_count() == 1

    @tt.function
    def inside(x):  # no statement to convert: the `and` alone is rewritten
        return tt.cast(x > 0.0 and not x > 1.0, tt.float32)

    assert [float(inside(tt.constant(v))) for v in (-1.0, 0.5, 2.0)] == [0.0, 1.0, 0.0]


def test_a_for_over_a_range_of_tensors_counts_down_as_pythons_range():
    """tt.range with a negative delta, its bounds known only when the function runs, counts
    down (it ran no iteration: the loop always asked i < limit); a delta known only then
    takes its sign then, and one of 0 ends the loop where it would never end."""

    @tt.function
    def digits_reversed(x):
        total = tt.constant(0.0)
        for i in tt.range(tt.shape(x)[0] - 1, -1, -1):
            total = total * 10.0 + tt.gather(x, i)
        return total

    for n in (2, 3, 4):
        x = np.arange(1, n + 1, dtype=np.float32)
        assert digits_reversed(x).numpy() == float("".join(str(int(v)) for v in x[::-1]))

    @tt.function
    def count(n, delta):
        c = tt.constant(0)
        for _ in tt.range(0, n, delta):
            c += 1
        return c

    for n, delta in ((5, 1), (5, 2), (-5, -1), (-7, -3), (5, -1), (0, 3)):
        assert count(tt.constant(n), tt.constant(delta)).numpy() == len(range(0, n, delta))
    assert count(tt.constant(5), tt.constant(0)).numpy() == 0

    @tt.function
    def never_moves(n):
        c = tt.constant(0)
        for _ in tt.range(0, n, 0):
            c += 1
        return c

    with pytest.raises(ValueError, match="delta must not be 0"):
        never_moves(tt.constant(3))


def test_functions_a_traced_function_calls_are_converted_too():
    """TensorFlow's autograph converts the user's functions a converted one calls (the
    translation tutorial's dynamic decoder is such a helper); tracer's, installed packages'
    and builtins are called as they are (TensorFlow 2.21 prints 10 and 10, [10 20] and
    [-7 -14])."""

    def count_up(limit):
        total = tt.constant(0)
        for t in tt.range(10):
            total += t
            if total > limit:
                break
        return total

    @tt.function(input_signature=[tt.TensorSpec([], tt.int32)])
    def outer(limit):
        return count_up(limit)

    assert int(count_up(tt.constant(7))) == int(outer(tt.constant(7))) == 10

    def grown(x):
        y = x
        while tt.reduce_max(tt.abs(y)) < 10.0:
            y = y * 2
        return y

    class Model:
        def step(self, x):
            if tt.reduce_sum(x) > 0:
                return x * 2
            return -x

        @tt.function
        def __call__(self, x):
            return self.step(x) + grown(x)

    assert Model()(tt.constant([1.0, 2.0])).numpy().tolist() == [10.0, 20.0]
    assert Model()(tt.constant([-1.0, -2.0])).numpy().tolist() == [-7.0, -14.0]


def batched_sums(x, batch_size=4):
    """The integrated-gradients tutorial's loop: batches sliced at the loop's values."""
    parts = tt.TensorArray(tt.float32, size=len(x))
    for start in tt.range(0, len(x), batch_size):
        stop = tt.minimum(start + batch_size, len(x))
        batch = x[start:stop]
        parts = parts.scatter(tt.range(start, stop), tt.cumsum(batch))
    return parts.stack()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_over_known_rows_whose_body_slices_at_them_is_unrolled(backend, caplog):
    """TensorFlow's loop there holds batches of sizes unknown until it runs (4, 4, 2); tracer's
    compiled code cannot, so the loop over a tt.range of numbers runs as Python, one trace of
    the body per row, with a log line saying so; values and gradients as numpy's."""
    x = np.arange(1.0, 11.0, dtype=np.float32)
    want = np.concatenate([np.cumsum(x[k : k + 4]) for k in range(0, 10, 4)])
    compiled = tt.function(batched_sums, backend=backend)
    with caplog.at_level(logging.INFO, logger="tracer.autograph"):
        np.testing.assert_allclose(compiled(tt.constant(x)).numpy(), want)
    assert "unrolled, one trace of the body per row" in caplog.text

    @tt.function(backend=backend)
    def grad(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(batched_sums(x))
        return tape.gradient(y, x)

    np.testing.assert_allclose(grad(tt.constant(x)).numpy(), [4, 3, 2, 1, 4, 3, 2, 1, 2, 1])


def _warns_once():
    warnings.warn("shown once per place", UserWarning, stacklevel=1)


def test_converting_a_function_does_not_make_python_forget_the_warnings_it_showed():
    """Python shows a "default" warning once per place; a conversion must not reset that (as
    `warnings.catch_warnings` does), or a program's warnings repeat after each tt.function,
    where TensorFlow 2.21 shows them once."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        for step in range(3):
            _warns_once()

            @tt.function
            def add(x):
                return x + step

            add(tt.constant(1.0))
    assert [str(w.message) for w in caught] == ["shown once per place"]


def test_a_range_of_bounds_known_when_running_used_as_a_tensor_runs_as_python():
    """DeepDream's tiles, `tf.range(0, size[1], tile)[:-1]`: its length is known only when
    the function runs, so the function runs as Python, with numpy's values."""

    @tt.function
    def starts(size, tile):
        xs = tt.range(0, size[1], tile)[:-1]
        if not tt.cast(len(xs), tt.bool):
            xs = tt.constant([0])
        return tt.reduce_sum(xs) + 100 * tt.size(xs)

    assert int(starts(tt.constant([5, 70]), tt.constant(24))) == 0 + 24 + 200
    assert int(starts(tt.constant([5, 20]), tt.constant(24))) == 0 + 100
    assert starts._runs_as_python


# --- tt.autograph.experimental ---------------------------------------------------------------


def _bounded_loops():
    def from_zeros(x):  # the condition's first value is known while tracing
        total = tt.zeros([])
        while total < 100.0:
            tt.autograph.experimental.set_loop_options(maximum_iterations=3)
            total = total + x
        return total

    def over_range(n):
        s = tt.constant(0)
        for i in tt.range(n):
            tt.autograph.experimental.set_loop_options(maximum_iterations=4, parallel_iterations=1)
            s += i
        return s

    def over_rows(x):
        s = tt.zeros([2])
        for row in x:
            tt.autograph.experimental.set_loop_options(maximum_iterations=tt.constant(2))
            s += row
        return s

    def python_condition(x):
        i = 0
        while i < 5:
            tt.autograph.experimental.set_loop_options(maximum_iterations=2)
            x = x + 1.0
            i += 1
        return x

    return [
        (from_zeros, tt.constant(2.0), 6.0),
        (over_range, tt.constant(10), 0 + 1 + 2 + 3),
        (over_rows, tt.ones([5, 2]), [2.0, 2.0]),
        (python_condition, tt.constant(0.0), 5.0),
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_set_loop_options_bounds_the_converted_loop_whose_body_calls_it(backend):
    """TensorFlow 2.21 printed 6.0, 6, [2. 2.] and 5.0 for these functions under tf.function:
    `maximum_iterations` bounds a loop on a tensor condition (counting the iterations tracer
    ran as Python while the condition's value was known), a tt.range loop and a loop over rows
    (a tensor bound too); a loop on a Python condition is Python's, and the options leave it
    alone, as they do eagerly."""
    for function, argument, expected in _bounded_loops():
        compiled = tt.function(function, backend=backend)
        np.testing.assert_array_equal(compiled(argument).numpy(), expected)
    unbounded = {"from_zeros": 100.0, "over_range": 45, "over_rows": [5.0, 5.0]}
    for function, argument, expected in _bounded_loops():  # eagerly: a no-op
        want = unbounded.get(function.__name__, expected)
        np.testing.assert_array_equal(tt.convert_to_tensor(function(argument)).numpy(), want)


def test_do_not_convert_leaves_a_function_as_written():
    """TensorFlow 2.21: a do_not_convert function's `if` on a tensor inside tf.function raises
    OperatorNotAllowedInGraphError, and runs eagerly; one without control flow on tensors
    runs in the graph. Both forms of the decorator."""

    @tt.autograph.experimental.do_not_convert
    def magnitude(x):
        if x > 0:
            return x
        return -x

    @tt.autograph.experimental.do_not_convert()
    def doubled(x):
        return x * 2.0

    assert magnitude.__name__ == "magnitude"
    assert float(magnitude(tt.constant(-3.0))) == 3.0
    with pytest.raises(tt.errors.OperatorNotAllowedInGraphError):
        tt.function(lambda x: magnitude(x))(tt.constant(2.0))
    assert float(tt.function(lambda x: doubled(x) + 1.0)(tt.constant(2.0))) == 5.0


def test_a_loop_that_grows_a_tensor_runs_as_python_where_its_shape_invariants_allow(caplog):
    """TF 2.21 grows a loop variable whose `set_loop_options` shape invariants allow it
    (here [[0, 0], [1, 1], [2, 2], [3, 3]]); a compiled loop's variables keep their shapes,
    so the function runs as Python, with a log line that says how to keep it compiled
    (tracer raised). Without shape invariants it is TensorFlow's error."""

    @tt.function
    def grow(n):
        ys = tt.zeros([1, 2])
        for _ in tt.range(n):
            tt.autograph.experimental.set_loop_options(
                shape_invariants=[(ys, tt.TensorShape([None, 2]))]
            )
            ys = tt.concat([ys, ys[-1:] + 1.0], 0)
        return ys

    with caplog.at_level("WARNING", logger="tracer.function"):
        np.testing.assert_array_equal(
            grow(tt.constant(3)).numpy(), [[0, 0], [1, 1], [2, 2], [3, 3]]
        )
    assert "as its shape_invariants allow" in caplog.text and "tt.TensorArray" in caplog.text

    @tt.function
    def grow_unannounced(n):
        ys = tt.zeros([1, 2])
        for _ in tt.range(n):
            ys = tt.concat([ys, ys[-1:] + 1.0], 0)
        return ys

    with pytest.raises(ValueError, match=r"keep their shapes.*tt\.TensorArray"):
        grow_unannounced(tt.constant(3))


def _doubled_when_large(x):
    if tt.reduce_max(x) > 0.5:
        return x * 2.0
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_functions_called_from_lambdas_branches_and_mapped_functions_are_converted(backend):
    """TensorFlow 2.21 converts what a tf.function of a lambda calls, and the functions
    converted code gives tf.cond, tf.map_fn and the other structured ops (an `if` on a tensor
    in any of them compiles); tracer raised OperatorNotAllowedInGraphError for each. Several
    lambdas of the same parameters on one line are told apart by their positions."""
    x = tt.constant([0.3, 0.9])
    doubled = [0.6, 1.8]

    def branch(x):
        def true_fn():
            return _doubled_when_large(x)

        return tt.cond(tt.reduce_sum(x) > 0, true_fn, lambda: x)

    calls = [
        (tt.function(lambda x: _doubled_when_large(x), backend=backend), doubled),
        (tt.function(branch, backend=backend), doubled),
        (
            tt.function(
                lambda x: tt.cond(tt.reduce_sum(x) > 0, lambda: _doubled_when_large(x), lambda: x),
                backend=backend,
            ),
            doubled,
        ),
        (
            tt.function(lambda x: tt.map_fn(lambda r: _doubled_when_large(r), tt.stack([x, -x]))),
            [doubled, [-0.3, -0.9]],
        ),
        (
            tt.function(
                lambda x: tt.while_loop(lambda x: x < 5.0, lambda x: x * 2.0, x), backend=backend
            ),
            8.0,
        ),
    ]
    for function, expected in calls[:-1]:
        np.testing.assert_allclose(function(x).numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(calls[-1][0](tt.constant(1.0)).numpy(), calls[-1][1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lambda_whose_body_goes_on_past_its_first_line_runs_whole(backend):
    """A lambda opening its own line inside brackets, its body on the next (TensorFlow 2.21:
    [0, 4] and [1, -4]): the lines read for it held its first line alone, and the converted
    lambda dropped the rest of its body ([1, 2] both). Now it runs as written."""
    x = tt.constant([1.0, -2.0])
    # fmt: off
    minus = tt.function(
        lambda x: tt.abs(x)
        - x,
        backend=backend,
    )
    times = tt.function(
        lambda x: tt.abs(x)
        * x,
        backend=backend,
    )
    # fmt: on
    np.testing.assert_array_equal(minus(x).numpy(), [0.0, 4.0])
    np.testing.assert_array_equal(times(x).numpy(), [1.0, -4.0])
