"""`tt.data.Options`: TensorFlow's dataset options, kept and given back by
`Dataset.options()`. tracer's pipelines run in the caller's thread in their one
deterministic order, so no option changes what they compute or how fast: an option a
program sets is accepted (an unknown one is an AttributeError, as in TensorFlow) and read
back as set."""

# each group of options (`options.threading.private_threadpool_size = 8`) and its names
_GROUPS = {
    "autotune": ("autotune", "cpu_budget", "ram_budget", "enabled", "min_parallelism"),
    "experimental_distribute": ("auto_shard_policy", "num_devices"),
    "experimental_optimization": (
        "apply_default_optimizations",
        "filter_fusion",
        "filter_parallelization",
        "inject_prefetch",
        "map_and_batch_fusion",
        "map_and_filter_fusion",
        "map_fusion",
        "map_parallelization",
        "noop_elimination",
        "parallel_batch",
        "seq_interleave_prefetch",
        "shuffle_and_repeat_fusion",
        "warm_start",
    ),
    "threading": ("max_intra_op_parallelism", "private_threadpool_size"),
}
_OWN = (
    "dataset_name",
    "deterministic",
    "experimental_deterministic",
    "experimental_external_state_policy",
    "experimental_slack",
    "experimental_symbolic_checkpoint",
    "experimental_warm_start",
    "framework_type",
)


class _Group:
    """One group of options: each None until set."""

    def __init__(self, group, names):
        object.__setattr__(self, "_group", group)
        object.__setattr__(self, "_names", names)
        for name in names:
            object.__setattr__(self, name, None)

    def __setattr__(self, name, value):
        if name not in self._names:
            raise AttributeError(f"Cannot set the property {name} on {self._group}.")
        object.__setattr__(self, name, value)


class Options(_Group):
    """The options of a dataset (`Dataset.with_options`): every one None until set."""

    def __init__(self):
        super().__init__("Options", (*_OWN, *_GROUPS, "experimental_threading"))
        for group, names in _GROUPS.items():
            object.__setattr__(self, group, _Group(group, names))
        object.__setattr__(self, "experimental_threading", self.threading)

    def __eq__(self, other):
        return isinstance(other, Options) and _values(self) == _values(other)

    __hash__ = None

    def merge(self, options):
        """These options with those set in `options` (not None) taking their place."""
        merged = Options()
        for source in (self, options):
            for name in _OWN:
                if getattr(source, name) is not None:
                    setattr(merged, name, getattr(source, name))
            for group, names in _GROUPS.items():
                for name in names:
                    value = getattr(getattr(source, group), name)
                    if value is not None:
                        setattr(getattr(merged, group), name, value)
        return merged


def _values(options):
    """Every option's value, by name."""
    values = {name: getattr(options, name) for name in _OWN}
    for group, names in _GROUPS.items():
        values.update({(group, name): getattr(getattr(options, group), name) for name in names})
    return values
