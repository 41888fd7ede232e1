"""Memory and time at scale: 2D Poisson (5-point) CG + Jacobi and AMG-PCG from C
(build/bench/bench_scale, one process per case so that each peak RSS is its own), and the same
through torch_sla (gallery built in C, solve from Python) at the smallest size. Prints one JSON
object with each case's peak RSS per unknown (build, set-up, solve included), set-up and
solve time and iterations, and, from the largest measured size of each method, the unknowns that
would fit in a memory budget at that per-unknown figure (an extrapolation, labelled so).

Run: PYTHONPATH=python SLA_LIBRARY=build/libsla.so /usr/bin/python3 bench/scale.py
     [--sides 2000,4000] [--budget-gb 24] [--jacobi-maxiter 0 (no cap; applied above 4M)]
     [--preconds jacobi,amg] [--torch-side 1000] [--torch-sources gallery,csr32]
The torch_sla figures are given above the interpreter's baseline (torch imported, and for csr32
the caller's CSR arrays already held) beside the absolute peak; compare the former with C's.
"""
import argparse
import json
import os
import subprocess
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
here = os.path.dirname(os.path.abspath(__file__))
build = os.environ.get("BUILD_DIR", os.path.join(here, "..", "build"))


def run_c(precond, side, rtol, maxiter):
    cmd = [os.path.join(build, "bench", "bench_scale"), precond, "2", str(side), str(rtol)]
    if maxiter:
        cmd.append(str(maxiter))
    return json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)


TORCH_CASE = r"""
import json, resource, sys, time, torch, torch_sla
from torch_sla import gallery, SparseTensor
side, precond, rtol, source = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4]
maxiter = int(sys.argv[5]) or None
n = side * side


def peak():
    # VmHWM: the kernel's peak RSS (as getrusage's), resettable through clear_refs
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return torch_sla._capi.lib.sla_peak_rss_bytes()


if source == "csr32":
    # the caller holds int32 CSR arrays and float64 values (built here from the gallery's, which
    # are dropped before the baseline): SparseTensor.from_csr hands them to libsla
    G = gallery.grid([side, side], 4.0, -1.0, -1.0)
    p = G._pattern
    crow, col = p.rowptr(), p.csr_cols().to(torch.int32)
    vals = G.values.clone()
    del G, p
    try:                 # reset the peak to the current RSS: the baseline holds the caller's arrays
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
base = peak()
t0 = time.perf_counter()
if source == "csr32":
    A = SparseTensor.from_csr(vals, crow, col, (n, n))
else:
    A = gallery.grid([side, side], 4.0, -1.0, -1.0)
t1 = time.perf_counter()
build_peak = peak()
b = torch.ones(n, dtype=torch.float64)
x = A.solve(b, method="cg", preconditioner=precond, rtol=rtol, maxiter=maxiter)
t2 = time.perf_counter()
top = peak()
print(json.dumps({"unknowns": n, "precond": precond, "source": source, "peak_bytes": top,
                  "python_baseline_bytes": base,
                  "peak_bytes_per_unknown": top / n,
                  "peak_above_baseline_per_unknown": (top - base) / n,
                  "build_above_baseline_per_unknown": (build_peak - base) / n,
                  "build_s": t1 - t0, "solve_s": t2 - t1,
                  "relative_residual": float(torch.linalg.norm(A @ x - b) / torch.linalg.norm(b))}))
"""


def run_torch(precond, side, rtol, source, maxiter):
    out = subprocess.run([sys.executable, "-c", TORCH_CASE, str(side), precond, str(rtol), source,
                          str(maxiter)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sides", default="2000,4000")
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--budget-gb", type=float, default=24.0)
    ap.add_argument("--jacobi-maxiter", type=int, default=0)
    ap.add_argument("--torch-side", type=int, default=1000)
    ap.add_argument("--cap-from", type=int, default=4_000_001,
                    help="apply --jacobi-maxiter from this many unknowns on (C and torch_sla)")
    ap.add_argument("--preconds", default="jacobi,amg")
    ap.add_argument("--torch-sources", default="gallery,csr32",
                    help="gallery: torch_sla.gallery.grid (built in C); csr32: "
                         "SparseTensor.from_csr on caller-held int32 CSR arrays")
    args = ap.parse_args()
    sides = [int(s) for s in args.sides.split(",")]
    out = {"benchmark": "scale", "problem": "poisson2d_5pt", "rtol": args.rtol,
           "loadavg_start": os.getloadavg(), "c": [], "torch_sla": []}
    preconds = args.preconds.split(",")
    for precond in preconds:
        for side in sides:
            mi = args.jacobi_maxiter if precond == "jacobi" and side * side >= args.cap_from else 0
            r = run_c(precond, side, args.rtol, mi)
            print(json.dumps(r), file=sys.stderr)
            out["c"].append(r)
        for source in args.torch_sources.split(","):
            mi = args.jacobi_maxiter if precond == "jacobi" and \
                args.torch_side ** 2 >= args.cap_from else 0
            r = run_torch(precond, args.torch_side, args.rtol, source, mi)
            print(json.dumps(r), file=sys.stderr)
            out["torch_sla"].append(r)
    budget = args.budget_gb * 2 ** 30
    out["extrapolated_max_unknowns"] = {
        p: {"bytes_per_unknown_at_largest": rs[-1]["peak_bytes_per_unknown"],
            "measured_at_unknowns": rs[-1]["unknowns"],
            "unknowns_in_budget": budget / rs[-1]["peak_bytes_per_unknown"],
            "note": "extrapolated from the per-unknown peak at the largest measured size"}
        for p in preconds
        for rs in [[r for r in out["c"] if r["precond"] == p]]}
    out["budget_gb"] = args.budget_gb
    out["loadavg_end"] = os.getloadavg()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
