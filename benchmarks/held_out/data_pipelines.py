"""Held-out: tf.data pipelines as users build them, one small case at a time: sources
(slices of nested tuples and dicts, from_tensors, range, from_generator, text, CSV and
TFRecord files), the usual transformations (map, filter, batch, padded_batch, window,
interleave, shuffle, cache, scan, grouping ...), the ways of reading a dataset (for, iter
and next, as_numpy_iterator, reduce, get_single_element) and a Keras fit fed by a pipeline.
Each case prints, prefixed with its name, its element_spec, cardinality, len (or the error
len raises) and the elements it yields, so the outputs of `tf` and `tracer` (the first
argument) can be diffed line by line. A case that raises prints the error's type and the
start of its message and the program goes on with the next."""

import contextlib
import os
import shutil

import numpy as np
from engine import tf, which

SCRATCH = "/tmp/dpipe/scratch_" + which
shutil.rmtree(SCRATCH, ignore_errors=True)
os.makedirs(SCRATCH)

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def _values(a):
    if a.dtype.kind == "f":
        return np.round(a.astype(np.float64), 4).tolist()
    return a.tolist()


def fmt(x):
    """A plain text form of an element: nested dicts/tuples/lists, tensors with their dtype
    and shape, numpy values, nested datasets."""
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k}: {fmt(x[k])}" for k in sorted(x)) + "}"
    if isinstance(x, tuple):
        return "(" + ", ".join(fmt(v) for v in x) + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, list):
        return "[" + ", ".join(fmt(v) for v in x) + "]"
    if isinstance(x, tf.data.Dataset):
        return "DS<" + ", ".join(fmt(v) for v in x) + ">"
    if isinstance(x, (np.ndarray, np.generic)):
        a = np.asarray(x)
        return f"np:{a.dtype}{list(a.shape)}={_values(a)}"
    if hasattr(x, "numpy") and hasattr(x, "dtype"):
        a = np.asarray(x.numpy())
        return f"{x.dtype.name}{list(a.shape)}={_values(a)}"
    return f"{type(x).__name__}:{x!r}"


def spec(s):
    """A plain text form of an element_spec."""
    if isinstance(s, dict):
        return "{" + ", ".join(f"{k}: {spec(s[k])}" for k in sorted(s)) + "}"
    if isinstance(s, (tuple, list)):
        return "(" + ", ".join(spec(v) for v in s) + ")"
    name = type(s).__name__
    if name == "DatasetSpec":
        return f"DatasetSpec({spec(s.element_spec)})"
    shape = s.shape
    dims = None if shape.rank is None else shape.as_list()
    return f"{name}({dims}, {s.dtype.name})"


@contextlib.contextmanager
def part(name):
    """One independent part of a case: an error is printed and the case goes on."""
    try:
        yield
    except Exception as e:
        print(f"{name}: ERROR {type(e).__name__}: {str(e)[:80]!r}", flush=True)


def out(name, *parts):
    print(f"{name}:", *parts, flush=True)


def info(name, ds):
    out(name, "spec", spec(ds.element_spec))
    out(name, "card", int(ds.cardinality()))
    try:
        out(name, "len", len(ds))
    except Exception as e:
        out(name, "len", type(e).__name__)


def show(name, ds, limit=40):
    """element_spec, cardinality, len and the elements (at most `limit`)."""
    info(name, ds)
    items = []
    for i, el in enumerate(ds):
        if i >= limit:
            items.append("...")
            break
        items.append(fmt(el))
    out(name, "n", len(items))
    for it in items:
        out(name, " ", it)


# ---------------------------------------------------------------- sources


@case
def slices_tuple():
    feats = np.arange(8, dtype=np.float32).reshape(4, 2) / 2
    labels = np.array([0, 1, 1, 0])
    show("slices_tuple", tf.data.Dataset.from_tensor_slices((feats, labels)))


@case
def slices_dict_strings():
    data = {"name": ["ann", "bob", "cy"], "age": [31, 45, 27], "w": np.array([0.5, 1.0, 2.0])}
    show("slices_dict_strings", tf.data.Dataset.from_tensor_slices(data))


@case
def slices_nested():
    data = {
        "pair": (np.arange(3), np.arange(6).reshape(3, 2).astype(np.float64)),
        "inner": {"flag": [True, False, True], "id": tf.constant([7, 8, 9], tf.int16)},
    }
    show("slices_nested", tf.data.Dataset.from_tensor_slices(data))


