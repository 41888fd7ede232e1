"""CG + Jacobi per iteration from torch_sla against C, in the same run (issue 18: equal within
10 %): 2D 5-point Poisson 1000² and 3D 7-point Poisson 100³, b = 1, rtol 1e-8. The C side is
``build/bench/bench_krylov --cg-jacobi`` (sla_solver_create + sla_solver_solve, solve time
only); the torch_sla side is ``A.solve(b, method='cg', preconditioner='jacobi', rtol=1e-8)`` on
``torch_sla.gallery.grid`` (the same matrix), timed around the whole call (checks, set-up,
solve, the result tensor), at default settings: libsla's own thread count, torch's untouched.
The two alternate ``--rounds`` times; each figure is the fastest round (the machine is shared).
Prints one JSON object; ratio = torch_sla ms per iteration / C's.

Run: PYTHONPATH=python SLA_LIBRARY=build/libsla.so /usr/bin/python3 bench/krylov_torch.py
     [--rounds 3]
"""
import argparse
import json
import os
import subprocess
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
import torch  # noqa: E402

import torch_sla  # noqa: E402
from torch_sla import gallery  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
build = os.environ.get("BUILD_DIR", os.path.join(here, "..", "build"))
PROBLEMS = {"poisson2d_1000": ([1000, 1000], 4.0), "poisson3d_100": ([100, 100, 100], 6.0)}


def run_c():
    out = subprocess.run([os.path.join(build, "bench", "bench_krylov"), "--cg-jacobi"],
                         check=True, capture_output=True, text=True).stdout
    return {r["problem"]: r for r in map(json.loads, out.strip().splitlines())}


def run_torch(A):
    b = torch.ones(A.shape[-1], dtype=torch.float64)
    t0 = time.perf_counter()
    x, info = A.solve(b, method="cg", preconditioner="jacobi", rtol=1e-8, return_info=True)
    t = time.perf_counter() - t0
    return {"iterations": info.iterations, "converged": bool(info.converged), "call_s": t,
            "ms_per_iteration": 1e3 * t / max(info.iterations, 1)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    mats = {k: gallery.grid(d, diag, -1.0, -1.0) for k, (d, diag) in PROBLEMS.items()}
    best = {k: {"c": None, "torch_sla": None} for k in PROBLEMS}
    for _ in range(args.rounds):
        c = run_c()
        for k, A in mats.items():
            t = run_torch(A)
            for side, r in (("c", c[k]), ("torch_sla", t)):
                if best[k][side] is None or r["ms_per_iteration"] < best[k][side]["ms_per_iteration"]:
                    best[k][side] = r
    out = {"benchmark": "krylov_torch", "rounds": args.rounds,
           "torch_num_threads": torch.get_num_threads(),
           "sla_num_threads": torch_sla.get_num_threads(),
           "loadavg": os.getloadavg(), "problems": best,
           "ratio_torch_over_c": {k: round(v["torch_sla"]["ms_per_iteration"] /
                                           v["c"]["ms_per_iteration"], 3)
                                  for k, v in best.items()}}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
