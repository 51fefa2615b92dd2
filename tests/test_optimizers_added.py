"""Ftrl, the CosineDecayRestarts schedule and the optimizers' moving average of the variables
(`use_ema`, `ema_momentum`, `ema_overwrite_frequency`, `finalize_variable_values`), against
the values Keras 3 on TensorFlow 2.21 prints for the same programs (written with
`import tensorflow as tf, keras`), eagerly and inside `tt.function` on both backends."""

import doctest
import re

import numpy as np
import pytest

import tracer as tt
from tracer import optimizers as optimizers_module
from tracer import schedules as schedules_module

optimizers = tt.keras.optimizers
schedules = optimizers.schedules

MODES = ["eager", "c", "interpreter"]
X = np.array([[1.0, 2.0], [-1.0, 0.5], [2.0, -1.0]], np.float32)

MAKERS = {
    "ftrl": lambda: optimizers.Ftrl(0.1),
    "ftrl_all_options": lambda: optimizers.Ftrl(
        0.1,
        learning_rate_power=-0.7,
        initial_accumulator_value=0.2,
        l1_regularization_strength=0.05,
        l2_regularization_strength=0.1,
        l2_shrinkage_regularization_strength=0.02,
        beta=0.3,
    ),
    "ftrl_l1_clipnorm_decay": lambda: optimizers.Ftrl(
        0.2, l1_regularization_strength=1.0, clipnorm=1.0, weight_decay=0.05
    ),
    "ftrl_power_0_restarts": lambda: optimizers.Ftrl(
        schedules.CosineDecayRestarts(0.3, 2, t_mul=1.5, m_mul=0.8, alpha=0.1),
        learning_rate_power=0.0,
        initial_accumulator_value=0.0,
        beta=0.5,
    ),
    "sgd_restarts": lambda: optimizers.SGD(
        schedules.CosineDecayRestarts(0.1, 2, t_mul=2.0, m_mul=0.5, alpha=0.2)
    ),
    "adam_ema": lambda: optimizers.Adam(0.1, use_ema=True),
    "sgd_ema_overwrite_2": lambda: optimizers.SGD(
        0.05, momentum=0.9, use_ema=True, ema_momentum=0.5, ema_overwrite_frequency=2
    ),
    "ftrl_ema_overwrite_3": lambda: optimizers.Ftrl(
        0.1, use_ema=True, ema_momentum=0.8, ema_overwrite_frequency=3
    ),
}

# Keras 3 on TF 2.21's printed values: the weights and bias after five steps of
# sum((X w + b)^2), then (with use_ema) their moving averages
KERAS = {
    "ftrl": [
        [[0.6796643137931824, -1.6628814935684204], [0.21383817493915558, 2.656623601913452]],
        [0.008575807325541973, -0.2119390368461609],
    ],
    "ftrl_all_options": [
        [[0.8827797770500183, -1.9135656356811523], [0.3346690535545349, 2.917231798171997]],
        [0.16750013828277588, -0.1698300540447235],
    ],
    "ftrl_l1_clipnorm_decay": [
        [[0.0, -0.20727317035198212], [0.0, 0.8929725885391235]],
        [0.0, -0.28485193848609924],
    ],
    "ftrl_power_0_restarts": [
        [[-0.7620323896408081, 1.0066132545471191], [-0.17513735592365265, -0.17611807584762573]],
        [-0.4373233914375305, 0.4127698242664337],
    ],
    "sgd_restarts": [
        [[0.0514608770608902, 0.06686834245920181], [0.04799691587686539, 0.049610208719968796]],
        [-0.10945557802915573, -0.1321963369846344],
    ],
    "adam_ema": [
        [[0.5104387402534485, -1.5022947788238525], [0.041974447667598724, 2.502140998840332]],
        [-0.17798128724098206, -0.21055617928504944],
        [[0.8902801275253296, -1.890138864517212], [0.39079320430755615, 2.890138864517212]],
        [0.19047147035598755, -0.20115604996681213],
    ],
    "sgd_ema_overwrite_2": [
        [[-0.18678957223892212, 0.7632703185081482], [-0.1360277682542801, -1.4140260219573975]],
        [-0.14087435603141785, -0.25558072328567505],
        [[-0.35231855511665344, 1.0959328413009644], [-0.16572338342666626, -1.5658258199691772]],
        [-0.30551403760910034, -0.25000521540641785],
    ],
    "ftrl_ema_overwrite_3": [
        [[0.6854106187820435, -1.6728079319000244], [0.21164998412132263, 2.666933536529541]],
        [0.010629179887473583, -0.2145491987466812],
        [[0.7911362051963806, -1.7872616052627563], [0.29814600944519043, 2.7815334796905518]],
        [0.10831549763679504, -0.17055872082710266],
    ],
}


