"""tt.string values through compiled modules (codegen/string_handles.py): each string
element is a handle in C, the ops that compute on strings run in Python, the numbers beside
them in C; values and gradients as the eager ops give them."""

import io
import threading

import numpy as np
import pytest

import tracer as tt
from codegen.string_handles import NUMBERS_WORTH_COMPILING as STRING_GRAPHS_COMPILED_FROM
from runtime.string_table import StringLayout, StringTable

S = tt.strings


def _c_function(python_function, *args, **options):
    compiled = tt.function(python_function, **options)
    results = compiled(*args)
    concrete = compiled.get_concrete_function(*args)
    assert concrete.backend == "c"
    return results, concrete


def _same(compiled, eager):
    for c, e in zip(tt.nest.flatten(compiled), tt.nest.flatten(eager)):
        assert c.dtype == e.dtype and c.shape == e.shape
        if c.dtype == tt.string:
            assert np.asarray(c.numpy()).tolist() == np.asarray(e.numpy()).tolist()
        else:
            np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-14)  # C's sin: 1 ulp


def test_strings_are_compiled_where_their_numbers_are_worth_it():
    def scaled(words, x):
        return S.upper(words), tt.reduce_sum(tt.cast(S.length(words), tt.float32)) * x

    def backend(x):
        return tt.function(scaled).get_concrete_function(tt.constant(["a", "bc"]), x).backend

    # a few numbers: each string step handed back to Python would cost more than C saves
    assert backend(tt.constant([1.0, 2.0])) == "interpreter"
    assert backend(tt.zeros([STRING_GRAPHS_COMPILED_FROM])) == "c"  # many numbers
    assert backend(tt.TensorSpec([None], tt.float32)) == "c"  # maybe many: known when run

    def looped(words, x):  # a loop of numbers
        _, y = tt.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tt.sin(y)), (0, x))
        return S.upper(words), y

    looping = tt.function(looped)
    words, x = tt.constant(["a"]), tt.constant([0.5])
    assert looping.get_concrete_function(words, x).backend == "c"
    np.testing.assert_allclose(looping(words, x)[1].numpy(), np.sin(np.sin(np.sin(0.5))), 1e-6)


def test_numbers_beside_strings_are_compiled_with_their_gradient():
    def weighted(x, words):
        with tt.GradientTape() as tape:
            tape.watch(x)
            lengths = tt.cast(S.length(words), tt.float64)
            loss = tt.reduce_sum(lengths * tt.sin(x) * x)
        label = S.join([S.upper(words), S.as_string(lengths, precision=1)], separator=":")
        return loss, tape.gradient(loss, x), label

    x = tt.constant([0.5, -1.25, 2.0], tt.float64)
    words = tt.constant(["a", "bcd", "ef"])
    (loss, grad, label), concrete = _c_function(weighted, x, words, backend="c")
    lengths = np.array([1.0, 3.0, 2.0])
    xs = x.numpy()
    np.testing.assert_allclose(loss.numpy(), np.sum(lengths * np.sin(xs) * xs), rtol=1e-14)
    np.testing.assert_allclose(grad.numpy(), lengths * (np.sin(xs) + xs * np.cos(xs)), rtol=1e-14)
    assert label.numpy().tolist() == [b"A:1.0", b"BCD:3.0", b"EF:2.0"]
    source = concrete.c_source()
    assert "TR_HOST" in source  # the string ops call Python back, each named in its comment
    assert "string_upper (in Python)" in source and "as_string (in Python)" in source
    _same((loss, grad, label), weighted(x, words))


def test_moving_strings_is_compiled_code_that_calls_no_python():
    def moved(words, flags, x):
        grid = tt.reshape(words, [2, 3])
        picked = tt.where(flags, grid, tt.reverse(grid, [1]))
        rows = tt.concat([tt.transpose(picked), tt.tile(grid[:, :1], [1, 2])[:, ::-1]], 0)
        gathered = tt.gather(tt.reshape(rows, [-1]), [5, 0, 2])
        spread = tt.broadcast_to(gathered[1:2], [2, 2])
        return rows, gathered, spread, tt.reduce_sum(x * x)

    words = tt.constant(["a", "b", "c", "d", "e", "f"])
    flags = tt.constant([[True, False, True], [False, False, True]])
    x = tt.constant([1.0, 2.0])
    results, concrete = _c_function(moved, words, flags, x, backend="c")
    assert "TR_HOST" not in concrete.c_source()  # handles move in C like int64s
    _same(results, moved(words, flags, x))
    assert results[1].numpy().tolist() == [b"f", b"a", b"b"]


def test_a_loop_that_makes_strings_and_numbers_each_step():
    def loop(start, n, x):
        def body(i, text, total):
            step = S.join([text, S.as_string(i)], separator=",")
            return i + 1, step, total + tt.cast(S.length(step), tt.float32) * x

        return tt.while_loop(lambda i, text, total: i < n, body, (0, start, tt.zeros_like(x)))

    args = (tt.constant("s"), tt.constant(4), tt.constant([1.0, 0.5]))
    (count, text, total), _ = _c_function(loop, *args, backend="c")
    assert count.numpy() == 4 and text.numpy() == b"s,0,1,2,3"
    np.testing.assert_array_equal(total.numpy(), (3 + 5 + 7 + 9) * np.array([1.0, 0.5]))
    _same((count, text, total), loop(*args))


