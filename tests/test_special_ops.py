"""tf.math's special functions (tracer/ops/special_ops.py) against TensorFlow 2.21: values
and gradients eagerly, by the interpreter and compiled to C, against finite differences in
float64 to several orders, and TensorFlow's domain rules (poles, infinities, NaN).

REFERENCE holds TensorFlow 2.21's printed values (`repr` of its float64 and float32 results)
of tf.math.<name>(*inputs) and of its GradientTape gradient in the last input, at the
points given. tracer computes every function in double (float32 rounded once), TensorFlow
float32 in float: float32 compares to a few of its ulps, with an absolute floor for the
gradients that cancel (i0e' = i1e - sign(x) i0e, digamma at its root). TF_DIFFERS names the
points where TensorFlow's own value is off (what tracer gives instead, and why); TensorFlow's
CPU kernels also flush subnormal results to zero (zeta(2, 1e300) is 1e-300 here, 0 there)."""

import math

import numpy as np
import pytest

import tracer as tt
from tests.gradcheck import check_first_order, check_second_order

BACKENDS = [None, "c", "interpreter"]  # None: eager
nan, inf = math.nan, math.inf

REFERENCE = {
    ("lgamma", "float64"): (
        [
            [
                0.5,
                1.0,
                1.999999999999,
                2.5,
                10.3,
                171.6,
                -0.5,
                -2.5,
                1e-300,
                1e300,
                0.0,
                -1.0,
                -inf,
                inf,
                nan,
            ]
        ],
        [
            0.5723649429247001,
            0.0,
            -4.2282192087173953e-13,
            0.2846828704729192,
            13.482036786138355,
            709.6573587630563,
            1.2655121234846454,
            -0.05624371649767407,
            690.7755278982137,
            6.897755278982137e302,
            inf,
            inf,
            inf,
            inf,
            nan,
        ],
        [
            -1.9635100260214227,
            -0.5772156649015323,
            0.4227843350978222,
            0.7031566406452434,
            2.2828154464391224,
            5.1422496041643715,
            0.03648997397857645,
            1.1031566406452433,
            -9.999999999999999e299,
            690.7755278982137,
            nan,
            nan,
            nan,
            inf,
            nan,
        ],
    ),
    ("lgamma", "float32"): (
        [
            [
                0.5,
                1.0,
                2.0,
                2.5,
                10.300000190734863,
                171.60000610351562,
                -0.5,
                -2.5,
                0.0,
                inf,
                0.0,
                -1.0,
                -inf,
                inf,
                nan,
            ]
        ],
        [
            0.5723649263381958,
            0.0,
            0.0,
            0.28468286991119385,
            13.482038497924805,
            709.6574096679688,
            1.2655121088027954,
            -0.056243713945150375,
            inf,
            inf,
            inf,
            inf,
            inf,
            inf,
            nan,
        ],
        [
            -1.9635107517242432,
            -0.5772159099578857,
            0.4227842092514038,
            0.7031568288803101,
            2.282815456390381,
            5.142249584197998,
            0.03648996353149414,
            1.1031568050384521,
            nan,
            inf,
            nan,
            nan,
            nan,
            inf,
            nan,
        ],
    ),
    ("digamma", "float64"): (
        [
            [
                0.1,
                1.0,
                1.4616321449683622,
                3.7,
                -0.5,
                100.0,
                1e-08,
                -1e-10,
                1e300,
                0.0,
                -0.0,
                -1.0,
                -2.0,
                -inf,
                inf,
                nan,
            ]
        ],
        [
            -10.423754940411076,
            -0.5772156649015323,
            -4.440892098500626e-16,
            1.167153539361511,
            0.03648997397857645,
            4.600161852738088,
            -100000000.57721566,
            9999999999.422785,
            690.7755278982137,
            nan,
            nan,
            nan,
            nan,
            nan,
            inf,
            nan,
        ],
        [
            101.43329915079275,
            1.6449340668482266,
            0.9676722454476214,
            0.31003785767003833,
            8.934802200544679,
            0.010050166663333573,
            1e16,
            1e20,
            0.0,
            inf,
            inf,
            inf,
            inf,
            inf,
            0.0,
            nan,
        ],
    ),
    ("digamma", "float32"): (
        [
            [
                0.10000000149011612,
                1.0,
                1.4616321325302124,
                3.700000047683716,
                -0.5,
                100.0,
                9.99999993922529e-09,
                -1.000000013351432e-10,
                inf,
                0.0,
                -0.0,
                -1.0,
                -2.0,
                -inf,
                inf,
                nan,
            ]
        ],
        [
            -10.423754692077637,
            -0.5772159099578857,
            0.0,
            1.1671535968780518,
            0.03648996353149414,
            4.600162029266357,
            -100000000.0,
            10000000000.0,
            inf,
            nan,
            nan,
            nan,
            nan,
            nan,
            inf,
            nan,
        ],
        [
            101.43330383300781,
            1.644934058189392,
            0.9676722884178162,
            0.31003785133361816,
            8.934802055358887,
            0.010050167329609394,
            1.0000000272564224e16,
            9.999999320799471e19,
            0.0,
            inf,
            inf,
            inf,
            inf,
            inf,
            0.0,
            nan,
        ],
    ),
    ("polygamma", "float64"): (
        [
            [0.0, 1.0, 2.0, 3.0, 1.0, 4.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 3.0, 1.0],
            [0.5, 1.0, 2.0, 5.0, 30.0, 0.25, -2.5, -7.3, 1.0, 1.0, 0.0, 0.0, inf, nan],
        ],
        [
            -1.9635100260214227,
            1.6449340668482266,
            -0.4041138063191886,
            0.02142782819275508,
            0.033895060357739946,
            -24584.37538863795,
            9.539246644989124,
            68.8211740635903,
            nan,
            nan,
            inf,
            nan,
            0.0,
            nan,
        ],
        [
            4.93480220054468,
            -2.404113806319188,
            0.4939394022668293,
            -0.0140631913421128,
            -0.0011487652037285997,
            491552.51376768114,
            -0.1082040516417282,
            769.0167339816826,
            nan,
            -0.5772156649015323,
            nan,
            inf,
            -0.0,
            nan,
        ],
    ),
    ("polygamma", "float32"): (
        [
            [0.0, 1.0, 2.0, 3.0, 1.0, 4.0, 1.0, 2.0, 0.5, -1.0, 1.0, 2.0, 3.0, 1.0],
            [
                0.5,
                1.0,
                2.0,
                5.0,
                30.0,
                0.25,
                -2.5,
                -7.300000190734863,
                1.0,
                1.0,
                0.0,
                0.0,
                inf,
                nan,
            ],
        ],
        [
            -1.9635107517242432,
            1.644934058189392,
            -0.4041138291358948,
            0.021427828818559647,
            0.033895060420036316,
            -24584.373046875,
            9.539246559143066,
            70.68296813964844,
            nan,
            nan,
            inf,
            nan,
            0.0,
            nan,
        ],
        [
            4.934802055358887,
            -2.404114007949829,
            0.4939393997192383,
            -0.014063190668821335,
            -0.001148765324614942,
            491552.5625,
            -0.10820415616035461,
            740.2036743164062,
            nan,
            -0.5772159099578857,
            nan,
            inf,
            -0.0,
            nan,
        ],
    ),
    ("zeta", "float64"): (
        [
            [2.0, 3.0, 1.5, 4.0, 2.0, 1.0001, 30.0, 2.0, 4.0, 1.0, 0.5, 2.0, 3.0, 2.0, 2.0],
            [1.0, 1.0, 2.0, 0.5, 10.0, 1.0, 1.5, -1.5, -0.5, 1.0, 1.0, 0.0, -2.0, inf, nan],
        ],
        [
            1.6449340668482266,
            1.202056903159594,
            1.6123753486854886,
            16.23484850566707,
            0.10516633568168576,
            10000.57722294754,
            5.215096203815733e-06,
            9.379246644989124,
            32.23484850566707,
            inf,
            nan,
            inf,
            nan,
            0.0,
            nan,
        ],
        [
            -2.404113806319188,
            -3.2469697011334144,
            -0.5122308858763756,
            -128.57904163777798,
            -0.011049834970802069,
            -1.645004806000393,
            -0.00010430191485239782,
            -0.23620405164172825,
            -0.5790416377778709,
            -1.6449340668482266,
            -1.306187674342744,
            nan,
            -inf,
            -0.0,
            nan,
        ],
    ),
    ("zeta", "float32"): (
        [
            [
                2.0,
                3.0,
                1.5,
                4.0,
                2.0,
                1.000100016593933,
                30.0,
                2.0,
                4.0,
                1.0,
                0.5,
                2.0,
                3.0,
                2.0,
                2.0,
            ],
            [1.0, 1.0, 2.0, 0.5, 10.0, 1.0, 1.5, -1.5, -0.5, 1.0, 1.0, 0.0, -2.0, inf, nan],
        ],
        [
            1.644934058189392,
            1.2020570039749146,
            1.6123753786087036,
            16.23484992980957,
            0.10516632348299026,
            9998.91796875,
            5.215096280153375e-06,
            9.379246711730957,
            32.23484802246094,
            inf,
            nan,
            inf,
            nan,
            0.0,
            nan,
        ],
        [
            -2.404114007949829,
            -3.2469701766967773,
            -0.5122308731079102,
            -128.5790252685547,
            -0.011049835942685604,
            -1.6450046300888062,
            -0.00010430191468913108,
            -0.23620441555976868,
            -0.579041600227356,
            -1.644934058189392,
            -1.306187629699707,
            nan,
            -inf,
            -0.0,
            nan,
        ],
    ),
    ("ndtri", "float64"): (
        [[1e-300, 1e-10, 0.025, 0.3, 0.5, 0.6, 0.975, 0.9999999999, 0.0, 1.0, -0.1, 1.1, nan]],
        [
            -37.0470962993612,
            -6.361340902404056,
            -1.9599639845400545,
            -0.5244005127080409,
            0.0,
            0.2533471031357997,
            1.959963984540054,
            6.361340889697422,
            -inf,
            inf,
            nan,
            nan,
            nan,
        ],
        [
            2.6973044650428873e298,
            1535723698.1963818,
            17.110083080332725,
            2.876103659264292,
            2.5066282746310002,
            2.588376669140744,
            17.110083080332707,
            1535723574.061949,
            inf,
            inf,
            nan,
            nan,
            nan,
        ],
    ),
    ("ndtri", "float32"): (
        [
            [
                0.0,
                1.000000013351432e-10,
                0.02500000037252903,
                0.30000001192092896,
                0.5,
                0.6000000238418579,
                0.9750000238418579,
                1.0,
                0.0,
                1.0,
                -0.10000000149011612,
                1.100000023841858,
                nan,
            ]
        ],
        [
            -inf,
            -6.3613409996032715,
            -1.9599639177322388,
            -0.5244004726409912,
            0.0,
            0.25334715843200684,
            1.959964394569397,
            inf,
            -inf,
            inf,
            nan,
            nan,
            nan,
        ],
        [
            inf,
            1535724800.0,
            17.11008071899414,
            2.876103639602661,
            2.5066282749176025,
            2.588376522064209,
            17.110095977783203,
            inf,
            inf,
            inf,
            nan,
            nan,
            nan,
        ],
    ),
    ("erfinv", "float64"): (
        [[-0.99, -0.5, 0.0, 0.3, 0.9999, 1e-12, -1.0, 1.0, 1.5, nan]],
        [
            -1.8213863677184496,
            -0.4769362762044699,
            0.0,
            0.27246271472675443,
            2.75106390571208,
            8.863057115425172e-13,
            -inf,
            inf,
            nan,
            nan,
        ],
        [
            24.450876473746423,
            1.1125848189719496,
            0.8862269254527579,
            0.9545203588405493,
            1715.6895961763146,
            0.8862269254527579,
            inf,
            inf,
            nan,
            nan,
        ],
    ),
    ("erfinv", "float32"): (
        [
            [
                -0.9900000095367432,
                -0.5,
                0.0,
                0.30000001192092896,
                0.9998999834060669,
                9.999999960041972e-13,
                -1.0,
                1.0,
                1.5,
                nan,
            ]
        ],
        [
            -1.821386456489563,
            -0.47693631052970886,
            0.0,
            0.2724626660346985,
            2.75103497505188,
            0.0,
            -inf,
            inf,
            nan,
            nan,
        ],
        [
            24.450885772705078,
            1.1125849485397339,
            0.8862269520759583,
            0.9545203447341919,
            1715.4166259765625,
            0.8862269520759583,
            inf,
            inf,
            nan,
            nan,
        ],
    ),
    ("bessel_i0", "float64"): (
        [[-25.0, -3.0, -0.5, 0.0, 1e-05, 0.7, 4.0, 19.9, 20.1, 50.0, 500.0, 710.0, inf, -inf, nan]],
        [
            5774560606.4663105,
            4.880792585865024,
            1.0634833707413238,
            1.0,
            1.0000000000249998,
            1.1263030183068092,
            11.30192195213633,
            39513376.52006682,
            48017874.107136495,
            2.9325537838493355e20,
            2.5048094765700785e215,
            inf,
            nan,
            nan,
            nan,
        ],
        [
            -5657865129.878701,
            -3.9533702174026093,
            -0.2578943053908962,
            0.0,
            5.0000000000625e-06,
            0.37187967777700875,
            9.759465153704449,
            38507423.874862276,
            46807739.53302988,
            2.9030785901035566e20,
            2.5023034121760998e215,
            inf,
            nan,
            nan,
            nan,
        ],
    ),
    ("bessel_i0", "float32"): (
        [
            [
                -25.0,
                -3.0,
                -0.5,
                0.0,
                9.999999747378752e-06,
                0.699999988079071,
                4.0,
                19.899999618530273,
                20.100000381469727,
                50.0,
                500.0,
                710.0,
                inf,
                -inf,
                nan,
            ]
        ],
        [
            5774560256.0,
            4.88079309463501,
            1.063483476638794,
            1.0,
            1.0,
            1.1263028383255005,
            11.301920890808105,
            39513364.0,
            48017880.0,
            2.9325537298906664e20,
            inf,
            inf,
            nan,
            nan,
            nan,
        ],
        [
            -5657865728.0,
            -3.953371047973633,
            -0.2578943371772766,
            0.0,
            5.000000328436727e-06,
            0.3718796968460083,
            9.759467124938965,
            38507416.0,
            46807756.0,
            2.9030785499388287e20,
            inf,
            inf,
            nan,
            nan,
            nan,
        ],
    ),
    ("bessel_i0e", "float64"): (
        [[-25.0, -3.0, -0.5, 0.0, 1e-05, 0.7, 4.0, 19.9, 20.1, 50.0, 500.0, 710.0, inf, -inf, nan]],
        [
            0.0801967735474367,
            0.24300035416182536,
            0.6450352704491502,
            1.0,
            0.9999900000749995,
            0.5593055265070683,
            0.20700192122398672,
            0.09000858886438959,
            0.08955376362061343,
            0.056561626647454184,
            0.017845706500153168,
            0.014974675005024158,
            0.0,
            0.0,
            nan,
        ],
        [
            0.0016206602281439442,
            0.04617364086452452,
            0.4886144672642786,
            0.0,
            -0.9999850001249991,
            -0.37463554374432095,
            -0.028251081721551413,
            -0.0022914867326835064,
            -0.0022569117774118436,
            -0.000568502754558782,
            -1.7854647255115264e-05,
            -1.05492642399653e-05,
            0.0,
            0.0,
            nan,
        ],
    ),
    ("bessel_i0e", "float32"): (
        [
            [
                -25.0,
                -3.0,
                -0.5,
                0.0,
                9.999999747378752e-06,
                0.699999988079071,
                4.0,
                19.899999618530273,
                20.100000381469727,
                50.0,
                500.0,
                710.0,
                inf,
                -inf,
                nan,
            ]
        ],
        [
            0.08019676804542542,
            0.24300038814544678,
            0.6450353860855103,
            1.0,
            0.9999899864196777,
            0.5593054294586182,
            0.20700190961360931,
            0.09000859409570694,
            0.08955374360084534,
            0.05656162649393082,
            0.01784570701420307,
            0.01497467327862978,
            0.0,
            0.0,
            nan,
        ],
        [
            0.001620650291442871,
            0.04617363214492798,
            0.488614559173584,
            0.0,
            -0.9999849796295166,
            -0.3746354579925537,
            -0.028251037001609802,
            -0.002291478216648102,
            -0.0022568926215171814,
            -0.0005685016512870789,
            -1.7853453755378723e-05,
            -1.0547228157520294e-05,
            0.0,
            0.0,
            nan,
        ],
    ),
    ("bessel_i1", "float64"): (
        [[-25.0, -3.0, -0.5, 0.0, 1e-05, 0.7, 4.0, 19.9, 20.1, 50.0, 500.0, 710.0, inf, -inf, nan]],
        [
            -5657865129.878701,
            -3.9533702174026093,
            -0.2578943053908962,
            0.0,
            5.0000000000625e-06,
            0.37187967777700875,
            9.759465153704449,
            38507423.874862276,
            46807739.53302988,
            2.9030785901035566e20,
            2.5023034121760998e215,
            inf,
            nan,
            nan,
            nan,
        ],
        [
            5548246001.271162,
            3.563002513397487,
            0.5476947599595314,
            1.0,
            0.5000000000187499,
            0.5950463357682253,
            8.862055663710219,
            37578330.094194345,
            45689130.84678675,
            2.8744922120472645e20,
            2.4998048697457265e215,
            nan,
            nan,
            nan,
            nan,
        ],
    ),
    ("bessel_i1", "float32"): (
        [
            [
                -25.0,
                -3.0,
                -0.5,
                0.0,
                9.999999747378752e-06,
                0.699999988079071,
                4.0,
                19.899999618530273,
                20.100000381469727,
                50.0,
                500.0,
                710.0,
                inf,
                -inf,
                nan,
            ]
        ],
        [
            -5657865728.0,
            -3.953371047973633,
            -0.2578943371772766,
            0.0,
            5.000000328436727e-06,
            0.3718796968460083,
            9.759467124938965,
            38507416.0,
            46807756.0,
            2.9030785499388287e20,
            inf,
            inf,
            nan,
            nan,
            nan,
        ],
        [
            5548245504.0,
            3.563002586364746,
            0.5476948022842407,
            1.0,
            0.4999999403953552,
            0.5950461030006409,
            8.862053871154785,
            37578316.0,
            45689136.0,
            2.874492127225955e20,
            nan,
            nan,
            nan,
            nan,
            nan,
        ],
    ),
    ("bessel_i1e", "float64"): (
        [[-25.0, -3.0, -0.5, 0.0, 1e-05, 0.7, 4.0, 19.9, 20.1, 50.0, 500.0, 710.0, inf, -inf, nan]],
        [
            -0.07857611331929276,
            -0.19682671329730084,
            -0.15642080318487162,
            0.0,
            4.999950000312499e-06,
            0.18466998276274738,
            0.1787508395024353,
            0.08771710213170608,
            0.08729685184320159,
            0.0559931238928954,
            0.017827851852898053,
            0.014964125740784193,
            0.0,
            -0.0,
            nan,
        ],
        [
            -0.001522384304627769,
            -0.01943526356790909,
            0.17577286089453537,
            0.5,
            0.4999900000937494,
            0.11082128265468177,
            -0.016436628154057414,
            -0.002116407846799215,
            -0.0020862151799613676,
            -0.0005513597232991302,
            -1.780105645068225e-05,
            -1.0526969197758793e-05,
            0.0,
            0.0,
            nan,
        ],
    ),
    ("bessel_i1e", "float32"): (
        [
            [
                -25.0,
                -3.0,
                -0.5,
                0.0,
                9.999999747378752e-06,
                0.699999988079071,
                4.0,
                19.899999618530273,
                20.100000381469727,
                50.0,
                500.0,
                710.0,
                inf,
                -inf,
                nan,
            ]
        ],
        [
            -0.07857611775398254,
            -0.1968267560005188,
            -0.15642082691192627,
            0.0,
            4.999950306228129e-06,
            0.18466998636722565,
            0.1787508726119995,
            0.08771711587905884,
            0.08729685097932816,
            0.05599312484264374,
            0.017827853560447693,
            0.01496412605047226,
            0.0,
            -0.0,
            nan,
        ],
        [
            -0.0015223920345306396,
            -0.01943528652191162,
            0.17577290534973145,
            0.5,
            0.49998992681503296,
            0.11082115769386292,
            -0.016436681151390076,
            -0.0021164193749427795,
            -0.002086237072944641,
            -0.0005513615906238556,
            -1.7801299691200256e-05,
            -1.05295330286026e-05,
            0.0,
            0.0,
            nan,
        ],
    ),
}


