"""numpy's own loop of a unary ufunc over a large array, in parts on several threads.

numpy runs a ufunc's loop on the calling thread: a transcendental function over millions of
elements (B3's sin, cos, exp and tanh) keeps one core busy while the others idle. Here a
large C-contiguous float32 or float64 array is cut into parts whose bounds are multiples of
PART_ALIGN elements, and each part goes through the ufunc itself (`ufunc(part, out=...)`),
whose loop runs without the GIL: the same loop on the same elements at the same alignment,
so numpy's bits (tests/test_ufunc_parts.py holds them to it).

The threads are this module's Python threads, started on first use, one fewer than
tracer's pool has (runtime/thread_pools.py's `settings`). They claim parts as they come
free, and the caller runs every part no thread has claimed: a thread held off its core by
other processes costs the caller a wait only for a part it started, as in tracer's pool.
Floating-point errors are ignored in every part, as in tracer's eager kernels
(runtime/kernels.py's `quiet`): NaN and Inf are results.
"""

import itertools
import os
import queue
import threading

import numpy as np

from runtime import kernels, thread_pools

# elements from which a ufunc's loop is cut among the threads: waking a Python thread costs
# tens of microseconds, which half of a smaller array's exp does not repay
# (benchmarks/RESULTS.md)
PARTS_FROM = 1 << 20
PARTS_PER_THREAD = 2
PART_ALIGN = 64  # elements: a part starts whole vectors (and cache lines) from the array's start
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_workers = []  # the started threads' job queues
_pool_sizes = {}  # the pool's size by the program's choice of it (thread_pools.chosen_threads)
_starting = threading.Lock()


def on_threads(ufunc, small=None):
    """A kernel `run(x)`: `ufunc(x)`, in parts on the threads where `x` is a large
    C-contiguous float32 or float64 array and the pool has more than one thread; else
    `small(x)` (`ufunc` where none is given)."""
    small = ufunc if small is None else small

    def run(x):
        if (
            type(x) is np.ndarray
            and x.size >= PARTS_FROM
            and x.dtype in _DTYPES
            and x.flags.c_contiguous
        ):
            threads = _threads()
            if threads == 1:
                return small(x)
            token = kernels.errors_ignored()
            try:
                return _in_parts(ufunc, x, threads)
            finally:
                kernels.errors_restored(token)
        return small(x)

    run.__name__ = getattr(ufunc, "__name__", "kernel")
    return run


def _threads():
    """The pool's size (its settings read once for each choice the program made)."""
    chosen = thread_pools.chosen_threads()
    count = _pool_sizes.get(chosen)
    if count is None:
        count = _pool_sizes[chosen] = thread_pools.settings()[0]
    return count


def _in_parts(ufunc, x, threads):
    """`ufunc(x)` of a C-contiguous `x`, its parts shared between this thread and `threads`
    - 1 of the module's."""
    flat = x.reshape(-1)
    out = np.empty_like(x)
    flat_out = out.reshape(-1)
    step = -(-flat.size // (threads * PARTS_PER_THREAD * PART_ALIGN)) * PART_ALIGN
    bounds = [(start, min(start + step, flat.size)) for start in range(0, flat.size, step)]
    job = _Job(ufunc, flat, flat_out, bounds)
    for jobs in _started(threads - 1):
        jobs.put(job)
    job.work()
    job.wait()
    return out


class _Job:
    """One ufunc over one array's parts: `work` claims and runs parts until none is left;
    `wait` returns once every claimed part is done (raising what a thread's part raised)."""

    def __init__(self, ufunc, flat, flat_out, bounds):
        self.ufunc, self.flat, self.flat_out, self.bounds = ufunc, flat, flat_out, bounds
        self.claims = itertools.count()  # next() is atomic under the GIL
        self.lock = threading.Lock()
        self.unfinished = len(bounds)
        self.finished = threading.Event()
        self.error = None

    def work(self):
        for index in self.claims:
            if index >= len(self.bounds):
                return
            start, stop = self.bounds[index]
            try:
                self.ufunc(self.flat[start:stop], out=self.flat_out[start:stop])
            except BaseException as error:  # handed to the caller, which raises it
                self.error = error
            with self.lock:
                self.unfinished -= 1
                if self.unfinished == 0:
                    self.finished.set()

    def wait(self):
        self.finished.wait()
        if self.error is not None:
            raise self.error


def _started(count):
    """The job queues of `count` threads, started where fewer are running."""
    if len(_workers) < count:
        with _starting:
            while len(_workers) < count:
                jobs = queue.SimpleQueue()
                threading.Thread(
                    target=_serve, args=(jobs,), name="tracer ufunc parts", daemon=True
                ).start()
                _workers.append(jobs)
    return _workers[:count]


# a child made by fork() has none of its parent's threads: it starts its own
os.register_at_fork(after_in_child=_workers.clear)


def _serve(jobs):
    np.seterr(all="ignore")
    while True:
        jobs.get().work()
