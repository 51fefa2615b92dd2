"""`tt.config`: library-wide switches.

`strict_gradients(True)` (or TRACER_STRICT_GRADIENTS=1 in the environment) makes a None
gradient raise UnconnectedGradientError with tape.explain's reason, instead of returning
None (unless `unconnected_gradients='zero'` asked for zeros).

`run_functions_eagerly(True)`, as TensorFlow's: every `tt.function` runs its Python function
as it is, op by op, instead of its traced and compiled version (for debugging with print
and pdb); `functions_run_eagerly()` says whether it is on.

`list_physical_devices(device_type=None)` and `list_logical_devices` name the one device
tracer computes on, the CPU (no GPU: `list_physical_devices("GPU")` is empty), as
TensorFlow's do on a machine without one.

`threading.set_intra_op_parallelism_threads(n)`, as TensorFlow's: the threads of tracer's
pool, which runs the parallel loops and matrix products of compiled and eager code alike
(docs/threads.md); 0 for the default (the cores this process may use, or OMP_NUM_THREADS).
Unlike TensorFlow's, it may be called at any time: the next parallel loop uses it.
`set_inter_op_parallelism_threads(n)` is recorded and read back, and changes nothing:
tracer runs one op, and one compiled function's steps, at a time.
"""

import os

from runtime import native, thread_pools

MAX_THREADS = 0xFFFF  # the pool's bound (runtime/thread_pool.c)


class _Settings:
    strict_gradients = os.environ.get("TRACER_STRICT_GRADIENTS", "") not in ("", "0")
    run_functions_eagerly = False


settings = _Settings()


def strict_gradients(enabled=True):
    settings.strict_gradients = bool(enabled)


def run_functions_eagerly(run_eagerly):
    settings.run_functions_eagerly = bool(run_eagerly)


def functions_run_eagerly():
    return settings.run_functions_eagerly


def _thread_count(num_threads, name):
    if isinstance(num_threads, bool) or not isinstance(num_threads, int):
        raise TypeError(f"{name}: num_threads must be an int, not {type(num_threads).__name__}")
    if not 0 <= num_threads <= MAX_THREADS:
        raise ValueError(
            f"{name}: num_threads must be 0 (the default) to {MAX_THREADS}, not {num_threads}"
        )
    return num_threads


class _Threading:
    """`tt.config.threading` (the module's docstring says what each does)."""

    inter_op_threads = 0

    @staticmethod
    def set_intra_op_parallelism_threads(num_threads):
        name = "set_intra_op_parallelism_threads"
        thread_pools.choose_threads(_thread_count(num_threads, name))
        native.configure_pool()

    @staticmethod
    def get_intra_op_parallelism_threads():
        return thread_pools.chosen_threads()

    @classmethod
    def set_inter_op_parallelism_threads(cls, num_threads):
        cls.inter_op_threads = _thread_count(num_threads, "set_inter_op_parallelism_threads")

    @classmethod
    def get_inter_op_parallelism_threads(cls):
        return cls.inter_op_threads


threading = _Threading()


class PhysicalDevice(tuple):
    """TensorFlow's PhysicalDevice: (name, device_type)."""

    __slots__ = ()

    def __new__(cls, name, device_type):
        return super().__new__(cls, (name, device_type))

    name = property(lambda self: self[0])
    device_type = property(lambda self: self[1])

    def __repr__(self):
        return f"PhysicalDevice(name={self.name!r}, device_type={self.device_type!r})"


class LogicalDevice(PhysicalDevice):
    """TensorFlow's LogicalDevice: (name, device_type)."""

    __slots__ = ()

    def __repr__(self):
        return f"LogicalDevice(name={self.name!r}, device_type={self.device_type!r})"


def list_physical_devices(device_type=None):
    """The devices tracer computes on, of `device_type` when given: the CPU alone."""
    devices = [PhysicalDevice("/physical_device:CPU:0", "CPU")]
    return [d for d in devices if device_type is None or d.device_type == device_type.upper()]


def list_logical_devices(device_type=None):
    """The logical devices: the CPU alone."""
    devices = [LogicalDevice("/device:CPU:0", "CPU")]
    return [d for d in devices if device_type is None or d.device_type == device_type.upper()]