@case
def slices_python_lists():
    show("slices_python_lists", tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4], [5, 6]]))
    show("slices_python_floats", tf.data.Dataset.from_tensor_slices([1.5, 2.5]))


@case
def from_tensors_case():
    ds = tf.data.Dataset.from_tensors(([1, 2, 3], "tag", {"m": np.eye(2, dtype=np.float32)}))
    show("from_tensors", ds)
    show("from_tensors_repeat", tf.data.Dataset.from_tensors(5).repeat(3))


@case
def range_variants():
    show("range_stop", tf.data.Dataset.range(4))
    with part("range_step_i32"):
        show("range_step_i32", tf.data.Dataset.range(2, 11, 3, output_type=tf.int32))
    show("range_negative", tf.data.Dataset.range(5, 0, -2))
    show("range_empty", tf.data.Dataset.range(3, 3))
    with part("range_float"):
        show("range_float", tf.data.Dataset.range(3, output_type=tf.float32))
    show("counter", tf.data.Dataset.counter(start=4, step=-2).take(3))


@case
def generator_signature():
    calls = [0]

    def gen():
        calls[0] += 1
        for n in range(1, 4):
            yield np.arange(n, dtype=np.int32), float(n) / 4

    ds = tf.data.Dataset.from_generator(
        gen,
        output_signature=(
            tf.TensorSpec(shape=(None,), dtype=tf.int32),
            tf.TensorSpec(shape=(), dtype=tf.float32),
        ),
    )
    out("from_generator", "calls before", calls[0])
    show("from_generator", ds)
    list(ds)
    out("from_generator", "calls after 2 epochs", calls[0])
    show("from_generator_batch", ds.padded_batch(2))
    generator_args()
    generator_legacy_types()


def generator_args():  # run by generator_signature
    def gen(limit):
        for i in range(int(limit)):
            yield {"i": i, "sq": i * i}

    ds = tf.data.Dataset.from_generator(
        gen,
        args=(3,),
        output_signature={"i": tf.TensorSpec((), tf.int64), "sq": tf.TensorSpec((), tf.int64)},
    )
    show("generator_args", ds)


def generator_legacy_types():  # run by generator_signature
    def gen():
        yield [1, 2], "a"
        yield [3], "bc"

    ds = tf.data.Dataset.from_generator(
        gen, output_types=(tf.int64, tf.string), output_shapes=([None], [])
    )
    show("generator_legacy", ds)
    bad = tf.data.Dataset.from_generator(
        lambda: iter([[1, 2], [3, 4, 5]]), output_signature=tf.TensorSpec([2], tf.int32)
    )
    try:
        out("generator_bad_shape", [fmt(v) for v in bad])
    except Exception as e:
        out("generator_bad_shape", "raises", type(e).__name__)


# ---------------------------------------------------------------- combining


@case
def zip_case():
    a = tf.data.Dataset.range(5)
    b = tf.data.Dataset.from_tensor_slices(["p", "q", "r"])
    show("zip_tuple", tf.data.Dataset.zip((a, b)))
    show("zip_dict", tf.data.Dataset.zip({"num": a, "nested": (b, a.map(lambda x: x * 10))}))
    show("zip_positional", tf.data.Dataset.zip(a, b))


@case
def concatenate_case():
    a = tf.data.Dataset.range(3)
    b = tf.data.Dataset.range(10, 12)
    show("concatenate", a.concatenate(b))
    show("concatenate_filtered", a.concatenate(b.filter(lambda x: x > 10)))


@case
def enumerate_case():
    ds = tf.data.Dataset.from_tensor_slices({"c": ["x", "y", "z"]})
    show("enumerate", ds.enumerate(start=5))


@case
def choose_from():
    sources = [
        tf.data.Dataset.from_tensors("a").repeat(),
        tf.data.Dataset.range(2).map(lambda x: tf.strings.as_string(x)),
    ]
    choice = tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 0, 1, 0], tf.int64))
    show("choose_from_datasets", tf.data.Dataset.choose_from_datasets(sources, choice))
    sample_from_case()


# ---------------------------------------------------------------- map and friends


