"""A torch matmul beside a libsla solve (issue 18, item 1): does either slow the other down?

Two Python threads: one runs torch matmuls (float64 [n, n] @ [n, n], torch's own thread count),
the other libsla solves (2D Poisson 1000², CG + Jacobi capped at a fixed iteration count, so
every solve does the same work; libsla's own thread count). ctypes releases the GIL for the
C call and torch releases it inside matmul, so both really run at once. Measured: each alone,
then both together, alternating `rounds` times; per round the median time of one matmul and of
one solve. Prints one JSON object with the thread counts, the load average and the slowdowns
together ÷ alone.

Run: PYTHONPATH=python SLA_LIBRARY=build/libsla.so /usr/bin/python3 bench/threads_beside_torch.py
     [--rounds 3] [--seconds 3] [--matmul-n 1000] [--sla-threads N]
"""
import argparse
import json
import os
import statistics
import threading
import time
import warnings

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import torch  # noqa: E402

import torch_sla  # noqa: E402
from torch_sla import gallery  # noqa: E402


def loop(fn, seconds, out, stop):
    """Calls fn until `seconds` have passed (or stop is set); appends each call's time."""
    t_end = time.perf_counter() + seconds
    while time.perf_counter() < t_end and not stop.is_set():
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)


def run(fns, seconds):
    """Runs the loops of fns at once (one Python thread each); median time per call of each."""
    times = [[] for _ in fns]
    stop = threading.Event()
    ths = [threading.Thread(target=loop, args=(f, seconds, t, stop)) for f, t in zip(fns, times)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    return [statistics.median(t) * 1e3 for t in times], [len(t) for t in times]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--matmul-n", type=int, default=1000)
    ap.add_argument("--sla-threads", type=int, default=0)
    a = ap.parse_args()
    if a.sla_threads:
        torch_sla.set_num_threads(a.sla_threads)
    A = gallery.grid([1000, 1000], 4.0, -1.0, -1.0)
    b = torch.ones(A.shape[0], dtype=torch.float64)
    M = torch.randn(a.matmul_n, a.matmul_n, dtype=torch.float64)

    def solve():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # capped: not converged on purpose
            A.solve(b, method="cg", preconditioner="jacobi", rtol=1e-30, maxiter=100)

    def matmul():
        M @ M

    solve(), matmul()                                # warm-up: pattern handle, allocations
    rounds = []
    for _ in range(a.rounds):
        (s_alone,), _ = run([solve], a.seconds)
        (m_alone,), _ = run([matmul], a.seconds)
        (s_both, m_both), counts = run([solve, matmul], a.seconds)
        rounds.append({"solve_alone_ms": s_alone, "matmul_alone_ms": m_alone,
                       "solve_beside_matmul_ms": s_both, "matmul_beside_solve_ms": m_both,
                       "calls_together": counts,
                       "solve_slowdown": s_both / s_alone, "matmul_slowdown": m_both / m_alone})
    print(json.dumps({
        "benchmark": "threads_beside_torch", "cpus": len(os.sched_getaffinity(0)),
        "torch_num_threads": torch.get_num_threads(),
        "sla_num_threads": torch_sla.get_num_threads(),
        "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
        "solve": "2D Poisson 1000², CG + Jacobi, 100 iterations", "matmul_n": a.matmul_n,
        "loadavg": os.getloadavg(), "rounds": rounds}, indent=1))


if __name__ == "__main__":
    main()
