"""Kernels lent between the modules of a process (codegen/shared_kernels.py) and, through
the cache's index, of later processes (codegen/kernel_index.py): a gradient's module calls
the kernels its objective's module compiled, an edited program's those of its last run,
and each gives the bits of the module that compiles them itself; a kernel is lent only
where its C, compiled the same way, is the same; a stored plan that borrows is used only
where its kernels are offered; a damaged index lends nothing."""

import hashlib
import re
import shutil
import textwrap

import numpy as np
import pytest

import tracer as tt
from benchmarks.gradbench.tracer_tool.gmm import log_posterior
from codegen import kernel_index, shared_kernels
from codegen.compile import compile_graph
from tests.processes import run_json, run_with_errors
from tracer.report.timing import compile_phases

RNG = np.random.default_rng(7)


def _gmm_parameters(d=5, k=3, n=60):
    x = RNG.standard_normal((n, d))
    alpha, mu = RNG.standard_normal(k), RNG.standard_normal((k, d))
    q = RNG.standard_normal((k, d)) * 0.1
    lower = RNG.standard_normal((k, d * (d - 1) // 2)) * 0.1
    return [tt.constant(a) for a in (x, alpha, mu, q, lower)]


def _gmm_objective(x, alpha, mu, q, lower):
    return log_posterior(x, alpha, mu, q, lower, 0, 1.0)


def _gmm_gradient(x, alpha, mu, q, lower):
    with tt.GradientTape() as tape:
        tape.watch([alpha, mu, q, lower])
        value = log_posterior(x, alpha, mu, q, lower, 0, 1.0)
    return tape.gradient(value, [alpha, mu, q, lower])


def _own_kernels(concrete, arrays):
    """The values of `concrete`'s graph in a module that borrows nothing."""
    shared_kernels.forget()
    compiled = compile_graph(concrete.stages.final, "own")
    assert "tracer_borrowed_kernels" not in compiled.c_source
    return compiled.run([np.asarray(a) for a in arrays])


def _assert_same_bits(got, expected):
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()


def test_a_gradient_borrows_its_objectives_kernels_and_gives_the_bits_of_its_own():
    objective, gradient = tt.function(_gmm_objective), tt.function(_gmm_gradient)
    arrays = _gmm_parameters()
    value = objective(*arrays)
    grads = gradient(*arrays)
    concrete = gradient.get_concrete_function(*arrays)
    source = concrete.c_source()
    borrowed = source.count("(borrowed)")
    assert borrowed >= 5  # the objective's sums, exponentials, product and gather
    assert source.count("tracer_borrowed_kernels[") == borrowed
    (compiler,) = [p for p in compile_phases(concrete, None, False) if p.name == "cc"]
    assert compiler.note.startswith(f"{borrowed} kernels borrowed from modules compiled before")
    _assert_same_bits(grads, _own_kernels(concrete, arrays))
    # and the values are the log posterior's: the interpreter's, to rounding
    interpreted = tt.function(_gmm_gradient, backend="interpreter")(*arrays)
    for a, b in zip(grads, interpreted):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
    assert np.isfinite(value.numpy())


def test_a_training_step_borrows_its_evaluations_kernels():
    x = tt.constant(RNG.standard_normal((64, 48)).astype(np.float32))
    labels = tt.constant(RNG.integers(0, 10, 64).astype(np.int32))
    w1 = tt.Variable(RNG.standard_normal((48, 96)).astype(np.float32) * 0.1)
    w_mid = tt.Variable(RNG.standard_normal((96, 80)).astype(np.float32) * 0.1)
    w2 = tt.Variable(RNG.standard_normal((80, 10)).astype(np.float32) * 0.1)

    def loss_of(x, labels):
        first = tt.nn.relu(x @ w1)
        second = first @ w_mid
        mean, variance = tt.nn.moments(second, axes=[1], keepdims=True)
        hidden = tt.nn.gelu((second - mean) * tt.math.rsqrt(variance + 1e-3))
        logits = tt.tanh(hidden @ w2) * 3.0
        losses = tt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        return tt.reduce_mean(losses)

    @tt.function
    def evaluate(x, labels):
        return loss_of(x, labels)

    @tt.function
    def step(x, labels):
        with tt.GradientTape() as tape:
            loss = loss_of(x, labels)
        return [loss, *tape.gradient(loss, [w1, w_mid, w2])]

    evaluate(x, labels)
    got = step(x, labels)
    concrete = step.get_concrete_function(x, labels)
    # the layer norm's and GELU's kernels, and on a CPU with AVX-512 the products (tracer's
    # blocked products; elsewhere they call the BLAS)
    assert concrete.c_source().count("(borrowed)") >= 1
    arrays = [x, labels, w1, w_mid, w2]
    _assert_same_bits(got, _own_kernels(concrete, arrays))


def test_a_kernel_that_returns_an_error_code_is_borrowed_with_its_check():
    """The loss's label check (its kernel returns the code of the error): the step calls the
    evaluation's kernel, and a label out of range raises the step's own error."""
    x = tt.constant(RNG.standard_normal((64, 48)).astype(np.float32))
    labels = RNG.integers(0, 10, 64).astype(np.int32)
    w1 = tt.Variable(RNG.standard_normal((48, 96)).astype(np.float32) * 0.1)
    # a module long enough to keep its kernels as functions of their own: layers of several
    # widths, each with kernels of its own shapes
    widths = [96, 88, 80, 72, 64]
    ws = [
        tt.Variable(RNG.standard_normal((m, n)).astype(np.float32) * 0.1)
        for m, n in zip(widths, widths[1:])
    ]
    w2 = tt.Variable(RNG.standard_normal((64, 10)).astype(np.float32) * 0.1)

    def loss_of(x, labels):
        hidden = tt.nn.relu(x @ w1)
        for w in ws:
            hidden = tt.sigmoid(hidden @ w) * tt.tanh(hidden[:, : w.shape[1]])
        logits = tt.tanh(hidden @ w2) * 3.0
        losses = tt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        return tt.reduce_mean(losses)

    @tt.function
    def step(x, labels):
        with tt.GradientTape() as tape:
            loss = loss_of(x, labels)
        return [loss, *tape.gradient(loss, [w1, *ws, w2])]

    tt.function(loss_of)(x, labels)
    got = step(x, labels)
    concrete = step.get_concrete_function(x, labels)
    borrowed = re.findall(
        r"/\* k\d+_(\w+): the kernel of this C in a module loaded", concrete.c_source()
    )
    assert "sparse_softmax_cross_entropy" in borrowed
    _assert_same_bits(got, _own_kernels(concrete, [x, labels, w1, *ws, w2]))
    outside = labels.copy()
    outside[7] = 10
    with pytest.raises(
        tt.errors.InvalidArgumentError, match=r"outside the valid range of \[0, 10\)"
    ):
        step(x, outside)


def test_kernels_of_sizes_known_at_run_time_are_borrowed_with_their_sizes():
    """Rows of any count (TensorSpec(None)): the kernels take the count as a parameter,
    which the borrowed call passes on."""
    spec = [tt.TensorSpec([None, 24], tt.float64), tt.TensorSpec([24, 16], tt.float64)]

    def loss(x, w):
        h = tt.tanh(x @ w)
        g = tt.exp(-h * h) * tt.sigmoid(h)
        top = tt.reduce_max(h, axis=1, keepdims=True)
        return tt.reduce_sum(tt.math.log1p(g * g) + top * h) / tt.reduce_sum(tt.abs(h - top))

    @tt.function(input_signature=spec)
    def gradient(x, w):
        with tt.GradientTape() as tape:
            tape.watch(w)
            value = loss(x, w)
        return tape.gradient(value, w)

    tt.function(loss, input_signature=spec)(RNG.standard_normal((5, 24)), np.ones((24, 16)))
    w = tt.constant(RNG.standard_normal((24, 16)) * 0.3)
    for rows in (40, 7):
        x = tt.constant(RNG.standard_normal((rows, 24)))
        got = gradient(x, w)
        concrete = gradient.get_concrete_function(x, w)
        assert concrete.c_source().count("(borrowed)") >= 1  # the maximum over each row
        (own,) = _own_kernels(concrete, [x, w])
        assert got.numpy().tobytes() == np.asarray(own).tobytes()
        interpreted = tt.function(gradient.python_function, backend="interpreter")(x, w)
        np.testing.assert_allclose(got.numpy(), interpreted.numpy(), rtol=1e-10, atol=1e-13)


def test_a_cnn_step_borrows_from_its_evaluation_through_the_installed_kernels():
    """A CNN's evaluation, then its training step: both modules call the convolution
    kernels installed with tracer first (codegen/conv_kernels.py), then their own; what the
    step's borrows from the evaluation's gives the bits of its own kernels."""
    images = tt.constant(RNG.standard_normal((4, 10, 10, 1)).astype(np.float32))
    kernel = tt.Variable(RNG.standard_normal((3, 3, 1, 4)).astype(np.float32) * 0.3)
    dense = tt.Variable(RNG.standard_normal((100, 3)).astype(np.float32) * 0.1)

    def loss_of(images):
        features = tt.nn.relu(tt.nn.conv2d(images, kernel, 1, "SAME"))
        pooled = tt.nn.max_pool2d(features, 2, 2, "VALID")
        return tt.reduce_mean(tt.tanh(tt.reshape(pooled, [4, 100]) @ dense))

    @tt.function
    def step(images):
        with tt.GradientTape() as tape:
            loss = loss_of(images)
        return [loss, *tape.gradient(loss, [kernel, dense])]

    evaluate = tt.function(loss_of)
    evaluate(images)
    # its module with its own kernels lends; the first, which a later process never
    # loads, does not
    evaluate.get_concrete_function(images)._executable.wait()
    got = step(images)
    concrete = step.get_concrete_function(images)
    concrete._executable.wait()  # the module with its own kernels swapped in
    assert concrete.c_source().count("(borrowed)") >= 1
    _assert_same_bits(got, _own_kernels(concrete, [images, kernel, dense]))
    _assert_same_bits(step(images), got)


def _block(name, body, returns="void"):
    return (
        f"/* {name}: a comment naming node %{len(name)} at f.py:{len(body)} */\n"
        f"TR_PART TR_NOINLINE {returns} {name}(const double *restrict p0, double *restrict out) {{\n"
        f"{body}\n}}"
    )


def test_a_kernel_is_lent_only_for_the_same_c_compiled_the_same_way():
    body = "    for (int64_t i = 0; i < 8; i++) out[i] = p0[i] * 2.0;"
    key = shared_kernels.key("k3_mul_8", _block("k3_mul_8", body), "gcc -O3")
    assert shared_kernels.KEY.match(key)
    # another name, other comments: the same kernel
    assert shared_kernels.key("k17_mul_8", _block("k17_mul_8", body), "gcc -O3") == key
    # other code, or another compiler's switches: another
    other = body.replace("2.0", "3.0")
    assert shared_kernels.key("k3_mul_8", _block("k3_mul_8", other), "gcc -O3") != key
    assert shared_kernels.key("k3_mul_8", _block("k3_mul_8", body), "gcc -O2") != key
    # a kernel that returns an error code: lent; one that calls another of its module's,
    # or returns a value of another type: not
    errs = body + "\n    return 0;"
    assert shared_kernels.key("k3_mul_8", _block("k3_mul_8", errs, "int"), "gcc -O3") not in (
        None,
        key,
    )
    calls = "    k2_exp_8(p0, out);"
    assert shared_kernels.key("k3_mul_8", _block("k3_mul_8", calls), "gcc -O3") is None
    assert shared_kernels.key("k3_mul_8", _block("k3_mul_8", errs, "double"), "gcc -O3") is None


def _sums(axis):
    return lambda *xs: [tt.reduce_sum(x, axis=axis) for x in xs]


def _scaled_sums(axis):
    return lambda *xs: [tt.reduce_sum(x, axis=axis) * 2.0 for x in xs]


def test_two_modules_borrowing_other_kernels_under_the_same_names_are_two_modules():
    """Sums over rows and over columns borrowed from two lenders: the borrowers' C differs
    only in what they borrow, which their code names, so each keeps its own module and
    its own table."""
    xs = [RNG.standard_normal((16, 16)) for _ in range(8)]
    for axis in (0, 1):
        tt.function(_scaled_sums(axis))(*xs)  # lenders: the same sums, then a product
    by_rows, by_columns = tt.function(_sums(0)), tt.function(_sums(1))
    first = by_rows(*xs)
    by_columns(*xs)
    again = by_rows(*xs)
    for x, a, b in zip(xs, first, again):
        np.testing.assert_allclose(a.numpy(), x.sum(axis=0), rtol=1e-12, atol=1e-13)
        np.testing.assert_array_equal(b.numpy(), a.numpy())
    for x, c in zip(xs, by_columns(*xs)):
        np.testing.assert_allclose(c.numpy(), x.sum(axis=1), rtol=1e-12, atol=1e-13)
    rows_c = by_rows.get_concrete_function(*xs).c_source()
    columns_c = by_columns.get_concrete_function(*xs).c_source()
    assert rows_c.count("(borrowed)") == columns_c.count("(borrowed)") >= 1
    assert shared_kernels.borrowed_in(rows_c) != shared_kernels.borrowed_in(columns_c)


def test_the_table_is_declared_with_the_first_borrowed_kernel_whatever_the_comments_say():
    """A user's file named `m (borrowed).py` names the kernels it compiles itself in their
    comments: the table's declaration goes with the first call through it (in every
    unit), not into a kernel's block (in one)."""
    from codegen import units

    def kernel(name, factor):
        return name, (
            f"/* {name}: f64[8]  # m (borrowed).py:3 */\n"
            f"static TR_NOINLINE void {name}(const double *restrict p0, double *restrict out) {{\n"
            f"    for (int64_t i = 0; i < 8; i++) out[i] = p0[i] * {factor};\n}}"
        )

    lender = kernel("k9_mul_8", "2.0")
    lent = shared_kernels.key(
        lender[0], units.block_text(lender[1], units.not_inlined(*lender)), "id"
    )
    shared_kernels._offered[lent] = 0x1234  # as a loaded module's offer would
    texts, keys, table = shared_kernels.borrowing(
        [kernel("k1_mul_8", "3.0"), kernel("k2_mul_8", "2.0")], "id"
    )
    assert keys == [lent] and table.tolist() == [0x1234]
    layout = units.layout(texts, [([], ["return 0;"])])
    ((own, own_block), (call, call_block)) = layout.kernels
    assert own_block is not None and "TR_BORROWED_KEYS" not in own
    assert call_block is None and "TR_BORROWED_KEYS" in call
    assert call.index("void **tracer_borrowed_kernels") < call.index("tracer_borrowed_kernels[0]")


def test_borrowed_keys_are_read_from_the_code_and_refused_where_the_slots_outrun_them():
    key = "ab" * 32
    calls = "tracer_borrowed_kernels[0](p); tracer_borrowed_kernels[1](p);"
    source = f'#define TR_BORROWED_KEYS "{key} {key}"\n{calls}'
    assert shared_kernels.borrowed_in(source) == [key, key]
    assert shared_kernels.borrowed_in(source.replace(f" {key}", "", 1)) is None
    assert shared_kernels.borrowed_in(source.replace(key, "../etc", 1)) is None
    assert shared_kernels.borrowed_in("int tracer_run(char **args);") == []
    commented = f'/* #define TR_BORROWED_KEYS "{key}" */\ntracer_borrowed_kernels[0](p);'
    assert shared_kernels.borrowed_in(commented) is None


def layer_loss(x, w, b):
    """A layer's loss whose module is long enough to lend its kernels (its gradient's then
    borrows four)."""
    h = tt.tanh(x @ w + b)
    g = tt.exp(-h * h) * tt.sigmoid(h)
    top = tt.reduce_max(h, axis=1, keepdims=True)
    low = tt.reduce_min(h, axis=0, keepdims=True)
    spread = tt.reduce_sum(tt.abs(h - top) + 1.0) + tt.reduce_sum(tt.square(h - low))
    return tt.reduce_sum(tt.math.log1p(g * g) + top * h + tt.sin(low * h)) / spread


def layer_loss_gradient(x, w, b):
    with tt.GradientTape() as tape:
        tape.watch([w, b])
        value = layer_loss(x, w, b)
    return tape.gradient(value, [w, b])


PROGRAM = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import tracer as tt
    from tests.test_shared_kernels import layer_loss, layer_loss_gradient

    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 24))
    w = rng.standard_normal((24, 16)) * 0.3
    b = rng.standard_normal(16)
    gradient = tt.function(layer_loss_gradient)
    if sys.argv[1] == "both":
        tt.function(layer_loss)(x, w, b)
    grads = gradient(x, w, b)
    concrete = gradient.get_concrete_function(x, w, b)
    print(json.dumps({"bytes": b"".join(g.numpy().tobytes() for g in grads).hex(),
                      "borrowed": concrete.c_source().count("(borrowed)"),
                      "passes_ran": concrete._stages is not None}))
    """
)


def test_a_stored_plan_that_borrows_is_used_only_where_its_kernels_are_offered(tmp_path):
    first = run_json(PROGRAM, tmp_path, "both")  # stores the gradient's plan, which borrows
    assert first["borrowed"] >= 3 and first["passes_ran"]
    again = run_json(PROGRAM, tmp_path, "both")  # the objective's module offers them: the plan runs
    assert again["borrowed"] == first["borrowed"] and not again["passes_ran"]
    # the gradient alone: the cache's index names the objective's module, which it loads
    alone = run_json(PROGRAM, tmp_path, "gradient")
    assert alone["borrowed"] == first["borrowed"] and not alone["passes_ran"]
    for entry in tmp_path.iterdir():  # every module gone, the plans and the index kept
        if entry.is_dir() and not entry.name.startswith("."):
            shutil.rmtree(entry)
    rebuilt = run_json(PROGRAM, tmp_path, "gradient")  # nothing offers them: its own kernels
    assert rebuilt["borrowed"] == 0 and rebuilt["passes_ran"]
    assert first["bytes"] == again["bytes"] == alone["bytes"] == rebuilt["bytes"]


EDITED = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import tracer as tt
    from benchmarks.gradbench.tracer_tool.gmm import log_posterior

    rng = np.random.default_rng(5)
    d, k, n = 6, 4, 80
    x, alpha, mu = rng.standard_normal((n, d)), rng.standard_normal(k), rng.standard_normal((k, d))
    q, lower = rng.standard_normal((k, d)) * 0.1, rng.standard_normal((k, d * (d - 1) // 2)) * 0.1
    weight = float(sys.argv[1])  # the edit: a penalty on the means, where it is not 0
    gamma = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0  # a constant: a module argument

    def gradient(x, alpha, mu, q, lower):
        with tt.GradientTape() as tape:
            tape.watch([alpha, mu, q, lower])
            value = log_posterior(x, alpha, mu, q, lower, 0, gamma)
            if weight:
                value -= weight * tt.reduce_sum(tt.tanh(mu) ** 2)
        return tape.gradient(value, [alpha, mu, q, lower])

    arrays = [tt.constant(a) for a in (x, alpha, mu, q, lower)]
    compiled = tt.function(gradient)
    grads = compiled(*arrays)
    concrete = compiled.get_concrete_function(*arrays)
    interpreted = tt.function(gradient, backend="interpreter")(*arrays)
    print(json.dumps({
        "bytes": b"".join(g.numpy().tobytes() for g in grads).hex(),
        "borrowed": concrete.c_source().count("(borrowed)"),
        "cached": concrete._executable.meta["cached"],
        "error": max(float(np.max(np.abs(a.numpy() - b.numpy()) / (1 + np.abs(b.numpy()))))
                     for a, b in zip(grads, interpreted)),
    }))
    """
)