@case
def map_structures():
    ds = tf.data.Dataset.range(4)
    show("map_tuple", ds.map(lambda x: (x, tf.cast(x, tf.float32) * 0.5)))
    show("map_dict", ds.map(lambda x: {"sq": x * x, "odd": x % 2 == 1}))
    pairs = tf.data.Dataset.from_tensor_slices(([1, 2, 3], [10, 20, 30]))
    show("map_unpacks_tuple", pairs.map(lambda a, b: a + b))
    dicts = tf.data.Dataset.from_tensor_slices({"a": [1, 2], "b": [3.0, 4.0]})
    show("map_dict_arg", dicts.map(lambda d: (d["a"], d["b"] * 2)))
    show("map_python_const", ds.map(lambda x: 7))


@case
def map_python_side_effects():
    calls = [0]

    def f(x):
        calls[0] += 1
        return x + 1

    ds = tf.data.Dataset.range(5).map(f)
    out("map_side_effects", "after map()", calls[0])
    list(ds)
    list(ds)
    out("map_side_effects", "after 2 epochs", calls[0])

    try:
        bad = tf.data.Dataset.range(3).map(lambda x: x + tf.constant("s"))
        out("map_type_error", "map() accepted it")
        out("map_type_error", [fmt(v) for v in bad])
    except Exception as e:
        out("map_type_error", "raises", type(e).__name__)

    eager_calls = [0]

    def py(x):
        eager_calls[0] += 1
        return x * 3

    ds2 = tf.data.Dataset.range(5).map(lambda x: tf.py_function(py, [x], tf.int64))
    info("map_py_function", ds2)
    out("map_py_function", "values", [int(v) for v in ds2], "calls", eager_calls[0])
    numpy_function_map()


@case
def map_parallel():
    ds = tf.data.Dataset.range(10)
    a = ds.map(lambda x: x * 2, num_parallel_calls=tf.data.AUTOTUNE)
    show("map_autotune", a)
    b = ds.map(lambda x: x * 2, num_parallel_calls=4, deterministic=False)
    info("map_nondeterministic", b)
    out("map_nondeterministic", "sorted", sorted(int(v) for v in b))


@case
def filter_case():
    ds = tf.data.Dataset.range(10)
    show("filter", ds.filter(lambda x: x % 3 == 0))
    pairs = tf.data.Dataset.from_tensor_slices(([1, 5, 2, 8], ["a", "b", "c", "d"]))
    show("filter_tuple", pairs.filter(lambda n, s: n > 2))
    show("filter_then_take", ds.filter(lambda x: x > 100).take(3))


@case
def flat_map_case():
    ds = tf.data.Dataset.range(1, 4)
    show("flat_map", ds.flat_map(lambda x: tf.data.Dataset.from_tensors(x).repeat(x)))
    rows = tf.data.Dataset.from_tensor_slices(np.arange(6).reshape(2, 3))
    show("flat_map_slices", rows.flat_map(tf.data.Dataset.from_tensor_slices))


@case
def interleave_case():
    ds = tf.data.Dataset.range(1, 4)
    mk = lambda x: tf.data.Dataset.from_tensors(x).repeat(4)  # noqa: E731
    show("interleave_c2_b2", ds.interleave(mk, cycle_length=2, block_length=2))
    show("interleave_c3_b1", ds.interleave(mk, cycle_length=3, block_length=1))
    ranged = lambda x: tf.data.Dataset.range(x * 10, x * 10 + x)  # noqa: E731
    show(
        "interleave_parallel",
        ds.interleave(
            ranged, cycle_length=2, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True
        ),
    )


# ---------------------------------------------------------------- batching


@case
def batch_case():
    ds = tf.data.Dataset.range(7)
    show("batch", ds.batch(3))
    show("batch_drop", ds.batch(3, drop_remainder=True))
    d = tf.data.Dataset.from_tensor_slices(
        {"x": np.arange(10, dtype=np.float32).reshape(5, 2), "y": [1, 0, 1, 1, 0]}
    )
    show("batch_dict", d.batch(2))
    show("batch_of_batch", tf.data.Dataset.range(8).batch(2).batch(2))
    show("batch_parallel", ds.batch(4, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True))


@case
def unbatch_case():
    ds = tf.data.Dataset.from_tensor_slices(np.arange(12).reshape(2, 3, 2))
    show("unbatch", ds.unbatch())
    show("batch_unbatch_tuple", tf.data.Dataset.range(5).map(lambda x: (x, -x)).batch(2).unbatch())


