"""tt.random.Generator draws TensorFlow's numbers: the values and states TensorFlow 2.21's
Generator gave (tests/data/random/generator_cases.json, made by make_generator_cases.py
beside it), TensorFlow's random_numbers guide's printed values, the same draws in compiled
functions on both backends, checkpoints, and the errors."""

import json
import os

import numpy as np
import pytest

import tracer as tt

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "random", "generator_cases.json")) as f:
    DATA = json.load(f)


@pytest.mark.parametrize(
    "case", DATA["cases"], ids=lambda c: f"{c['seed']}-{c['method']}-{c['dtype']}"
)
def test_tensorflows_values_and_states(case):
    generator = tt.random.Generator.from_state(case["state"], alg="philox")
    draw = getattr(generator, case["method"])
    got = draw([3, 7], dtype=case["dtype"], **case["arguments"])
    want = np.array(case["values"]).astype(case["dtype"]).reshape(3, 7)
    assert got.dtype.name == case["dtype"]
    np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(generator.state.numpy(), case["state_after"])


def test_two_thousand_normals_carry_the_c_librarys_rounding():
    got = tt.random.Generator.from_seed(9).normal([2000]).numpy()
    np.testing.assert_array_equal(got, np.array(DATA["normals_of_seed_9"], np.float32))


def test_the_random_numbers_guides_values():
    """TensorFlow's random_numbers guide, as TensorFlow 2.21 printed it."""
    g = tt.random.Generator.from_seed(1)
    np.testing.assert_array_equal(
        g.normal(shape=[2, 3]).numpy(),
        np.float32([[0.43842274, -0.53439844, -0.07710262], [1.5658046, -0.1012345, -0.2744976]]),
    )
    g = tt.random.Generator.from_seed(1)
    assert [float(g.normal([])) for _ in range(2)] == [
        float(np.float32(0.43842274)),
        float(np.float32(1.6272374)),
    ]
    g.reset_from_seed(1)
    assert g.normal([]).numpy() == np.float32(0.43842274)
    g = tt.random.Generator.from_seed(1)
    g.normal([])
    children = [float(child.normal([])) for child in g.split(3)]
    np.testing.assert_array_equal(children, np.float32([2.536413, 0.33186463, -0.07144657]))
    assert g.normal([]).numpy() == np.float32(-0.79253083)
    seeds = tt.random.Generator.from_seed(1).make_seeds(2)
    assert seeds.dtype == tt.int64 and seeds.shape == (2, 2)
    np.testing.assert_array_equal(seeds.numpy()[1], [0, 0])


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_a_compiled_function_draws_what_eager_draws_and_moves_the_state(backend):
    generator = tt.random.Generator.from_seed(3)
    twin = tt.random.Generator.from_seed(3)

    @tt.function(backend=backend)
    def noisy(x):
        return x + generator.normal([2, 2], dtype=tt.float64), generator.uniform(
            [3], maxval=9, dtype=tt.int64
        )

    for _ in range(3):
        values, integers = noisy(tt.constant(np.ones((2, 2))))
        np.testing.assert_array_equal(
            values.numpy(), 1.0 + twin.normal([2, 2], dtype=tt.float64).numpy()
        )
        np.testing.assert_array_equal(
            integers.numpy(), twin.uniform([3], maxval=9, dtype=tt.int64).numpy()
        )
    np.testing.assert_array_equal(generator.state.numpy(), twin.state.numpy())


def test_the_counter_carries_into_its_high_word_and_checkpoints_keep_the_state(tmp_path):
    generator = tt.random.Generator.from_state([2**63 - 100, 5, 7], alg="philox")
    generator.normal([1])
    np.testing.assert_array_equal(generator.state.numpy(), [-(2**63) + 156, 5, 7])
    generator = tt.random.Generator.from_state([-1, 5, 7], alg=1)
    generator.skip(1)
    np.testing.assert_array_equal(generator.state.numpy(), [255, 6, 7])
    checkpoint = tt.train.Checkpoint(generator=generator)
    path = checkpoint.write(str(tmp_path / "ckpt"))
    first = generator.normal([3]).numpy()
    checkpoint.restore(path)
    np.testing.assert_array_equal(generator.normal([3]).numpy(), first)
    assert tt.random.get_global_generator() is tt.random.get_global_generator()
    tt.random.set_global_generator(generator)
    assert tt.random.get_global_generator() is generator


def test_clear_errors():
    with pytest.raises(NotImplementedError, match="tracer draws with Philox"):
        tt.random.Generator.from_seed(1, alg="threefry")
    with pytest.raises(ValueError, match="a Philox state has 3 int64 words"):
        tt.random.Generator.from_state([1, 2], alg="philox")
    g = tt.random.Generator.from_seed(1)
    with pytest.raises(ValueError, match="integers need maxval"):
        g.uniform([2], dtype=tt.int32)
    with pytest.raises(tt.errors.InvalidArgumentError, match="need minval < maxval"):
        g.uniform([2], minval=3, maxval=3, dtype=tt.int32)
    with pytest.raises(TypeError, match="dtype must be float32 or float64"):
        g.normal([2], dtype=tt.int32)
    with pytest.raises(TypeError, match="must be known when the function is traced"):
        tt.function(lambda n: g.normal(tt.reshape(n, [1])))(tt.constant(3))