# TensorFlow 2.21's igamma and igammac by dtype: a, x, P(a, x), Q(a, x), dP/dx, dP/da (the
# last rows the domain's edges: x = 0, a = 0, negatives, inf, NaN)
IGAMMA_REFERENCE = {
    "float64": (
        [
            0.5,
            2.0,
            5.0,
            30.0,
            0.001,
            3.0,
            1.0,
            100.0,
            1000.0,
            0.1,
            0.0,
            0.0,
            1.0,
            -1.0,
            1.0,
            inf,
            inf,
            nan,
            1.0,
            5.0,
        ],
        [
            0.3,
            2.5,
            3.0,
            40.0,
            0.5,
            1e-08,
            1.0,
            100.0,
            1100.0,
            1.1,
            0.0,
            1.0,
            0.0,
            1.0,
            -1.0,
            1.0,
            inf,
            1.0,
            inf,
            1e300,
        ],
        [
            0.5614219739190001,
            0.7127025048163542,
            0.184736755476228,
            0.9567713178482649,
            0.9994399333435292,
            1.6666666541666536e-25,
            0.6321205588285578,
            0.5132987982791313,
            0.9989406767460696,
            0.9793992217906599,
            0.0,
            nan,
            0.0,
            nan,
            nan,
            0.0,
            0.0,
            nan,
            1.0,
            1.0,
        ],
        [
            0.43857802608099994,
            0.28729749518364583,
            0.815263244523772,
            0.04322868215173514,
            0.0005600666564707923,
            1.0,
            0.36787944117144233,
            0.4867012017208352,
            0.001059323253930426,
            0.020600778209340125,
            nan,
            nan,
            1.0,
            nan,
            nan,
            1.0,
            0.0,
            nan,
            0.0,
            0.0,
        ],
        [
            0.763090578768186,
            0.205212496559747,
            0.1680313557415407,
            0.013849103220550498,
            0.0012129196984382426,
            4.9999999499999693e-17,
            0.3678794411714423,
            0.039860996809142034,
            0.00010537028564230988,
            0.032113081337465293,
            nan,
            0.0,
            nan,
            0.0,
            nan,
            nan,
            nan,
            nan,
            nan,
            0.0,
        ],
        [
            -0.7705703513753518,
            -0.24878306814492862,
            -0.13305676070192282,
            -0.01602517716800241,
            -0.5603594001080018,
            -3.279466377572171e-24,
            -0.43172971063489896,
            -0.039927497857784724,
            -0.00011048987784084353,
            -0.2256413049408991,
            0.0,
            nan,
            0.0,
            nan,
            nan,
            0.0,
            0.0,
            nan,
            -0.0,
            -0.0,
        ],
    ),
    "float32": (
        [
            0.5,
            2.0,
            5.0,
            30.0,
            0.0010000000474974513,
            3.0,
            1.0,
            100.0,
            1000.0,
            0.10000000149011612,
            0.0,
            0.0,
            1.0,
            -1.0,
            1.0,
            inf,
            inf,
            nan,
            1.0,
            5.0,
        ],
        [
            0.30000001192092896,
            2.5,
            3.0,
            40.0,
            0.5,
            9.99999993922529e-09,
            1.0,
            100.0,
            1100.0,
            1.100000023841858,
            0.0,
            1.0,
            0.0,
            1.0,
            -1.0,
            1.0,
            inf,
            1.0,
            inf,
            inf,
        ],
        [
            0.5614219903945923,
            0.7127025127410889,
            0.18473678827285767,
            0.9567715525627136,
            0.9994398355484009,
            1.6666678496579557e-25,
            0.6321204900741577,
            0.5132983326911926,
            0.9989404678344727,
            0.9793992042541504,
            0.0,
            nan,
            0.0,
            nan,
            nan,
            0.0,
            0.0,
            nan,
            1.0,
            1.0,
        ],
        [
            0.4385780096054077,
            0.28729748725891113,
            0.8152632117271423,
            0.043228473514318466,
            0.0005601644515991211,
            1.0,
            0.3678794503211975,
            0.4867008924484253,
            0.0010595129569992423,
            0.020600799471139908,
            nan,
            nan,
            1.0,
            nan,
            nan,
            1.0,
            0.0,
            nan,
            0.0,
            0.0,
        ],
        [
            0.7630906105041504,
            0.20521250367164612,
            0.16803136467933655,
            0.013849123381078243,
            0.0012129194801673293,
            5.000004385651103e-17,
            0.3678794503211975,
            0.03986123204231262,
            0.00010540348739596084,
            0.03211308270692825,
            nan,
            0.0,
            nan,
            0.0,
            nan,
            nan,
            nan,
            nan,
            nan,
            nan,
        ],
        [
            -0.7705703973770142,
            -0.24878306686878204,
            -0.13305675983428955,
            -0.016025099903345108,
            -0.5603591799736023,
            -3.2794687268333473e-24,
            -0.43172961473464966,
            -0.03992738574743271,
            -0.00011051117326132953,
            -0.22564153373241425,
            0.0,
            nan,
            0.0,
            nan,
            nan,
            0.0,
            0.0,
            nan,
            -0.0,
            -0.0,
        ],
    ),
}
# (dtype, result) -> {position: tracer's value} where TensorFlow's own value is off: its
# float32 Q(1000, 1100) loses three digits (its float64 value is 0.001059323253930426)
IGAMMA_DIFFERS = {("float32", 1): {8: 0.0010593232000246644}}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_igamma_and_igammac_and_both_gradients_are_tensorflows(dtype, backend):
    a, x, lower, upper, from_x, from_a = IGAMMA_REFERENCE[dtype]

    def run(a, x):
        with tt.GradientTape(persistent=True) as tape:
            tape.watch([a, x])
            p, q = tt.math.igamma(a, x), tt.math.igammac(a, x)
        dp_da, dp_dx = tape.gradient(p, [a, x])
        dq_da, dq_dx = tape.gradient(q, [a, x])
        return p, q, dp_dx, dp_da, dq_dx, dq_da

    got = _in(backend, run)(tt.constant(np.array(a, dtype)), tt.constant(np.array(x, dtype)))
    wants = [lower, upper, from_x, from_a, np.negative(from_x), np.negative(from_a)]
    for k, (value, want) in enumerate(zip(got, wants)):
        want = np.array(want)
        for position, ours in IGAMMA_DIFFERS.get((dtype, k), {}).items():
            want[position] = ours
        np.testing.assert_allclose(
            np.asarray(value, np.float64), want, **TOLERANCES[dtype], err_msg=f"result {k}"
        )