@case
def padded_batch_case():
    ds = tf.data.Dataset.range(1, 5).map(lambda x: tf.fill([x], x))
    show("padded_batch", ds.padded_batch(2))
    show(
        "padded_batch_shape",
        ds.padded_batch(3, padded_shapes=[5], padding_values=tf.constant(-1, tf.int64)),
    )
    pairs = tf.data.Dataset.range(1, 4).map(
        lambda x: (tf.range(x), tf.strings.as_string(tf.range(x)))
    )
    show(
        "padded_batch_tuple",
        pairs.padded_batch(
            2,
            padded_shapes=([None], [4]),
            padding_values=(tf.constant(9, tf.int64), "_"),
            drop_remainder=True,
        ),
    )


@case
def rebatch_case():
    ds = tf.data.Dataset.range(10).batch(4)
    show("rebatch", ds.rebatch(3))


@case
def window_case():
    ds = tf.data.Dataset.range(7)
    w = ds.window(3, shift=2, drop_remainder=True)
    info("window_raw", w)
    show("window_batched", w.flat_map(lambda win: win.batch(3)))
    show("window_stride", ds.window(2, shift=3, stride=2).flat_map(lambda win: win.batch(2)))
    pairs = tf.data.Dataset.from_tensor_slices({"a": [1, 2, 3, 4], "b": [5, 6, 7, 8]})
    show(
        "window_dict",
        pairs.window(2, drop_remainder=True).flat_map(
            lambda d: tf.data.Dataset.zip((d["a"].batch(2), d["b"].batch(2)))
        ),
    )


# ---------------------------------------------------------------- order and repetition


@case
def shuffle_case():
    ds = tf.data.Dataset.range(20)
    sh = ds.shuffle(20, seed=3, reshuffle_each_iteration=True)
    e1 = [int(v) for v in sh]
    e2 = [int(v) for v in sh]
    info("shuffle_reshuffle", sh)
    out(
        "shuffle_reshuffle",
        "same multiset",
        sorted(e1) == list(range(20)) == sorted(e2),
        "epochs differ",
        e1 != e2,
        "shuffled",
        e1 != list(range(20)),
    )
    fixed = ds.shuffle(20, seed=3, reshuffle_each_iteration=False)
    f1 = [int(v) for v in fixed]
    f2 = [int(v) for v in fixed]
    out("shuffle_fixed", "same multiset", sorted(f1) == list(range(20)), "epochs equal", f1 == f2)
    small = [int(v) for v in ds.shuffle(2, seed=1)]
    # with a buffer of 2 no element comes out more than one place ahead of its turn
    out(
        "shuffle_small_buffer",
        "multiset",
        sorted(small) == list(range(20)),
        "max early move <= 1",
        all(v - p <= 1 for p, v in enumerate(small)),
    )


@case
def repeat_take_skip():
    ds = tf.data.Dataset.range(3)
    show("repeat_2", ds.repeat(2))
    inf = ds.repeat()
    info("repeat_inf", inf)
    show("repeat_inf_take", inf.take(7))
    show("take_all", ds.take(-1))
    show("skip", tf.data.Dataset.range(6).skip(4))
    show("skip_past_end", ds.skip(5))
    show("take_skip_chain", tf.data.Dataset.range(10).skip(2).take(3).repeat(2))
    show("repeat_0", ds.repeat(0))


@case
def shard_case():
    ds = tf.data.Dataset.range(10)
    show("shard_3_1", ds.shard(3, 1))
    show("shard_3_2", ds.shard(num_shards=3, index=2))


@case
def cache_memory():
    calls = [0]

    def slow(x):
        calls[0] += 1
        return x * 2

    ds = tf.data.Dataset.range(4).map(lambda x: tf.py_function(slow, [x], tf.int64)).cache()
    info("cache_memory", ds)
    first = [int(v) for v in ds]
    second = [int(v) for v in ds]
    out("cache_memory", first, second, "py calls", calls[0])
    cache_file()


def cache_file():  # run by cache_memory
    path = os.path.join(SCRATCH, "cache_file")
    calls = [0]

    def slow(x):
        calls[0] += 1
        return x + 100

    ds = tf.data.Dataset.range(3).map(lambda x: tf.py_function(slow, [x], tf.int64)).cache(path)
    first = [int(v) for v in ds]
    second = [int(v) for v in ds]
    out("cache_file", first, second, "py calls", calls[0])
    out("cache_file", "index file written", os.path.exists(path + ".index"))
    again = tf.data.Dataset.range(3).map(lambda x: tf.py_function(slow, [x], tf.int64)).cache(path)
    out("cache_file", "new pipeline reads", [int(v) for v in again], "py calls", calls[0])


