"""Timing helper shared by the benchmarks: the median of repeated runs after a warm-up."""

import statistics
import time


def median_seconds(function, repeats, warmup=2):
    for _ in range(warmup):
        function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