def test_igammas_gradients_match_finite_differences():
    a = np.array([0.3, 1.0, 2.5, 7.0, 20.0])
    x = np.array([0.4, 3.0, 2.0, 9.5, 15.0])  # both sides of x = a + 1
    # first order in both; second in x (the derivative in a is TensorFlow's first order only)
    check_first_order(tt.math.igamma, [a, x])
    check_first_order(tt.math.igammac, [a, x])
    for function in (tt.math.igamma, tt.math.igammac):
        check_second_order(lambda x: function(tt.constant(a), x), [x])


# (name, dtype, "value" or "gradient", position) -> tracer's value, where TensorFlow's differs
TF_DIFFERS = {
    # TensorFlow's _BesselI1Grad imputes 1.0 at x = 0; the derivative there is 1/2, as
    # TensorFlow's own bessel_i1e gradient gives
    ("bessel_i1", "float64", "gradient", 3): 0.5,
    ("bessel_i1", "float32", "gradient", 3): 0.5,
    # float32 polygamma(2, -7.3): TensorFlow's float sums of terms of both signs lose two
    # digits (its float64 value at -7.3 is 68.8211740635903)
    ("polygamma", "float32", "value", 7): 68.82102966308594,
    ("polygamma", "float32", "gradient", 7): 769.014892578125,
    # zeta(2, 1e300) = 1e-300, which TensorFlow's kernel flushes to zero
    ("digamma", "float64", "gradient", 8): 1e-300,
}
TOLERANCES = {"float64": dict(rtol=1e-13, atol=1e-15), "float32": dict(rtol=5e-6, atol=1e-7)}


