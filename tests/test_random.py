"""tt.random: seeding, dtypes and the distributions' moments."""

import numpy as np
import pytest

import tracer as tt


def test_set_seed_makes_draws_repeatable_and_op_seeds_pick_streams():
    tt.random.set_seed(5)
    first = [tt.random.normal((3,)).numpy(), tt.random.uniform((2,)).numpy()]
    tt.random.set_seed(5)
    second = [tt.random.normal((3,)).numpy(), tt.random.uniform((2,)).numpy()]
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    a = tt.random.normal((4,), seed=1).numpy()
    c = tt.random.normal((4,), seed=2).numpy()
    assert not np.array_equal(a, c)


def test_an_op_seed_draws_a_sequence_that_set_seed_restarts():
    """Eagerly, calls with one op-level seed draw anew each time (TensorFlow's seeded ops
    keep a counter), and set_seed restarts the sequence; a tutorial that samples with
    seed=SEED in a loop (word2vec's negatives) must not draw the same values each time."""

    def sequence():
        tt.random.set_seed(3)
        return [tt.random.uniform((3,), seed=42).numpy() for _ in range(3)]

    first, second = sequence(), sequence()
    assert len({a.tobytes() for a in first}) == 3
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_normal_and_uniform_moments_and_dtypes():
    tt.random.set_seed(0)
    n = tt.random.normal((200_000,), mean=2.0, stddev=3.0, dtype=tt.float64)
    assert n.dtype == tt.float64 and n.shape == (200_000,)
    assert abs(n.numpy().mean() - 2.0) < 0.05 and abs(n.numpy().std() - 3.0) < 0.05
    u = tt.random.uniform((100_000,), minval=-1.0, maxval=3.0)
    assert u.dtype == tt.float32
    assert u.numpy().min() >= -1.0 and u.numpy().max() < 3.0 and abs(u.numpy().mean() - 1.0) < 0.05
    k = tt.random.uniform((1000,), minval=0, maxval=5, dtype=tt.int32)
    assert k.dtype == tt.int32 and set(np.unique(k.numpy())) == {0, 1, 2, 3, 4}


def test_bad_random_arguments():
    with pytest.raises(TypeError, match="floating"):
        tt.random.normal((2,), dtype=tt.int32)
    with pytest.raises(ValueError, match="maxval"):
        tt.random.uniform((2,), dtype=tt.int32)


def test_a_compiled_function_draws_anew_at_every_call_with_the_right_moments():
    """tt.random.normal and uniform inside a tt.function are drawn at each call, as in a
    tf.function (a VAE's noise, a random crop), not once when it was traced; the draws have
    the asked distribution."""

    @tt.function
    def draws():
        return (
            tt.random.normal((20_000,), mean=2.0, stddev=3.0),
            tt.random.uniform((20_000,), minval=-1.0, maxval=3.0),
            tt.random.uniform((20_000,), minval=0, maxval=5, dtype=tt.int32),
        )

    first, second = [[t.numpy() for t in draws()] for _ in range(2)]
    for a, b in zip(first, second):
        assert not np.array_equal(a, b)
    normal, uniform, integers = np.concatenate([first, second], axis=1)
    assert abs(normal.mean() - 2.0) < 0.1 and abs(normal.std() - 3.0) < 0.1
    assert uniform.min() >= -1.0 and uniform.max() < 3.0 and abs(uniform.mean() - 1.0) < 0.05
    assert set(np.unique(integers)) == {0, 1, 2, 3, 4}
    assert first[2].dtype == np.int32 and first[0].dtype == np.float32


@pytest.mark.parametrize("backend", ["interpreter", "c"])
def test_compiled_draws_repeat_after_set_seed_and_differ_by_op_seed(backend):
    """After tt.random.set_seed, a function traced anew draws the same sequence of values;
    an op-level seed draws another; the interpreter and C draw the same values."""

    def sequence(op_seed):
        tt.random.set_seed(11)
        f = tt.function(lambda: tt.random.normal((4,), seed=op_seed), backend=backend)
        return np.stack([f().numpy() for _ in range(3)])

    a, b, c = sequence(None), sequence(None), sequence(3)
    np.testing.assert_array_equal(a, b)
    assert len({row.tobytes() for row in a}) == 3
    assert not np.array_equal(a, c)
    tt.random.set_seed(11)
    other = tt.function(
        lambda: tt.random.normal((4,)), backend="c" if backend != "c" else "interpreter"
    )
    np.testing.assert_allclose(np.stack([other().numpy() for _ in range(3)]), a, rtol=1e-6)


