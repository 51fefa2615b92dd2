"""`tt.random.experimental`: TensorFlow's experimental random functions that tracer has (the
stateless seed functions, and the Generator's).

>>> tt.random.experimental.stateless_split([1, 2], num=2).shape
TensorShape([2, 2])
"""

from tracer.random_generator import (  # noqa: F401 (tt.random.experimental's own)
    Generator,
    get_global_generator,
    set_global_generator,
)
from tracer.random_stateless import stateless_fold_in, stateless_split  # noqa: F401