def _in(backend, function):
    return function if backend is None else tt.function(function, backend=backend)


def _value_and_gradient(name):
    function = getattr(tt.math, name)

    def run(*xs):
        with tt.GradientTape() as tape:
            tape.watch(list(xs))
            y = function(*xs)
        return y, tape.gradient(y, xs[-1])

    return run


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(REFERENCE), ids="-".join)
def test_values_and_gradients_are_tensorflows(case, backend):
    name, dtype = case
    inputs, values, gradients = REFERENCE[case]
    xs = [tt.constant(np.array(x, dtype)) for x in inputs]
    y, g = _in(backend, _value_and_gradient(name))(*xs)
    assert y.dtype == g.dtype == tt.as_dtype(dtype)
    for kind, got, want in (("value", y, values), ("gradient", g, gradients)):
        want = np.array(want)
        for k in range(want.size):
            want[k] = TF_DIFFERS.get((name, dtype, kind, k), want[k])
        np.testing.assert_allclose(
            np.asarray(got, np.float64), want, **TOLERANCES[dtype], err_msg=f"{name} {kind}"
        )


@pytest.mark.parametrize("backend", BACKENDS)
def test_lbeta_reduces_the_last_axis_as_tensorflows(backend):
    x = tt.constant([[1.0, 2.0], [0.5, 0.5], [3.0, 4.0], [10.0, 0.1]], dtype=tt.float64)
    y, g = _in(backend, _value_and_gradient("lbeta"))(x)
    # TensorFlow 2.21's values and gradient
    want = [-0.6931471805599453, 1.1447298858494002, -4.094344562222101, 2.0270133931824397]
    np.testing.assert_allclose(y, want, rtol=1e-13)
    gradient = [-1.5, -0.5, -1.3862943611198904, -1.3862943611198904, -0.95]
    gradient += [-0.6166666666666667, -0.010461768027426821, -12.685969297505224]
    np.testing.assert_allclose(g, np.reshape(gradient, (4, 2)), rtol=1e-13)
    edges = tt.constant([[0.0, 1.0], [inf, 1.0], [-1.0, 2.0]], dtype=tt.float64)
    empty = tt.zeros((2, 0), dtype=tt.float64)
    run = _in(backend, lambda a, b: (tt.math.lbeta(a), tt.math.lbeta(b)))
    got_edges, got_empty = run(edges, empty)
    np.testing.assert_array_equal(got_edges, [inf, nan, inf])  # TensorFlow's
    np.testing.assert_array_equal(got_empty, [-inf, -inf])