@case
def prefetch_apply():
    ds = tf.data.Dataset.range(5).prefetch(tf.data.AUTOTUNE)
    show("prefetch", ds)
    show("prefetch_2", tf.data.Dataset.range(3).batch(2).prefetch(2))

    def pipeline(d):
        return d.filter(lambda x: x % 2 == 0).map(lambda x: x * 10)

    show("apply", tf.data.Dataset.range(7).apply(pipeline))


# ---------------------------------------------------------------- stateful and grouping


@case
def scan_case():
    ds = tf.data.Dataset.range(1, 6)
    show("scan_cumsum", ds.scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s + x)))
    show(
        "scan_tuple_state",
        ds.scan(
            (tf.constant(0, tf.int64), tf.constant(1, tf.int64)),
            lambda st, x: ((st[0] + x, st[1] * x), {"sum": st[0] + x, "prod": st[1] * x}),
        ),
    )
    with part("scan_experimental"):
        show(
            "scan_experimental",
            ds.apply(
                tf.data.experimental.scan(tf.constant(1, tf.int64), lambda s, x: (s * 2, s + x))
            ),
        )


@case
def reduce_case():
    ds = tf.data.Dataset.range(1, 5)
    out("reduce_sum", fmt(ds.reduce(tf.constant(0, tf.int64), lambda s, x: s + x)))
    out("reduce_np_init", fmt(ds.reduce(np.int64(1), lambda s, x: s * x)))
    out(
        "reduce_tuple",
        fmt(
            ds.reduce(
                (tf.constant(0, tf.int64), tf.constant(0.0)),
                lambda s, x: (s[0] + 1, s[1] + tf.cast(x, tf.float32)),
            )
        ),
    )
    try:
        r = ds.reduce(0, lambda s, x: s + x)
        out("reduce_int_init", fmt(r))
    except Exception as e:
        out("reduce_int_init", "raises", type(e).__name__)


@case
def unique_case():
    show("unique_int", tf.data.Dataset.from_tensor_slices([3, 1, 3, 2, 1, 5]).unique())
    show("unique_str", tf.data.Dataset.from_tensor_slices(["b", "a", "b", "c"]).unique())


@case
def bucket_case():
    lengths = [1, 5, 2, 7, 3, 6, 2, 8, 4]

    def gen():
        for n in lengths:
            yield np.full([n], n, dtype=np.int32)

    ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec([None], tf.int32))
    b = ds.bucket_by_sequence_length(
        element_length_func=lambda x: tf.shape(x)[0],
        bucket_boundaries=[3, 6],
        bucket_batch_sizes=[2, 2, 2],
    )
    show("bucket_by_sequence_length", b)
    b2 = ds.bucket_by_sequence_length(
        element_length_func=lambda x: tf.shape(x)[0],
        bucket_boundaries=[4],
        bucket_batch_sizes=[3, 3],
        pad_to_bucket_boundary=False,
        drop_remainder=True,
    )
    show("bucket_drop", b2)


@case
def group_by_window_case():
    ds = tf.data.Dataset.range(10)
    g = ds.group_by_window(
        key_func=lambda x: x % 3, reduce_func=lambda k, w: w.batch(2), window_size=2
    )
    show("group_by_window", g)
    g2 = ds.apply(
        tf.data.experimental.group_by_window(
            lambda x: x % 2, lambda k, w: w.batch(5), window_size=5
        )
    )
    show("group_by_window_exp", g2)


@case
def rejection_resample_case():
    ds = tf.data.Dataset.from_tensor_slices(
        ([0, 0, 0, 1, 0, 1, 0, 0], np.arange(8.0, dtype=np.float32))
    )
    rs = ds.rejection_resample(
        class_func=lambda c, v: c, target_dist=[0.5, 0.5], initial_dist=[0.75, 0.25], seed=1
    )
    info("rejection_resample", rs)
    els = list(rs.take(4))
    out(
        "rejection_resample",
        "taken",
        len(els),
        "structure",
        fmt(tf.nest.map_structure(lambda t: t.dtype.name, els[0])) if els else None,
    )


