"""tt.keras.optimizers.schedules: Keras's learning rate schedules, against their formulas in
float64, and an optimizer stepping with one, eagerly and compiled."""

import math

import numpy as np
import pytest

import tracer as tt

S = tt.keras.optimizers.schedules
STEPS = [0, 1, 3, 4, 7, 8, 10, 14, 20, 25]


def _polynomial_cycle(step, initial, steps, end, power):
    steps = steps * max(1, math.ceil(step / steps))
    return (initial - end) * (1 - step / steps) ** power + end


def _cosine(step, rate, steps, alpha):
    progress = min(step, steps) / steps
    return rate * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * progress)) + alpha)


CASES = [
    (S.ExponentialDecay(0.1, 7, 0.5), lambda k: 0.1 * 0.5 ** (k / 7)),
    (S.ExponentialDecay(0.1, 7, 0.5, staircase=True), lambda k: 0.1 * 0.5 ** (k // 7)),
    (S.InverseTimeDecay(0.1, 5, 0.3), lambda k: 0.1 / (1 + 0.3 * k / 5)),
    (S.InverseTimeDecay(0.1, 5, 0.3, staircase=True), lambda k: 0.1 / (1 + 0.3 * (k // 5))),
    (
        S.PiecewiseConstantDecay([3, 8], [1.0, 0.5, 0.1]),
        lambda k: 1.0 if k <= 3 else 0.5 if k <= 8 else 0.1,
    ),
    (
        S.PolynomialDecay(0.1, 10, end_learning_rate=0.01, power=2.0),
        lambda k: (0.1 - 0.01) * (1 - min(k, 10) / 10) ** 2 + 0.01,
    ),
    (
        S.PolynomialDecay(0.1, 10, end_learning_rate=0.01, power=0.5, cycle=True),
        lambda k: _polynomial_cycle(k, 0.1, 10, 0.01, 0.5),
    ),
    (S.CosineDecay(0.1, 12, alpha=0.1), lambda k: _cosine(k, 0.1, 12, 0.1)),
    (
        S.CosineDecay(0.0, 12, alpha=0.1, warmup_target=0.2, warmup_steps=4),
        lambda k: 0.2 * k / 4 if k < 4 else _cosine(k - 4, 0.2, 12, 0.1),
    ),
]


@pytest.mark.parametrize("schedule, formula", CASES, ids=lambda c: type(c).__name__)
def test_each_schedule_follows_its_keras_formula(schedule, formula):
    """Each schedule's float32 rate at steps 0 to 25 against its formula in float64
    (TensorFlow 2.21's schedules print the same values to the last digit or one ulp of
    float32: pow and cos)."""
    for k in STEPS:
        got = schedule(tt.constant(k, tt.int64))
        assert got.dtype == tt.float32
        np.testing.assert_allclose(float(got), formula(k), rtol=2e-7, atol=1e-12, err_msg=k)
    assert type(schedule).from_config(schedule.get_config()).get_config() == schedule.get_config()


def test_default_names_in_the_configs_are_kerass():
    # the configs printed by TF 2.21 (Keras 3.15) for these schedules
    assert S.ExponentialDecay(0.1, 7, 0.5).get_config() == {
        "initial_learning_rate": 0.1,
        "decay_steps": 7,
        "decay_rate": 0.5,
        "staircase": False,
        "name": "ExponentialDecay",
    }
    assert S.InverseTimeDecay(0.1, 5, 0.3).get_config()["name"] == "InverseTimeDecay"
    assert S.PiecewiseConstantDecay([3, 8], [1.0, 0.5, 0.1]).get_config() == {
        "boundaries": [3, 8],
        "values": [1.0, 0.5, 0.1],
        "name": "PiecewiseConstant",
    }
    assert S.PolynomialDecay(0.1, 10).get_config()["name"] == "PolynomialDecay"
    assert list(S.CosineDecay(0.1, 12).get_config().items())[3] == ("name", "CosineDecay")
    assert S.InverseTimeDecay(0.1, 5, 0.3, name="mine").get_config()["name"] == "mine"


@pytest.mark.parametrize("compiled", [False, True])
def test_an_optimizer_steps_with_the_schedule_of_the_updates_made_before(compiled):
    """The first update takes the rate of step 0, the next of step 1, ...; a compiled step
    reads the step count at each call; `learning_rate` is the next update's rate, and
    setting it is refused."""
    schedule = S.PiecewiseConstantDecay([0, 1], [0.5, 0.25, 0.125])
    x = tt.Variable([1.0, -2.0], dtype=tt.float64)
    optimizer = tt.keras.optimizers.SGD(schedule)

    def step():
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum(x * tt.constant([1.0, 3.0], tt.float64))
        optimizer.apply_gradients([(tape.gradient(loss, x), x)])

    run = tt.function(step) if compiled else step
    values = []
    for _ in range(3):
        assert float(optimizer.learning_rate) == [0.5, 0.25, 0.125][len(values)]
        run()
        values.append(x.numpy().copy())
    rates = np.cumsum([0.5, 0.25, 0.125])
    np.testing.assert_array_equal(values, [[1 - r, -2 - 3 * r] for r in rates])
    with pytest.raises(TypeError, match="PiecewiseConstantDecay schedule, which cannot be set"):
        optimizer.learning_rate = 0.1


def test_a_users_schedule_and_adam_as_keras_steps_them():
    """A LearningRateSchedule subclass the user writes with ops, under Adam, eagerly and
    compiled alike: the same values."""

    class Halving(S.LearningRateSchedule):
        def __call__(self, step):
            return 0.1 * tt.pow(0.5, tt.cast(step, tt.float32))

        def get_config(self):
            return {}

    def train(compiled):
        x = tt.Variable([1.0, -2.0, 3.0])
        optimizer = tt.keras.optimizers.Adam(Halving())

        def step():
            with tt.GradientTape() as tape:
                loss = tt.reduce_sum(x * x)
            optimizer.apply_gradients([(tape.gradient(loss, x), x)])

        run = tt.function(step) if compiled else step
        for _ in range(4):
            run()
        return x.numpy()

    eager = train(False)
    np.testing.assert_allclose(train(True), eager, rtol=1e-6)
    # Adam's first steps move each value by about the rate: 0.1 + 0.05 + 0.025 + 0.0125
    np.testing.assert_allclose(np.abs(eager), np.abs([1.0, -2.0, 3.0]) - 0.1875, atol=1e-3)


def test_a_model_compiled_with_a_schedule_saves_and_loads_it(tmp_path):
    """model.save writes the schedule as Keras does (its class and config in the
    optimizer's learning_rate, no learning-rate variable among the optimizer's), and
    load_model gives an optimizer stepping on the same schedule from the same count."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 3)).astype(np.float32)
    y = rng.standard_normal((16, 1)).astype(np.float32)
    model = tt.keras.Sequential([tt.keras.Input((3,)), tt.keras.layers.Dense(1)])
    schedule = S.ExponentialDecay(0.05, decay_steps=3, decay_rate=0.5, staircase=True)
    model.compile(optimizer=tt.keras.optimizers.Adam(schedule), loss="mse")
    model.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    path = str(tmp_path / "scheduled.keras")
    model.save(path)
    loaded = tt.keras.models.load_model(path)
    optimizer = loaded.optimizer
    assert isinstance(optimizer._schedule, S.ExponentialDecay)
    assert optimizer._schedule.get_config() == schedule.get_config()
    assert int(optimizer.iterations.numpy()) == 4
    assert float(optimizer.learning_rate) == float(schedule(4)) == np.float32(0.025)
    model.fit(x, y, epochs=1, batch_size=8, verbose=0, shuffle=False)
    loaded.fit(x, y, epochs=1, batch_size=8, verbose=0, shuffle=False)
    for a, b in zip(model.get_weights(), loaded.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6)