# functions of one float64 tensor, their inputs: both sides of the poles, past the switch of
# the Bessel functions' methods at |x| = 20, into ndtri's and erfinv's tails
SMOOTH = {
    "lgamma": (tt.math.lgamma, [0.3, 1.5, 7.2, 40.0, -0.6, -3.3]),
    "digamma": (tt.math.digamma, [0.05, 1.46, 9.9, 10.1, -0.3, -5.7]),
    "zeta_in_q": (lambda q: tt.math.zeta(tt.constant(2.5, tt.float64), q), [0.2, 1.0, 9.5, 30.0]),
    "zeta_negative_q": (lambda q: tt.math.zeta(tt.constant(4.0, tt.float64), q), [-1.5, -7.3]),
    "polygamma": (
        lambda x: tt.math.polygamma(tt.constant([0.0, 1.0, 3.0, 5.0], tt.float64), x),
        [0.4, 2.0, 11.0, 100.0],
    ),
    "ndtri": (tt.math.ndtri, [0.003, 0.1, 0.5, 0.8, 0.99]),
    "erfinv": (tt.math.erfinv, [-0.95, -0.2, 0.0, 0.6, 0.99]),
    "bessel_i0": (tt.math.bessel_i0, [-21.0, -2.0, 0.0, 0.3, 19.5, 35.0]),
    "bessel_i0e": (tt.math.bessel_i0e, [-21.0, -2.0, 0.1, 19.5, 35.0]),
    "bessel_i1": (tt.math.bessel_i1, [-21.0, -2.0, 0.0, 0.3, 19.5, 35.0]),
    "bessel_i1e": (tt.math.bessel_i1e, [-21.0, -2.0, 0.1, 19.5, 35.0]),
    "lbeta": (tt.math.lbeta, [[0.4, 2.0, 3.5], [7.0, 0.8, 1.2]]),
}