def test_draws_in_a_loop_body_and_a_branch_differ_at_each_run_and_carry_gradients():
    """Each iteration of a tt.while_loop draws anew (the sum of four draws has four draws'
    variance, not sixteen times one draw's), a branch's draw changes from call to call, and
    a tape differentiates through the noise (d sum(w * eps) / dw = eps)."""

    @tt.function
    def summed(x):
        def body(i, acc):
            return i + 1, acc + tt.random.uniform((4000,))

        return tt.while_loop(lambda i, acc: i < 4, body, (0, x))[1]

    total = summed(tt.zeros((4000,))).numpy()
    assert abs(total.mean() - 2.0) < 0.05 and 4 / 12 * 0.85 < total.var() < 4 / 12 * 1.15

    @tt.function
    def branch(x, p):
        return tt.cond(p, lambda: x + tt.random.normal((8,)), lambda: x)

    on = tt.constant(True)
    assert not np.array_equal(
        branch(tt.zeros((8,)), on).numpy(), branch(tt.zeros((8,)), on).numpy()
    )

    w = tt.Variable(np.ones(5, np.float32))

    @tt.function
    def noisy():
        with tt.GradientTape() as tape:
            eps = tt.random.normal((5,))
            loss = tt.reduce_sum(w * eps)
        return eps, tape.gradient(loss, w)

    eps, grad = noisy()
    np.testing.assert_array_equal(grad.numpy(), eps.numpy())
    assert not np.array_equal(noisy()[0].numpy(), eps.numpy())


def test_a_draw_of_a_shape_known_only_at_run_time_is_traced_with_the_calls_shape():
    """The signature's trace cannot draw a shape known only when the function runs: each
    call is traced with its own shape, and draws anew."""

    @tt.function(input_signature=[tt.TensorSpec([None, 3], tt.float32)])
    def noisy(x):
        return x + tt.random.normal(tt.shape(x))

    first, second = noisy(tt.zeros((4, 3))).numpy(), noisy(tt.zeros((4, 3))).numpy()
    assert first.shape == (4, 3) and noisy(tt.zeros((2, 3))).shape == (2, 3)
    assert np.isfinite(first).all() and not np.array_equal(first, second)


def test_shuffle_permutes_the_first_axis_eagerly_and_compiled():
    """Each result holds the rows of the input, once each; a seed repeats the order; a
    compiled function draws a new order at each call, for any number of rows."""
    rows = np.arange(40, dtype=np.int32).reshape(20, 2)
    x = tt.constant(rows)

    def is_permutation(got):
        got = got.numpy()
        assert sorted(got[:, 0].tolist()) == rows[:, 0].tolist()
        np.testing.assert_array_equal(got[:, 1], got[:, 0] + 1)  # rows kept whole
        return got[:, 0].tolist()

    eager = is_permutation(tt.random.shuffle(x))
    tt.random.set_seed(7)
    first = is_permutation(tt.random.shuffle(x))
    tt.random.set_seed(7)
    assert is_permutation(tt.random.shuffle(x)) == first
    assert eager != list(range(0, 40, 2)) or first != list(range(0, 40, 2))
    for backend in ("c", "interpreter"):
        signature = [tt.TensorSpec([None, 2], tt.int32)]
        shuffled = tt.function(
            lambda t: tt.random.shuffle(t), input_signature=signature, backend=backend
        )
        orders = [is_permutation(shuffled(x)) for _ in range(3)]
        assert len({tuple(o) for o in orders}) > 1
        assert shuffled(tt.constant(rows[:5])).shape == (5, 2)
    with pytest.raises(ValueError, match="must have a first axis to shuffle"):
        tt.random.shuffle(tt.constant(3.0))