def test_branches_choose_strings_in_compiled_code():
    def labelled(x):
        label = tt.cond(tt.reduce_sum(x) > 0, lambda: tt.constant("pos"), lambda: S.lower("NEG"))
        return label, S.length(label) * 2

    compiled = tt.function(labelled, backend="c")
    for values, expected in (([1.0, 2.0], b"pos"), ([-3.0, 1.0], b"neg")):
        label, twice = compiled(tt.constant(values))
        assert label.numpy() == expected and twice.numpy() == 6
    assert compiled.get_concrete_function(tt.constant([1.0, 2.0])).backend == "c"


def test_strings_of_a_size_known_at_run_time_share_one_module():
    traces = []

    @tt.function(input_signature=[tt.TensorSpec([None], tt.string)], backend="c")
    def sized(words):
        traces.append(1)
        return tt.reverse(S.upper(words), [0]), tt.reduce_sum(S.length(words)) + 1

    for words in (["ab", "c", "def"], ["x"], []):
        flipped, total = sized(tt.constant(words, tt.string))
        assert flipped.numpy().tolist() == [w.upper().encode() for w in reversed(words)]
        assert total.numpy() == sum(map(len, words)) + 1
    assert len(traces) == 1 and sized.get_concrete_function().backend == "c"


def test_print_of_strings_from_compiled_code_is_the_eager_print():
    def shown(stream, words, x):
        tt.print("words:", words, "x =", x * 2, output_stream=stream)
        return x + 1

    eager, compiled = io.StringIO(), io.StringIO()
    words, x = tt.constant(["a", 'b"c']), tt.constant([1.5, 2.0])
    shown(eager, words, x)
    _c_function(lambda w, v: shown(compiled, w, v), words, x, backend="c")
    assert compiled.getvalue() == eager.getvalue() == 'words: ["a" "b\\"c"] x = [3 4]\n'


def test_py_function_given_strings_from_compiled_code():
    def counted(words):
        return tt.constant([len(w) for w in words.numpy()], tt.int32)

    def f(words, x):
        return tt.py_function(counted, [S.strip(words)], tt.int32) * tt.cast(x, tt.int32)

    result, _ = _c_function(f, tt.constant([" ab ", "c"]), tt.constant(3.0), backend="c")
    assert result.numpy().tolist() == [6, 3]


def test_a_string_variable_updated_by_a_compiled_step():
    log = tt.Variable(tt.constant("start"))
    count = tt.Variable(0.0)

    @tt.function(backend="c")
    def step(word):
        count.assign_add(1.0)
        log.assign(S.join([log, word], separator="+"))
        return count * 2.0

    assert step(tt.constant("a")).numpy() == 2.0 and step(tt.constant("b")).numpy() == 4.0
    assert (
        log.numpy() == b"start+a+b" and step.get_concrete_function(tt.constant("c")).backend == "c"
    )


def test_calls_on_threads_keep_their_own_strings():
    @tt.function(backend="c")
    def tagged(word, x):
        return S.join([word, S.as_string(x)], separator="="), x * 2

    tagged(tt.constant("w"), tt.constant(0))
    errors, results = [], {}

    def run(k):
        try:
            for _ in range(50):
                text, twice = tagged(tt.constant(f"t{k}"), tt.constant(k))
                results.setdefault(k, set()).add((text.numpy(), int(twice.numpy())))
        except Exception as error:  # reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert results == {k: {(f"t{k}={k}".encode(), 2 * k)} for k in range(4)}


def test_a_compiled_call_inside_a_compiled_calls_string_step():
    inner = tt.function(lambda w, n: (S.upper(w), n + 1), backend="c")

    def outer_python(words):
        upper, _ = inner(words, tt.constant(1))
        return tt.constant([w.decode() + "!" for w in upper.numpy()])

    def outer(words, x):
        return tt.py_function(outer_python, [S.strip(words)], tt.string), x * 3

    (marked, tripled), _ = _c_function(
        outer, tt.constant([" a", "b "]), tt.constant(2.0), backend="c"
    )
    assert marked.numpy().tolist() == [b"A!", b"B!"] and tripled.numpy() == 6.0


def test_the_table_refuses_a_handle_it_did_not_give():
    table = StringTable([b"k"])
    handles = table.handles(np.array([[b"x", b"y"]], dtype=object))
    assert handles.tolist() == [[1, 2]]
    assert table.values(np.array([2, 0, 1])).tolist() == [b"y", b"k", b"x"]
    assert table.values(np.array(1)).shape == ()
    for stray in (3, -1):
        with pytest.raises(RuntimeError, match="string handle outside its call's table of 3"):
            table.values(np.array([0, stray]))
    many = table.handles(np.array([b"s%d" % k for k in range(100)], dtype=object))
    assert table.values(many[-1:]).tolist() == [b"s99"]


def test_a_layout_converts_arguments_and_results():
    seen = []

    def module(arrays):
        seen.append([a.tolist() for a in arrays])
        return [arrays[0][::-1].copy(), np.float32(arrays[1] * 2), np.array(0)]

    call = StringLayout([b"const"], [True, False], [True, False, True]).wrap(module)
    words, doubled, constant = call([np.array([b"p", b"q"], dtype=object), np.float32(1.5)])
    assert seen == [[[1, 2], 1.5]]  # the constant is handle 0, the arguments follow
    assert words.tolist() == [b"q", b"p"] and doubled == 3.0 and constant.tolist() == b"const"