@case
def take_while_case():
    ds = tf.data.Dataset.range(10)
    show("take_while", ds.take_while(lambda x: x < 4))
    show("take_while_none", ds.take_while(lambda x: x > 4))


@case
def ignore_errors_case():
    ds = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 4.0, 0.0, 8.0])
    bad = ds.map(lambda x: tf.debugging.check_numerics(1.0 / x, "division"))
    with part("ignore_errors"):
        show("ignore_errors", bad.ignore_errors())
    try:
        vals = [fmt(v) for v in bad]
        out("no_ignore_errors", vals)
    except Exception as e:
        out("no_ignore_errors", "raises", type(e).__name__)


@case
def snapshot_case():
    path = os.path.join(SCRATCH, "snap")
    ds = tf.data.Dataset.range(4).map(lambda x: x * x).snapshot(path)
    show("snapshot", ds)
    out("snapshot", "second epoch", [int(v) for v in ds], "dir exists", os.path.isdir(path))


@case
def options_case():
    opts = tf.data.Options()
    opts.deterministic = False
    opts.experimental_optimization.map_parallelization = True
    opts.threading.private_threadpool_size = 2
    ds = tf.data.Dataset.range(4).map(lambda x: x + 1).with_options(opts)
    o = ds.options()
    out(
        "options",
        type(o).__name__,
        o.deterministic,
        o.experimental_optimization.map_parallelization,
        o.threading.private_threadpool_size,
    )
    out("options", "default deterministic", tf.data.Dataset.range(2).options().deterministic)
    out("options", "sorted", sorted(int(v) for v in ds))
    out("options", "survives map", ds.map(lambda x: x).options().deterministic)


# ---------------------------------------------------------------- ways of reading


@case
def numpy_iterator_case():
    ds = tf.data.Dataset.from_tensor_slices(
        {"s": ["ab", "c"], "v": [[1.5, 2.0], [3.0, 4.5]], "i": [1, 2]}
    )
    for el in ds.as_numpy_iterator():
        out(
            "as_numpy_iterator",
            fmt(el),
            "s type",
            type(el["s"]).__name__,
            "i type",
            type(el["i"]).__name__,
        )
    out("as_numpy_iterator", "list", fmt(list(tf.data.Dataset.range(3).as_numpy_iterator())))


@case
def iter_next_case():
    ds = tf.data.Dataset.range(3).map(lambda x: (x, tf.strings.as_string(x)))
    with part("iter_next_get_next"):
        out("iter_next", "get_next", fmt(iter(ds).get_next()))
    it = iter(ds)
    out("iter_next", "three", [fmt(next(it)) for _ in range(3)])
    try:
        next(it)
        out("iter_next", "no StopIteration")
    except StopIteration:
        out("iter_next", "StopIteration")
    out("iter_next", "default", next(it, "done"))
    with part("iter_next_spec"):
        out("iter_next", "element_spec of iterator", spec(iter(ds).element_spec))
    with part("iter_next_optional"):
        it2 = iter(ds)
        opt = it2.get_next_as_optional()
        out("iter_next", "optional", bool(opt.has_value()), fmt(opt.get_value()))
    with part("iter_for_break"):
        it3 = iter(ds)
        for first in it3:
            break
        out("iter_for_break", fmt(first), "then", fmt(next(it3)))


@case
def single_element_case():
    ds = tf.data.Dataset.from_tensors({"a": tf.constant([1, 2]), "b": "x"})
    out("get_single_element", fmt(ds.get_single_element()))
    out(
        "get_single_element_exp",
        fmt(tf.data.experimental.get_single_element(tf.data.Dataset.range(5, 6))),
    )
    try:
        tf.data.Dataset.range(2).get_single_element()
        out("get_single_element_two", "no error")
    except Exception as e:
        out("get_single_element_two", "raises", type(e).__name__)


@case
def random_case():
    ds = tf.data.Dataset.random(seed=4).take(3)
    info("random", ds)
    vals = [v for v in ds]
    out(
        "random",
        "dtypes",
        [v.dtype.name for v in vals],
        "shapes",
        [v.shape.as_list() for v in vals],
    )
    out("random", "repeatable with seed", [int(v) for v in ds] == [int(v) for v in vals])