def test_log_uniform_candidate_sampler_follows_zipf_and_tensorflows_expected_counts():
    """The draws follow P(k) = log((k + 2) / (k + 1)) / log(range_max + 1); without `unique`
    the expected counts are p * num_sampled, as TF 2.21 printed them for these classes; with
    it, the sampled classes are distinct and counted as 1 - (1 - p) ** tries."""
    tt.random.set_seed(0)
    true_classes = tt.constant([[0, 1, 5, 9]], tt.int64)
    drawn = tt.random.log_uniform_candidate_sampler(true_classes, 4, 20_000, False, 10, seed=1)
    assert type(drawn).__name__ == "LogUniformCandidateSampler"
    assert drawn.sampled_candidates.dtype == tt.int64 and drawn.sampled_candidates.shape == (
        20_000,
    )
    frequency = np.bincount(drawn.sampled_candidates.numpy(), minlength=10) / 20_000
    k = np.arange(10)
    np.testing.assert_allclose(frequency, np.log((k + 2) / (k + 1)) / np.log(11), atol=0.012)
    few = tt.random.log_uniform_candidate_sampler(true_classes, 4, 3, False, 10)
    # printed by TF 2.21: log_uniform_candidate_sampler(..., 4, 3, False, 10).true_expected_count
    expected = [[0.8671944737434387, 0.5072762966156006, 0.19285748898983002, 0.11924229562282562]]
    np.testing.assert_allclose(few.true_expected_count.numpy(), expected, rtol=1e-6)
    unique = tt.random.log_uniform_candidate_sampler([[1]], 1, 6, True, 8, seed=2)
    sampled = unique.sampled_candidates.numpy()
    assert len(set(sampled.tolist())) == 6 and sampled.min() >= 0 and sampled.max() < 8
    p = np.log((sampled + 2.0) / (sampled + 1.0)) / np.log(9.0)
    tries = np.log1p(-unique.sampled_expected_count.numpy()) / np.log1p(-p)
    np.testing.assert_allclose(tries, np.round(tries[0]), rtol=1e-4)  # one count of tries
    assert tries[0] >= 6


def test_uniform_candidate_sampler_and_the_samplers_errors():
    drawn = tt.random.uniform_candidate_sampler([[1, 2]], 2, 3, False, 10)
    np.testing.assert_allclose(drawn.true_expected_count.numpy(), [[0.3, 0.3]], rtol=1e-6)
    with pytest.raises(tt.errors.InvalidArgumentError, match="range is too small"):
        tt.random.log_uniform_candidate_sampler([[1]], 1, 6, True, 4)
    with pytest.raises(tt.errors.InvalidArgumentError, match="num_true columns"):
        tt.random.log_uniform_candidate_sampler([[1, 2]], 1, 2, True, 4)
    with pytest.raises(tt.errors.InvalidArgumentError, match="int64"):
        tt.random.log_uniform_candidate_sampler(tt.constant([[1]], tt.int32), 1, 2, True, 4)


def test_a_candidate_sampler_in_a_function_draws_at_each_call():
    @tt.function
    def negatives(true_classes):
        return tt.random.log_uniform_candidate_sampler(true_classes, 1, 5, True, 50)

    true_classes = tt.constant([[3]], tt.int64)
    draws = {negatives(true_classes).sampled_candidates.numpy().tobytes() for _ in range(4)}
    assert len(draws) > 1


def test_categorical_draws_each_class_with_its_softmax_probability():
    """TF 2.21: tf.random.categorical(logits, n) is [batch, n] int64 (int32 on request), and a
    class whose logit is -inf is never drawn (the text-generation tutorial's mask)."""
    tt.random.set_seed(1)
    probabilities = np.array([[0.2, 0.3, 0.5, 0.0], [0.9, 0.1, 0.0, 0.0]])
    with np.errstate(divide="ignore"):
        logits = np.log(probabilities).astype(np.float32)
    drawn = tt.random.categorical(logits, 20000)
    assert drawn.shape == (2, 20000) and drawn.dtype == tt.int64
    for row, p in zip(drawn.numpy(), probabilities):
        np.testing.assert_allclose(np.bincount(row, minlength=4) / 20000, p, atol=0.015)
    compiled = tt.function(lambda x: tt.random.categorical(x, 500, dtype=tt.int32))
    first, second = compiled(logits).numpy(), compiled(logits).numpy()
    assert first.dtype == np.int32 and not np.array_equal(first, second)
    assert set(first[1]) <= {0, 1}
