"""Complex 2D Helmholtz (examples/helmholtz.py's operator: 5-point Laplacian, sponge layer as a
complex shift): one factor + solve of A x = b, complex128, by torch_sla (A.solve with method
'auto': libsla's MUMPS complex symmetric LDLᵀ, or --method lu for UMFPACK's LU; a fresh
SparseTensor on new index tensors each repeat and torch_sla's pattern and solver caches
cleared, so that nothing is reused: pattern + analysis + factorization + solve) against
SciPy's spsolve (SuperLU) on the same CSR matrix, in the same run, the two alternating repeat
by repeat (so that neither alone meets memory the process has not touched before, slower on a
virtual machine); the residuals of both.
One JSON object; ratio = SciPy time / torch_sla time (median of the repeats of wall time), and
cpu_ratio the same for process CPU time (time.process_time: every thread of this process, not
polluted by other jobs on a shared machine; every solver here runs in this process). loadavg_start
and loadavg_end (os.getloadavg, 1-minute) say how loaded the machine was. OpenBLAS's worker
threads spin while they wait, so with more than one the CPU time counts the spinning: run with
OPENBLAS_NUM_THREADS=1 for a single-core comparison (recorded as openblas_num_threads).
With --krylov RTOL: also the Krylov methods to that relative residual, in the same run: ours
COCG + ILU(0) (complex symmetric A: the incomplete LDLᵀ without conjugation) and GMRES(50) +
ILU(0), against scipy.sparse.linalg.gmres(restart 50, rtol RTOL, unpreconditioned: SciPy has no
ILU(0), and spilu's threshold ILU on this matrix is a sparse LU in cost) capped at
--krylov-maxiter iterations (its converged flag says whether it got there).
best_ratio = SciPy's best time to a solution (spsolve, or gmres when it converged) / ours.

Run: PYTHONPATH=python SLA_LIBRARY=build/libsla.so /usr/bin/python3 bench/helmholtz_complex.py
[--size 300] [--repeats 3] [--waves 6] [--method auto|lu|ldlt] [--krylov 1e-8]
[--krylov-maxiter 2000] [--out FILE]
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import scipy.sparse.linalg as spl  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import torch_sla  # noqa: E402
from torch_sla import SparseTensor  # noqa: E402
from helmholtz import setup  # noqa: E402


def alternating_medians(fns, repeats):
    """[(median wall s, median process CPU s, last result)] of each fn, the fns called in turn
    repeat after repeat"""
    times = [[] for _ in fns]
    cpus = [[] for _ in fns]
    outs = [None] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            t0, c0 = time.perf_counter(), time.process_time()
            outs[k] = fn()
            cpus[k].append(time.process_time() - c0)
            times[k].append(time.perf_counter() - t0)
    return [(float(np.median(t)), float(np.median(c)), o) for t, c, o in zip(times, cpus, outs)]


def fresh():
    """torch_sla's caches emptied: the next solve builds its pattern and solver anew"""
    torch_sla.SOLVER_CACHE.clear()
    from torch_sla._pattern import clear_pattern_cache
    clear_pattern_cache()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--waves", type=float, default=6.0)
    ap.add_argument("--method", default="auto")
    ap.add_argument("--krylov", type=float, default=0.0)
    ap.add_argument("--krylov-maxiter", type=int, default=2000)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    P = setup(args.size, args.waves)
    n = P["n"]
    vals = P["base"] + (0.3 + 0.1j) * P["bump"]
    b = P["S"] @ torch.tensor([1.0 + 0.5j, -0.7 + 0.8j, 0.4 - 1.1j], dtype=torch.complex128)
    row, col = P["row"].numpy(), P["col"].numpy()
    S = sp.csr_matrix((vals.numpy(), (row, col)), shape=(n, n))
    bn = b.numpy()

    # fresh index and value tensors each repeat, the caches cleared: a new pattern and a new
    # solver (torch_sla would otherwise find the pattern and refactor the cached solver)
    load_start = os.getloadavg()[0]
    info = {}

    def ours():
        fresh()
        A = SparseTensor(vals.clone(), P["row"].clone(), P["col"].clone(), (n, n))
        y, info["i"] = A.solve(b, method=args.method, return_info=True)
        return y
    (t_sla, c_sla, x), (t_scipy, c_scipy, xs) = alternating_medians(
        [ours, lambda: spl.spsolve(S.tocsc(), bn)], args.repeats)
    res = lambda y: float(np.linalg.norm(S @ y - bn) / np.linalg.norm(bn))
    out = {
        "benchmark": "helmholtz_complex", "n": n, "nnz": int(S.nnz), "waves": args.waves,
        "threads": torch.get_num_threads(), "repeats": args.repeats,
        "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
        "method": args.method, "description": info["i"].description,
        "torch_sla_s": t_sla, "scipy_spsolve_s": t_scipy, "ratio": t_scipy / t_sla,
        "torch_sla_cpu_s": c_sla, "scipy_spsolve_cpu_s": c_scipy, "cpu_ratio": c_scipy / c_sla,
        "torch_sla_relative_residual": res(x.numpy()),
        "scipy_relative_residual": res(xs), "libsla": torch_sla.__version__}
    ours, theirs = [t_sla], [t_scipy]
    ours_cpu, theirs_cpu = [c_sla], [c_scipy]
    if args.krylov > 0:
        import warnings
        warnings.simplefilter("ignore")
        A = SparseTensor(vals.clone(), P["row"].clone(), P["col"].clone(), (n, n))
        for m in ("cocg", "gmres"):
            t0, c0 = time.perf_counter(), time.process_time()
            y = A.solve(b, method=m, preconditioner="ilu0", rtol=args.krylov, restart=50,
                        maxiter=20000)
            c, t = time.process_time() - c0, time.perf_counter() - t0
            r = res(y.numpy())
            out[f"torch_sla_{m}_ilu0_s"] = t
            out[f"torch_sla_{m}_ilu0_cpu_s"] = c
            out[f"torch_sla_{m}_ilu0_relative_residual"] = r
            if r <= 1.01 * args.krylov:
                ours.append(t)
                ours_cpu.append(c)
        it = [0]

        def count(_):
            it[0] += 1
        t0, c0 = time.perf_counter(), time.process_time()
        yg, flag = spl.gmres(S, bn, tol=args.krylov, atol=0.0, restart=50,
                             maxiter=max(1, args.krylov_maxiter // 50), callback=count,
                             callback_type="pr_norm")
        c, t = time.process_time() - c0, time.perf_counter() - t0
        out.update({"scipy_gmres_s": t, "scipy_gmres_cpu_s": c, "scipy_gmres_iterations": it[0],
                    "scipy_gmres_converged": flag == 0,
                    "scipy_gmres_relative_residual": res(yg)})
        if flag == 0:
            theirs.append(t)
            theirs_cpu.append(c)
    out["best_ratio"] = min(theirs) / min(ours)
    out["best_cpu_ratio"] = min(theirs_cpu) / min(ours_cpu)
    out["loadavg_start"], out["loadavg_end"] = load_start, os.getloadavg()[0]
    text = json.dumps(out)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