def test_an_edited_program_borrows_the_kernels_its_last_run_cached(tmp_path):
    cache, fresh = tmp_path / "cache", tmp_path / "fresh"
    last_run = run_json(EDITED, cache, "0")
    assert last_run["borrowed"] == 0
    edited = run_json(EDITED, cache, "0.5")  # a new module, of the last run's kernels
    assert edited["borrowed"] >= 5
    own = run_json(EDITED, fresh, "0.5")  # the same program where nothing was cached
    assert own["borrowed"] == 0
    assert not edited["cached"] and edited["bytes"] == own["bytes"] != last_run["bytes"]
    assert edited["error"] < 1e-10


def test_a_module_built_before_is_found_again_not_borrowing_more(tmp_path):
    first = run_json(EDITED, tmp_path, "0", "1.0")
    # another constant, the same C: the module it built, not one that borrows its kernels
    again = run_json(EDITED, tmp_path, "0", "2.0")
    assert again["cached"] and again["borrowed"] == first["borrowed"] == 0
    assert again["bytes"] != first["bytes"] and again["error"] < 1e-10


def test_a_module_that_borrowed_from_the_cache_is_found_again(tmp_path):
    run_json(EDITED, tmp_path, "0", "2.0")  # the lender
    first = run_json(EDITED, tmp_path, "0.5", "2.0")  # its kernels and the penalty's own
    # the same C again: the module built for it, though the first one's module offers the
    # penalty's kernels now
    again = run_json(EDITED, tmp_path, "0.5", "3.0")
    assert first["borrowed"] >= 5 and not first["cached"]
    assert again["cached"] and again["borrowed"] == first["borrowed"]
    assert again["error"] < 1e-10