@case
def cardinality_helpers():
    ds = tf.data.Dataset.range(10).filter(lambda x: x > 3)
    out("cardinality_consts", int(tf.data.INFINITE_CARDINALITY), int(tf.data.UNKNOWN_CARDINALITY))
    out("cardinality_exp", int(tf.data.experimental.cardinality(ds)))
    a = ds.apply(tf.data.experimental.assert_cardinality(6))
    info("assert_cardinality", a)
    out("cardinality_dtype", ds.cardinality().dtype.name)


@case
def cardinality_combos():
    r = tf.data.Dataset.range(10)
    combos = {
        "repeat3": r.repeat(3),
        "inf_take": r.repeat().take(4),
        "inf_skip": r.repeat().skip(4),
        "filter_repeat": r.filter(lambda x: x > 2).repeat(),
        "filter_repeat2": r.filter(lambda x: x > 2).repeat(2),
        "zip_min": tf.data.Dataset.zip((r, r.take(3))),
        "zip_inf": tf.data.Dataset.zip((r.repeat(), r.take(3))),
        "concat_inf": r.concatenate(r.repeat()),
        "batch_inf": r.repeat().batch(4),
        "shard": r.shard(4, 3),
        "skip_more": r.skip(15),
        "take0": r.take(0),
        "window": r.window(3),
        "window_drop": r.window(3, shift=2, drop_remainder=True),
        "flat_map": r.flat_map(lambda x: tf.data.Dataset.from_tensors(x)),
        "enumerate": r.enumerate(),
        "scan": r.scan(tf.constant(0, tf.int64), lambda s, x: (s, x)),
        "take_while": r.take_while(lambda x: x < 3),
        "unique": r.unique(),
        "padded": r.map(lambda x: tf.fill([x], x)).padded_batch(4, drop_remainder=True),
        "from_generator": tf.data.Dataset.from_generator(
            lambda: iter([1]), output_signature=tf.TensorSpec([], tf.int32)
        ),
        "text_lines": tf.data.TextLineDataset([]),
    }
    for k, d in combos.items():
        with part("cardinality_" + k):
            out("cardinality_" + k, int(d.cardinality()))


@case
def dataset_in_function():
    ds = tf.data.Dataset.range(1, 6).map(lambda x: tf.cast(x, tf.float32))

    @tf.function
    def total(d):
        acc = tf.constant(0.0)
        for v in d:
            acc += v * v
        return acc

    out("dataset_in_function", "sum of squares", fmt(total(ds)))

    @tf.function
    def via_reduce():
        return ds.batch(2).reduce(tf.constant(0.0), lambda s, b: s + tf.reduce_sum(b))

    out("dataset_in_function", "reduce inside", fmt(via_reduce()))

    @tf.function
    def build_inside(n):
        d = tf.data.Dataset.range(n).map(lambda x: x * 2)
        return d.reduce(tf.constant(0, tf.int64), lambda s, x: s + x)

    out("dataset_in_function", "built inside", fmt(build_inside(tf.constant(4, tf.int64))))


def numpy_function_map():  # run by map_python_side_effects
    def np_side(x):
        return np.asarray(x * 2, dtype=np.float32)

    ds = tf.data.Dataset.range(3).map(lambda x: tf.numpy_function(np_side, [x], tf.float32))
    info("numpy_function", ds)
    out("numpy_function", [fmt(v) for v in ds])
    fixed = ds.map(lambda v: tf.ensure_shape(v, []))
    info("numpy_function_ensure_shape", fixed)


# ---------------------------------------------------------------- files


def _write_csv():
    path = os.path.join(SCRATCH, "people.csv")
    with open(path, "w") as f:
        f.write("name,age,score,label\n")
        f.write("ann,31,0.5,1\n")
        f.write("bob,45,1.25,0\n")
        f.write("cy,27,2.0,1\n")
    return path


@case
def text_lines():
    path = _write_csv()
    ds = tf.data.TextLineDataset(path)
    show("text_lines", ds)
    parts = ds.skip(1).map(lambda line: tf.strings.split(line, ","))
    show("text_lines_split", parts)
    nums = ds.skip(1).map(
        lambda line: tf.strings.to_number(tf.strings.split(line, ",")[1], tf.int32)
    )
    show("text_lines_number", nums)
    list_files_case()


@case
def csv_dataset():
    path = _write_csv()
    ds = tf.data.experimental.make_csv_dataset(
        path, batch_size=2, label_name="label", shuffle=False, num_epochs=1
    )
    show("make_csv_dataset", ds)
    c = tf.data.experimental.CsvDataset(
        path, [tf.string, tf.int32, tf.float32, tf.int32], header=True
    )
    show("CsvDataset", c)