def _run(step, mode):
    return step if mode == "eager" else tt.function(step, backend=mode)


def _steps(optimizer, mode, count=5):
    """`count` steps of sum((X w + b)^2); the variables, then the averages with use_ema."""
    w = tt.Variable(np.array([[1.0, -2.0], [0.5, 3.0]], np.float32))
    b = tt.Variable(np.array([0.3, -0.1], np.float32))

    def step(x):
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum((tt.matmul(x, w) + b) ** 2)
        optimizer.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))

    run = _run(step, mode)
    for _ in range(count):
        run(tt.constant(X))
    values = [w.numpy(), b.numpy()]
    if optimizer.use_ema:
        values += [optimizer.get_slot(v, "average").numpy() for v in (w, b)]
    return values


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(MAKERS))
def test_five_steps_as_keras(name, mode):
    # compiled C differs from Keras by at most 3e-7 here (its pow and cos)
    got = _steps(MAKERS[name](), mode)
    assert len(got) == len(KERAS[name])
    for value, expected in zip(got, KERAS[name]):
        np.testing.assert_allclose(value, expected, atol=1e-6, rtol=0)


def _gathered(v, indices):
    with tt.GradientTape() as tape:
        loss = tt.reduce_sum(tt.gather(v, indices) ** 2)
    gradient = tape.gradient(loss, v)
    assert isinstance(gradient, tt.IndexedSlices)
    return gradient


