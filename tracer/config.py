"""`tt.config`: library-wide switches.

`strict_gradients(True)` (or TRACER_STRICT_GRADIENTS=1 in the environment) makes a None
gradient raise UnconnectedGradientError with tape.explain's reason, instead of returning
None (unless `unconnected_gradients='zero'` asked for zeros).

`run_functions_eagerly(True)`, as TensorFlow's: every `tt.function` runs its Python function
as it is, op by op, instead of its traced and compiled version (for debugging with print
and pdb); `functions_run_eagerly()` says whether it is on.

`list_physical_devices(device_type=None)` and `list_logical_devices` name the one device
tracer computes on, the CPU (no GPU: `list_physical_devices("GPU")` is empty), as
TensorFlow's do on a machine without one; `set_logical_device_configuration` (also
`experimental.set_virtual_device_configuration`) splits it into logical CPUs, which tracer
lists and computes on as the one CPU.

`threading.set_intra_op_parallelism_threads(n)`, as TensorFlow's: the threads of tracer's
pool, which runs the parallel loops and matrix products of compiled and eager code alike
(docs/threads.md); 0 for the default (the cores this process may use, or OMP_NUM_THREADS).
Unlike TensorFlow's, it may be called at any time: the next parallel loop uses it.
`set_inter_op_parallelism_threads(n)` is recorded and read back, and changes nothing:
tracer runs one op, and one compiled function's steps, at a time.

`optimizer.set_experimental_options` / `get_experimental_options` and `set_jit` / `get_jit`
record Grappler's switches and read them back as TensorFlow's do (the options merge into
those set before, in TensorFlow's order); tracer's own passes do not read them.
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
    """The logical devices: the CPU, or the CPUs `set_logical_device_configuration` made."""
    count = len(_logical_cpus.configurations or [None])
    devices = [LogicalDevice(f"/device:CPU:{k}", "CPU") for k in range(count)]
    return [d for d in devices if device_type is None or d.device_type == device_type.upper()]


class LogicalDeviceConfiguration(tuple):
    """TensorFlow's configuration of one logical device (virtual CPUs take no memory limit)."""

    __slots__ = ()
    _fields = ("memory_limit", "experimental_priority", "experimental_device_ordinal")

    def __new__(cls, memory_limit=None, experimental_priority=None, experimental_device_ordinal=None):  # fmt: skip
        return super().__new__(
            cls, (memory_limit, experimental_priority, experimental_device_ordinal)
        )

    memory_limit = property(lambda self: self[0])
    experimental_priority = property(lambda self: self[1])
    experimental_device_ordinal = property(lambda self: self[2])

    def __repr__(self):
        fields = ", ".join(f"{name}={value!r}" for name, value in zip(self._fields, self))
        return f"LogicalDeviceConfiguration({fields})"


class _LogicalCpus:
    configurations = None  # the CPU's logical devices' configurations, once set


_logical_cpus = _LogicalCpus()


def set_logical_device_configuration(device, logical_devices):
    """Split the CPU into logical devices, as TensorFlow's (a distribution strategy's
    `cpu:0`, `cpu:1`, ...): `list_logical_devices` lists them. tracer computes on the one
    CPU whatever a block's device, as TensorFlow's soft placement does without a GPU; unlike
    TensorFlow's, the configuration may be set again at any time."""
    if device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}")
    configurations = list(logical_devices)
    for configuration in configurations:
        if not isinstance(configuration, LogicalDeviceConfiguration):
            raise TypeError(f"not a tt.config.LogicalDeviceConfiguration: {configuration!r}")
        if configuration.memory_limit is not None:
            raise ValueError(
                "Setting memory limit on CPU virtual devices is currently not supported"
            )
    _logical_cpus.configurations = configurations or None


def get_logical_device_configuration(device):
    """The configurations `set_logical_device_configuration` gave `device`, or None."""
    if device not in list_physical_devices():
        raise ValueError(f"Unrecognized device: {device!r}")
    return None if _logical_cpus.configurations is None else list(_logical_cpus.configurations)


class _Experimental:
    """`tt.config.experimental`: TensorFlow's older names of the device configuration."""

    set_virtual_device_configuration = staticmethod(set_logical_device_configuration)
    get_virtual_device_configuration = staticmethod(get_logical_device_configuration)
    VirtualDeviceConfiguration = LogicalDeviceConfiguration
    list_physical_devices = staticmethod(list_physical_devices)
    list_logical_devices = staticmethod(list_logical_devices)


experimental = _Experimental()


# Grappler's switches, in the order TensorFlow's get_experimental_options lists them; the
# two booleans are listed always, the others once set
_OPTIMIZER_OPTIONS = (
    "layout_optimizer", "constant_folding", "shape_optimization", "remapping",
    "arithmetic_optimization", "dependency_optimization", "loop_optimization",
    "function_optimization", "debug_stripper", "disable_model_pruning",
    "scoped_allocator_optimization", "pin_to_host_optimization", "implementation_selector",
    "auto_mixed_precision", "use_plugin_optimizers", "disable_meta_optimizer",
    "auto_mixed_precision_onednn_bfloat16", "auto_mixed_precision_mkl", "min_graph_nodes",
)  # fmt: skip
_ALWAYS_LISTED = {"disable_model_pruning": False, "disable_meta_optimizer": False}


class _Optimizer:
    """`tt.config.optimizer`: TensorFlow's graph optimizer switches, recorded and read back
    (an unknown name is ignored, as TensorFlow ignores it); tracer's passes do not read
    them."""

    def __init__(self):
        self._options = dict(_ALWAYS_LISTED)
        self._jit = ""

    def set_experimental_options(self, options):
        for name, value in dict(options).items():
            if name in _OPTIMIZER_OPTIONS:
                self._options[name] = int(value) if name == "min_graph_nodes" else bool(value)

    def get_experimental_options(self):
        return {name: self._options[name] for name in _OPTIMIZER_OPTIONS if name in self._options}

    def set_jit(self, enabled):
        """True (or "autoclustering") asks for XLA's clustering; tracer records it."""
        self._jit = "autoclustering" if enabled else ""

    def get_jit(self):
        return self._jit


optimizer = _Optimizer()