TFRECORD = os.path.join(SCRATCH, "rows.tfrecord")


@case
def tfrecord_write():
    path = TFRECORD
    with tf.io.TFRecordWriter(path) as w:
        for i in range(3):
            ex = tf.train.Example(
                features=tf.train.Features(
                    feature={
                        "id": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
                        "xy": tf.train.Feature(float_list=tf.train.FloatList(value=[i * 0.5, -i])),
                        "tag": tf.train.Feature(
                            bytes_list=tf.train.BytesList(value=[f"t{i}".encode()])
                        ),
                    }
                )
            )
            w.write(ex.SerializeToString())
    out("tfrecord_write", "size", os.path.getsize(path))


@case
def tfrecord_read():
    raw = tf.data.TFRecordDataset(TFRECORD)
    info("tfrecord_raw", raw)
    out("tfrecord_raw", "n", len(list(raw)), "dtype", next(iter(raw)).dtype.name)
    desc = {
        "id": tf.io.FixedLenFeature([], tf.int64),
        "xy": tf.io.FixedLenFeature([2], tf.float32),
        "tag": tf.io.FixedLenFeature([], tf.string, default_value=""),
    }
    show("tfrecord_parsed", raw.map(lambda r: tf.io.parse_single_example(r, desc)))
    show("tfrecord_batch_parse", raw.batch(2).map(lambda r: tf.io.parse_example(r, desc)))


@case
def save_load_case():
    path = os.path.join(SCRATCH, "saved_ds")
    ds = tf.data.Dataset.from_tensor_slices({"a": [1, 2, 3], "b": ["x", "y", "z"]}).map(
        lambda d: (d["a"] * 2, d["b"])
    )
    ds.save(path)
    back = tf.data.Dataset.load(path)
    show("save_load", back)


def list_files_case():  # run by text_lines
    for i in range(3):
        with open(os.path.join(SCRATCH, f"part{i}.txt"), "w") as f:
            f.write(f"line{i}a\nline{i}b\n")
    files = tf.data.Dataset.list_files(os.path.join(SCRATCH, "part*.txt"), shuffle=False)
    show("list_files", files.map(lambda p: tf.strings.split(p, "/")[-1]))
    lines = files.interleave(tf.data.TextLineDataset, cycle_length=2)
    show("list_files_interleave", lines)


def sample_from_case():  # run by choose_from
    a = tf.data.Dataset.from_tensors(tf.constant(0, tf.int64)).repeat(30)
    b = tf.data.Dataset.from_tensors(tf.constant(1, tf.int64)).repeat(30)
    mixed = tf.data.Dataset.sample_from_datasets([a, b], weights=[0.5, 0.5], seed=2)
    info("sample_from_datasets", mixed)
    vals = [int(v) for v in mixed]
    out("sample_from_datasets", "count", len(vals), "both present", set(vals) == {0, 1})


# ---------------------------------------------------------------- keras


@case
def keras_fit_case():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5], np.float32) > 0).astype(np.float32)
    train = (
        tf.data.Dataset.from_tensor_slices((x, y))
        .shuffle(32, seed=1)
        .batch(8)
        .prefetch(tf.data.AUTOTUNE)
    )
    val = tf.data.Dataset.from_tensor_slices((x[:8], y[:8])).batch(4)
    model = tf.keras.Sequential(
        [
            tf.keras.Input((3,)),
            tf.keras.layers.Dense(4, activation="relu"),
            tf.keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    h = model.fit(train, validation_data=val, epochs=2, verbose=0)
    out("keras_fit", "history keys", sorted(h.history), "epochs", len(h.history["loss"]))
    inf = tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat()
    h2 = model.fit(inf, steps_per_epoch=3, epochs=1, verbose=0)
    out("keras_fit", "infinite with steps", sorted(h2.history))
    ev = model.evaluate(val, verbose=0)
    out("keras_fit", "evaluate returns", type(ev).__name__, len(ev))
    pred = model.predict(tf.data.Dataset.from_tensor_slices(x[:5]).batch(2), verbose=0)
    out("keras_fit", "predict shape", list(pred.shape))


for fn in CASES:
    try:
        fn()
    except Exception as e:
        print(f"{fn.__name__}: ERROR {type(e).__name__}: {str(e)[:80]!r}", flush=True)