# Keras 3 on TF 2.21's printed values: the variable, accumulator and linear after three
# steps on sum(gather(v, indices)^2) (a row gathered twice squares each slice: row 2's
# accumulator grows by 2 * (2 v)^2, not (4 v)^2; a row without a slice is set from its
# linear, to 0 at the first step)
SPARSE = {
    "plain": (
        {},
        [[0.0, 0.05340195074677467], [0.0, 0.0], [0.12130305171012878, 0.3154903054237366]],
        [[0.1, 0.7250526547431946], [0.1, 0.1], [8.23862361907959, 13.354625701904297]],
        [[0.0, -0.09094354510307312], [0.0, 0.0], [-0.6963523626327515, -2.305854320526123]],
    ),
    "l1_shrinkage": (
        {"l1_regularization_strength": 0.1, "l2_shrinkage_regularization_strength": 0.05},
        [[0.0, 0.0], [0.0, 0.0], [0.09392723441123962, 0.28238406777381897]],
        [[0.1, 0.5858484506607056], [0.1, 0.1], [8.188055992126465, 13.230376243591309]],
        [[0.0, -0.03821021318435669], [0.05, 0.075], [-0.6375414133071899, -2.154263973236084]],
    ),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("case", sorted(SPARSE))
def test_ftrl_with_indexed_slices_as_keras(case, mode):
    options, variable, accumulator, linear = SPARSE[case]
    v = tt.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 4)
    optimizer = optimizers.Ftrl(0.5, **options)
    run = _run(lambda indices: optimizer.apply_gradients([(_gathered(v, indices), v)]), mode)
    for indices in ([0, 2, 2], [1, 1, 0], [2]):
        run(tt.constant(indices))
    np.testing.assert_allclose(v.numpy(), variable, atol=1e-6, rtol=0)
    for slot, expected in (("accumulator", accumulator), ("linear", linear)):
        np.testing.assert_allclose(optimizer.get_slot(v, slot).numpy(), expected, rtol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_the_first_update_sets_the_average_to_the_variable(mode):
    # Keras 3 on TF 2.21's printed values of the variable and its average after steps 1, 2
    v = tt.Variable([1.0, -2.0])
    adam = optimizers.Adam(0.1, use_ema=True)
    run = _run(lambda g: adam.apply_gradients([(g, v)]), mode)
    run(tt.constant([1.0, 0.5]))
    np.testing.assert_allclose(v.numpy(), [0.9000009894371033, -2.099998712539673], rtol=1e-7)
    np.testing.assert_array_equal(adam.get_slot(v, "average").numpy(), v.numpy())
    run(tt.constant([0.1, -3.0]))
    np.testing.assert_allclose(v.numpy(), [0.8259208798408508, -2.037607431411743], rtol=1e-7)
    np.testing.assert_allclose(
        adam.get_slot(v, "average").numpy(), [0.8992601633071899, -2.099374771118164], rtol=1e-7
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_variable_without_a_gradient_is_averaged_too(mode):
    """Keras averages every variable it is given, one whose gradient is None too (its
    average becomes its value at the first update and stays there): TF 2.21's values after
    four steps of Adam(0.1, use_ema=True, ema_momentum=0.9)."""
    w = tt.Variable(np.array([[1.0, -2.0], [0.5, 3.0]], np.float32))
    b = tt.Variable(np.array([0.3, -0.1], np.float32))
    unused = tt.Variable(np.array([0.7], np.float32))
    adam = optimizers.Adam(0.1, use_ema=True, ema_momentum=0.9)

    def step(x):
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum((tt.matmul(x, w) + b) ** 2)
        adam.apply_gradients(zip(tape.gradient(loss, [w, b, unused]), [w, b, unused]))

    run = _run(step, mode)
    for _ in range(4):
        run(tt.constant(X))
    expected = [
        (w, [[0.8446370363235474, -1.8440557718276978], [0.3465699553489685, 2.844071865081787]]),
        (b, [0.14537404477596283, -0.2094578742980957]),
        (unused, [0.699999988079071]),
    ]
    for variable, average in expected:
        np.testing.assert_allclose(adam.get_slot(variable, "average").numpy(), average, atol=1e-6)
    np.testing.assert_allclose(b.numpy(), [-0.0896337702870369, -0.21980153024196625], atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_finalize_variable_values_sets_the_averages(mode):
    # Keras 3 on TF 2.21's printed values before and after finalize_variable_values
    v = tt.Variable([1.0, -2.0])
    rms = optimizers.RMSprop(0.1, use_ema=True, ema_momentum=0.6)
    run = _run(lambda g: rms.apply_gradients([(g, v)]), mode)
    for gradient in ([1.0, 0.5], [0.1, -3.0], [2.0, 0.0]):
        run(tt.constant(gradient))
    np.testing.assert_allclose(v.numpy(), [0.36251726746559143, -2.0038797855377197], rtol=1e-6)
    _run(lambda: rms.finalize_variable_values([v]), mode)()
    np.testing.assert_allclose(v.numpy(), [0.5473144054412842, -2.1163249015808105], rtol=1e-6)
    plain = optimizers.SGD(0.1)
    plain.apply_gradients([(tt.constant([1.0, 1.0]), v)])
    before = v.numpy()
    plain.finalize_variable_values([v])  # without use_ema: nothing
    np.testing.assert_array_equal(v.numpy(), before)
    with pytest.raises(ValueError, match="has no moving average"):
        rms.finalize_variable_values([tt.Variable([0.0])])


def test_the_averages_are_optimizer_variables_made_first():
    v = tt.Variable([1.0, 2.0])
    ftrl = optimizers.Ftrl(0.1, use_ema=True)
    ftrl.apply_gradients([(tt.constant([1.0, 1.0]), v)])
    names = [re.sub(r"^ftrl(_\d+)?/", "", variable.name) for variable in ftrl.variables]
    prefix = v.name.split(":")[0]
    assert names[2:] == [f"{prefix}/{slot}:0" for slot in ("average", "accumulator", "linear")]
    assert len(optimizers.Ftrl(0.1).variables) == 2  # no slot before the first update


# Keras 3 on TF 2.21's printed rates at these steps
RESTART_STEPS = [0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 13, 20, 21, 30]
RESTARTS = [
    (
        {"initial_learning_rate": 0.1, "first_decay_steps": 3},
        [0.10000000149011612, 0.07500000298023224, 0.02499999664723873, 0.10000000149011612,
         0.09330127388238907, 0.07500000298023224, 0.025000005960464478, 0.006698724813759327,
         0.10000000149011612, 0.09829629212617874, 0.07499999552965164, 0.001703709363937378,
         0.10000000149011612, 0.0691341683268547],
    ),
    (
        {"initial_learning_rate": 0.1, "first_decay_steps": 3, "t_mul": 1.0, "m_mul": 0.5,
         "alpha": 0.1},
        [0.10000000149011612, 0.07750000059604645, 0.032499995082616806, 0.055000003427267075,
         0.04374999925494194, 0.021250003948807716, 0.026875002309679985, 0.015624997206032276,
         0.021250000223517418, 0.018437502905726433, 0.014218749478459358, 0.010351563803851604,
         0.010703125037252903, 0.010087891481816769],
    ),
    (
        {"initial_learning_rate": 1.0, "first_decay_steps": 4, "t_mul": 1.5, "m_mul": 0.9,
         "alpha": 0.05},
        [1.0, 0.8608757257461548, 0.5249999761581421, 0.18912428617477417, 0.9049999713897705,
         0.8477258682250977, 0.47749996185302734, 0.26374995708465576, 0.1072741448879242,
         0.8194999694824219, 0.6271249651908875, 0.7332159876823425, 0.7057175636291504,
         0.10696642100811005],
    ),
    (  # restarts at steps 1, 4 and 13: the floor of log(1 + 2 step) / log(3) at 1 and 2
        {"initial_learning_rate": 0.5, "first_decay_steps": 1, "t_mul": 3.0},
        [0.5, 0.5, 0.375, 0.1249999850988388, 0.5, 0.4849231541156769, 0.375,
         0.2934120297431946, 0.20658792555332184, 0.1249999850988388, 0.5, 0.4215604066848755,
         0.39928966760635376, 0.15098005533218384],
    ),
]  # fmt: skip


@pytest.mark.parametrize("mode", ["eager", "c"])
@pytest.mark.parametrize("options, expected", RESTARTS, ids=["sgdr", "t1", "t1.5", "t3"])
def test_cosine_decay_restarts_as_keras(options, expected, mode):
    schedule = schedules.CosineDecayRestarts(**options)
    rate = _run(schedule, mode)
    got = [rate(tt.constant(step, tt.int64)) for step in RESTART_STEPS]
    assert all(each.dtype == tt.float32 for each in got)
    np.testing.assert_allclose([float(each) for each in got], expected, rtol=1e-6)


def test_cosine_decay_restarts_config_as_keras():
    # the config Keras 3 on TF 2.21 prints for CosineDecayRestarts(0.1, 5)
    schedule = schedules.CosineDecayRestarts(0.1, 5)
    config = {
        "initial_learning_rate": 0.1,
        "first_decay_steps": 5,
        "t_mul": 2.0,
        "m_mul": 1.0,
        "alpha": 0.0,
        "name": "SGDRDecay",
    }
    assert list(schedule.get_config().items()) == list(config.items())
    again = schedules.CosineDecayRestarts.from_config({**config, "m_mul": 0.5})
    assert again.get_config()["m_mul"] == 0.5 and float(again(7)) == float(schedule(7)) / 2
    sgd = optimizers.SGD.from_config(optimizers.SGD(schedule).get_config())
    assert sgd._schedule.get_config() == config
    with pytest.raises(ValueError, match="first_decay_steps must be > 0"):
        schedules.CosineDecayRestarts(0.1, 0)


def test_ftrl_and_ema_configs_as_keras():
    # the config Keras 3 on TF 2.21 prints (its name made unique in the process)
    ftrl = optimizers.Ftrl(
        0.1, learning_rate_power=-0.7, beta=0.3, use_ema=True, ema_overwrite_frequency=3
    )
    config = ftrl.get_config()
    assert re.fullmatch(r"ftrl(_\d+)?", config.pop("name"))
    assert list(config.items()) == [
        ("learning_rate", 0.10000000149011612),
        ("weight_decay", None),
        ("clipnorm", None),
        ("global_clipnorm", None),
        ("clipvalue", None),
        ("use_ema", True),
        ("ema_momentum", 0.99),
        ("ema_overwrite_frequency", 3),
        ("loss_scale_factor", None),
        ("gradient_accumulation_steps", None),
        ("learning_rate_power", -0.7),
        ("initial_accumulator_value", 0.1),
        ("l1_regularization_strength", 0.0),
        ("l2_regularization_strength", 0.0),
        ("l2_shrinkage_regularization_strength", 0.0),
        ("beta", 0.3),
    ]
    again = optimizers.Ftrl.from_config(ftrl.get_config())
    assert again.use_ema and again.ema_overwrite_frequency == 3 and again.beta == 0.3
    assert isinstance(optimizers.get("Ftrl"), optimizers.Ftrl)
    adam = optimizers.Adam.from_config({**optimizers.Adam().get_config(), "ema_momentum": 0.5})
    assert adam.get_config()["ema_momentum"] == 0.5
    with pytest.raises(NotImplementedError, match="loss_scale_factor=2.0"):
        optimizers.Adam.from_config({**adam.get_config(), "loss_scale_factor": 2.0})


@pytest.mark.parametrize(
    "options, message",
    [
        ({"learning_rate_power": 0.5}, "learning_rate_power must be <= 0"),
        ({"initial_accumulator_value": -0.1}, "initial_accumulator_value must be >= 0"),
        ({"l1_regularization_strength": -1.0}, "l1_regularization_strength must be >= 0"),
        ({"l2_regularization_strength": -1.0}, "l2_regularization_strength must be >= 0"),
        (
            {"l2_shrinkage_regularization_strength": -1.0},
            "l2_shrinkage_regularization_strength must be >= 0",
        ),
        ({"use_ema": True, "ema_momentum": 1.5}, "ema_momentum must be in"),
        ({"use_ema": True, "ema_overwrite_frequency": 0.5}, "ema_overwrite_frequency must be"),
    ],
)
def test_options_are_checked_as_keras(options, message):
    with pytest.raises(ValueError, match=message):
        optimizers.Ftrl(**options)


@pytest.mark.parametrize("module", [optimizers_module, schedules_module], ids=lambda m: m.__name__)
def test_the_examples_in_the_docstrings_run(module):
    result = doctest.testmod(module, extraglobs={"tt": tt}, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
