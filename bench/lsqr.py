"""LSQR: sla (through torch_sla, method 'lsqr') against scipy.sparse.linalg.lsqr on the same
overdetermined least-squares problems, in one run, one JSON object.

Problem: the 2D grid gradient A = [D_x; D_y] (forward differences on an s × s grid of unknowns,
n = s², m = 2 s (s − 1) ≈ 2n, nnz = 2m), b random: min ‖b − A x‖ is inconsistent and A has
the constants as null space, so LSQR from x₀ = 0 returns the minimum-norm solution (stopping
rule S2, ‖Aᵀr‖ ≤ rtol‖A‖‖r‖). Both run the same stopping rules (sla's rtol = SciPy's
atol = btol; SciPy's conlim test disabled), one thread each (OMP_NUM_THREADS=1 unless set).

Run: OMP_NUM_THREADS=1 PYTHONPATH=python SLA_LIBRARY=build/libsla.so /usr/bin/python3 bench/lsqr.py
[--quick]. Prints {"problems": {name: {sla: {...}, scipy: {...}, ratios}}}.
"""
import json
import os
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import scipy.sparse.linalg as spl  # noqa: E402
import torch  # noqa: E402

import torch_sla  # noqa: E402


def gradient(s):
    """[D_x; D_y] of an s × s grid, CSR."""
    d = sp.diags([-np.ones(s - 1), np.ones(s - 1)], [0, 1], shape=(s - 1, s))
    eye = sp.identity(s)
    return sp.vstack([sp.kron(eye, d), sp.kron(d, eye)]).tocsr()


def best_of(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, min(times), max(times)


def run(s, rtol, repeats):
    A = gradient(s)
    m, n = A.shape
    coo = A.tocoo()
    rng = np.random.default_rng(1)
    b = rng.uniform(-1, 1, m)
    T = torch_sla.SparseTensor(torch.from_numpy(coo.data.copy()),
                               torch.from_numpy(coo.row.astype(np.int64)),
                               torch.from_numpy(coo.col.astype(np.int64)), (m, n))
    bt = torch.from_numpy(b)
    maxiter = 20 * n

    def sla_solve():
        return T.solve(bt, method="lsqr", rtol=rtol, maxiter=maxiter, return_info=True)

    (x, info), t_sla, t_sla_max = best_of(sla_solve, repeats)
    xs = x.numpy()

    def scipy_solve():
        return spl.lsqr(A, b, atol=rtol, btol=rtol, conlim=0, iter_lim=maxiter)

    res, t_sp, t_sp_max = best_of(scipy_solve, repeats)
    xr, itn = res[0], res[2]
    r_sla, r_sp = np.linalg.norm(b - A @ xs), np.linalg.norm(b - A @ xr)
    ar_sla, ar_sp = np.linalg.norm(A.T @ (b - A @ xs)), np.linalg.norm(A.T @ (b - A @ xr))
    return {
        "m": m, "n": n, "nnz": A.nnz, "rtol": rtol,
        "sla": {"iterations": info.iterations, "converged": info.converged,
                "reason": info.reason, "solve_s": round(t_sla, 4), "solve_s_max": round(t_sla_max, 4),
                "ms_per_iteration": round(1e3 * t_sla / max(1, info.iterations), 4),
                "residual": r_sla, "normal_residual": ar_sla},
        "scipy": {"iterations": int(itn), "istop": int(res[1]), "solve_s": round(t_sp, 4),
                  "solve_s_max": round(t_sp_max, 4),
                  "ms_per_iteration": round(1e3 * t_sp / max(1, itn), 4),
                  "residual": r_sp, "normal_residual": ar_sp},
        "ratios": {"scipy_over_sla_time": round(t_sp / t_sla, 3),
                   "scipy_over_sla_per_iteration": round((t_sp / max(1, itn)) /
                                                         (t_sla / max(1, info.iterations)), 3),
                   "x_rel_diff": float(np.linalg.norm(xs - xr) / np.linalg.norm(xr))},
    }


def main():
    quick = "--quick" in sys.argv
    sizes = [100] if quick else [100, 317, 1000]      # n = 1e4, 1e5, 1e6
    out = {"threads": int(os.environ["OMP_NUM_THREADS"]), "problems": {}}
    for s in sizes:
        out["problems"][f"grad2d_{s}x{s}"] = run(s, 1e-6, 1 if s >= 1000 else 3)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