@pytest.mark.parametrize("name", sorted(SMOOTH))
def test_first_and_second_derivatives_match_finite_differences(name):
    function, x = SMOOTH[name]
    check_first_order(function, [np.array(x)])
    check_second_order(function, [np.array(x)])


def _derivative(function, order):
    """x -> the `order`-th derivative of an elementwise `function`, by nested tapes."""
    if order == 0:
        return function

    inner = _derivative(function, order - 1)

    def run(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = inner(x)
        return tape.gradient(y, x)

    return run


@pytest.mark.parametrize("backend", BACKENDS)
def test_lgammas_derivatives_are_digamma_and_the_polygammas_to_the_fifth(backend):
    x = tt.constant([0.3, 2.5, 7.25, -1.5], dtype=tt.float64)
    for order in range(1, 6):
        got = _in(backend, _derivative(tt.math.lgamma, order))(x)
        want = tt.math.polygamma(tt.constant(order - 1.0, tt.float64), x)
        np.testing.assert_allclose(got, want, rtol=1e-12, err_msg=f"order {order}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_bessel_functions_derivatives_to_the_third_match_finite_differences(backend):
    # the third derivative of each, against central differences of the second
    x = np.array([-22.0, -3.0, 0.5, 4.0, 25.0])
    step = 1e-5
    for name in ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e"):
        second = _in(backend, _derivative(getattr(tt.math, name), 2))
        third = _in(backend, _derivative(getattr(tt.math, name), 3))
        plus, minus = second(tt.constant(x + step)), second(tt.constant(x - step))
        numeric = (np.asarray(plus) - np.asarray(minus)) / (2 * step)
        np.testing.assert_allclose(third(tt.constant(x)), numeric, rtol=1e-6, err_msg=name)


def test_the_order_of_zeta_and_polygamma_gets_no_gradient_as_in_tensorflow():
    s = tt.constant([2.0, 3.0], dtype=tt.float64)
    q = tt.constant([1.5, 2.5], dtype=tt.float64)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch([s, q])
        z = tt.math.zeta(s, q)
        p = tt.math.polygamma(s, q)
    assert tape.gradient(z, s) is None and tape.gradient(p, s) is None
    np.testing.assert_allclose(tape.gradient(z, q), -s * tt.math.zeta(s + 1, q), rtol=1e-15)
    np.testing.assert_allclose(tape.gradient(p, q), tt.math.polygamma(s + 1, q), rtol=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
def test_zeta_and_polygamma_broadcast_and_sum_their_gradient_back(backend):
    s = tt.constant([[2.0], [3.0], [4.5]], dtype=tt.float64)
    q = tt.constant([0.5, 1.0, 7.0, 12.0], dtype=tt.float64)

    def run(s, q):
        with tt.GradientTape() as tape:
            tape.watch(q)
            y = tt.math.zeta(s, q) + tt.math.polygamma(s - 1, q)
        return y, tape.gradient(y, q)

    y, g = _in(backend, run)(s, q)
    assert y.shape == (3, 4) and g.shape == (4,)
    np.testing.assert_allclose(float(y[0, 1]), math.pi**2 / 6 + math.pi**2 / 6, rtol=1e-15)


def test_the_bessel_functions_are_in_tf_math_special_too():
    x = tt.constant([0.5, -2.0], dtype=tt.float64)
    for name in ("bessel_i0", "bessel_i0e", "bessel_i1", "bessel_i1e"):
        np.testing.assert_array_equal(getattr(tt.math.special, name)(x), getattr(tt.math, name)(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_float16_is_computed_as_float32_and_rounded(backend):
    x = np.array([0.3, 1.7, 5.0], np.float16)
    names = ("lgamma", "digamma", "bessel_i0e", "bessel_i1", "ndtri")
    run = _in(
        backend, lambda x: [getattr(tt.math, n)(x * 0.1 if n == "ndtri" else x) for n in names]
    )
    wide = [
        getattr(tt.math, n)(x.astype(np.float32) * (np.float32(0.1) if n == "ndtri" else 1))
        for n in names
    ]
    for name, got, want in zip(names, run(tt.constant(x)), wide):
        assert got.dtype == tt.float16
        np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=1e-3, err_msg=name)


def test_integers_are_refused_as_tensorflow_refuses_them():
    for function in (tt.math.lgamma, tt.math.digamma, tt.math.ndtri, tt.math.bessel_i0e):
        with pytest.raises(TypeError):
            function(tt.constant([1, 2]))
    with pytest.raises(TypeError):
        tt.math.zeta(tt.constant([2, 3]), tt.constant([1, 1]))


def test_long_arrays_agree_with_the_compiled_c_to_a_few_ulps():
    # the eager kernels are vectorized numpy; the C helpers the same algorithms
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.uniform(-30, 60, 4000), rng.uniform(-1, 1, 1000) * 1e-3])
    p = rng.uniform(0, 1, 5000)
    s = rng.uniform(1.001, 40, 5000)
    functions = {
        "lgamma": lambda x, p, s: tt.math.lgamma(x),
        "digamma": lambda x, p, s: tt.math.digamma(x),
        "zeta": lambda x, p, s: tt.math.zeta(s, x),
        "ndtri": lambda x, p, s: tt.math.ndtri(p),
        "bessel_i0e": lambda x, p, s: tt.math.bessel_i0e(x),
        "bessel_i1e": lambda x, p, s: tt.math.bessel_i1e(x),
        "igamma": lambda x, p, s: tt.math.igamma(s, tt.abs(x)),
        "igammac": lambda x, p, s: tt.math.igammac(s, tt.abs(x)),
    }
    args = [tt.constant(a) for a in (x, p, s)]
    for name, function in functions.items():
        eager = np.asarray(function(*args))
        compiled = np.asarray(tt.function(function, backend="c")(*args))
        np.testing.assert_allclose(compiled, eager, rtol=4e-15, atol=1e-300, err_msg=name)
