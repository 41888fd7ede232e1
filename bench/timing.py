"""Timing helper shared by the Python benchmarks (bench/*.py)."""
import statistics
import time


def per_call(fn, repeats, warmup=3):
    """Median and minimum milliseconds of fn() over `repeats` calls, after `warmup` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return {"median_ms": 1e3 * statistics.median(times), "min_ms": 1e3 * min(times)}