PRODUCTS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import tracer as tt

    which = sys.argv[1]
    rng = np.random.default_rng(0)
    x = tt.constant(rng.standard_normal((64, 64)))
    w = tt.constant(rng.standard_normal((64, 48 if which == "first" else 40)))

    def f(x, w):
        h = x @ w
        for k in range(10):  # long enough that every kernel is a function of its own
            h = tt.sin(h) * tt.cos(h + float(k)) + tt.tanh(h) * tt.exp(-h * h)
        if which == "third":
            h = h * 2.0 + 1.0  # another C, the second one's product
        return tt.reduce_sum(h)

    compiled = tt.function(f)
    value = compiled(x, w)
    source = compiled.get_concrete_function(x, w).c_source()
    interpreted = tt.function(f, backend="interpreter")(x, w)
    print(json.dumps({"value": float(value.numpy()), "interpreted": float(interpreted.numpy()),
                      "borrows_gemm": "tr_gemm_parts_d: the kernel of this C" in source}))
    """
)


def test_a_kernel_that_calls_a_borrowed_one_is_not_lent(tmp_path):
    """The second module borrows the first's product helper, which its own product kernel
    calls through its table: that kernel is not lent (a module loaded from the cache only to
    lend has no table set), so the third process computes it itself."""
    run_json(PRODUCTS, tmp_path, "first")
    second = run_json(PRODUCTS, tmp_path, "second")
    assert second["borrows_gemm"]
    third = run_json(PRODUCTS, tmp_path, "third")
    assert third["value"] == pytest.approx(third["interpreted"], rel=1e-12)


LENDERS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import tracer as tt

    rng = np.random.default_rng(0)
    xs = [tt.constant(rng.standard_normal((32, 40 + i))) for i in range(10)]

    def chain(h):
        for k in range(3):
            h = tt.sin(h) * tt.cos(h + float(k)) + tt.tanh(h) * tt.exp(-h * h)
            h = h - tt.reduce_mean(h, axis=1, keepdims=True)
        return tt.reduce_sum(h)

    if sys.argv[1] == "lenders":  # one module for each of nine shapes
        for x in xs[:9]:
            tt.function(chain)(x)
        print("{}")
    else:  # the nine chains and one of its own; the constant is an argument of its module
        scale = tt.constant(np.full((32, 49), float(sys.argv[1])))
        def f(*xs):
            return sum(chain(x) for x in xs[:9]) + chain(xs[9] * scale)
        compiled = tt.function(f)
        compiled(*xs)
        concrete = compiled.get_concrete_function(*xs)
        print(json.dumps({"borrowed": concrete.c_source().count("(borrowed)"),
                          "cached": concrete._executable.meta["cached"]}))
    """
)


def test_a_module_that_borrowed_from_more_modules_than_are_loaded_at_once_is_found_again(
    tmp_path,
):
    """Nine lenders, more than a lowering loads: the kernels the module borrowed are
    borrowed again from their own lenders, not crowded out by the module itself, which
    offers its own chain's kernels now."""
    run_json(LENDERS, tmp_path, "lenders")
    first = run_json(LENDERS, tmp_path, "2.0")
    again = run_json(LENDERS, tmp_path, "3.0")
    assert kernel_index.MAX_LENDERS < 9
    assert not first["cached"] and first["borrowed"] >= 8
    assert again["cached"] and again["borrowed"] == first["borrowed"]


def _line(fields):
    text = " ".join(fields)
    return f"{text} {hashlib.sha256(text.encode()).hexdigest()}\n"


def test_an_index_that_names_more_kernels_than_a_table_holds_lends_none_of_them(tmp_path):
    run_json(EDITED, tmp_path, "0")
    index = tmp_path / "kernels.log"
    fields = index.read_text().split()[:-1]
    index.write_text(_line([*fields, "f" * 64]))  # its digest right, one kernel too many
    edited = run_json(EDITED, tmp_path, "0.5")
    assert edited["borrowed"] == 0 and edited["error"] < 1e-10


def test_an_index_past_its_size_is_not_read_and_is_cut_to_its_newest_lines(tmp_path):
    old = _line(["a" * 64, "0", *["b" * 64] * 30])
    index = tmp_path / "kernels.log"
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text(old * (3 * kernel_index.MAX_BYTES // len(old)))
    last_run, errors = run_with_errors(EDITED, tmp_path, "0")
    assert "not reading the kernel index" in errors and last_run["error"] < 1e-10
    lines = index.read_text().splitlines(keepends=True)
    assert len(index.read_bytes()) <= kernel_index.MAX_BYTES // 2 + len(lines[-1])
    assert set(lines[:-1]) == {old} and lines[-1] != old  # the newest, and this run's
    edited = run_json(EDITED, tmp_path, "0.5")  # which lends again
    assert edited["borrowed"] >= 5


def test_a_damaged_kernel_index_lends_nothing(tmp_path):
    run_json(EDITED, tmp_path, "0")
    index = tmp_path / "kernels.log"
    (line,) = index.read_text().splitlines()
    damaged = line[:-1] + ("1" if line[-1] == "0" else "0")  # its digest no longer matches
    index.write_text(f"{damaged}\nnot a line\n")
    edited, errors = run_with_errors(EDITED, tmp_path, "0.5")
    assert edited["borrowed"] == 0 and edited["error"] < 1e-10
    assert "2 lines of the kernel index" in errors
    index.unlink()
    index.mkdir()  # a directory in its place: not read, not written
    edited, errors = run_with_errors(EDITED, tmp_path, "0.5")
    assert edited["borrowed"] == 0 and edited["error"] < 1e-10
    assert "not reading the kernel index" in errors
