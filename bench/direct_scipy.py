#!/usr/bin/python3
"""SciPy reference for bench_direct: the same 2D 5-point Poisson matrices (10^4, 10^5, 10^6
unknowns), timed with scipy.sparse.linalg.spsolve (factor + solve in one call), splu (the
factorization; SuperLU, as SciPy has no CHOLMOD) and the solve with the computed factors.
Prints one JSON object. Run with Debian's interpreter: /usr/bin/python3 bench/direct_scipy.py

Options: --max-n N (skip larger grids), --reps R.
SuperLU is an unsymmetric LU; permc_spec='MMD_AT_PLUS_A' (minimum degree on A+A^T) is the
ordering SciPy recommends for symmetric matrices and is timed next to the default (COLAMD)."""
import argparse
import json
import time

import numpy as np
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def poisson2d(m):
    """5-point Laplacian (Dirichlet) on an m x m grid, CSC, diagonal 4, neighbours -1."""
    t = sp.diags([-np.ones(m - 1), 4 * np.ones(m), -np.ones(m - 1)], [-1, 0, 1])
    e = sp.identity(m)
    s = sp.diags([-np.ones(m - 1), -np.ones(m - 1)], [-1, 1])
    return (sp.kron(e, t) + sp.kron(s, e)).tocsc()


def timed(fn, reps):
    ts = []
    out = None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return {"median": ts[len(ts) // 2], "min": ts[0], "max": ts[-1]}, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-n", type=int, default=10**6)
    ap.add_argument("--reps", type=int, default=0, help="repeats (default: by size)")
    args = ap.parse_args()
    res = {"benchmark": "direct_scipy", "scipy": scipy.__version__, "poisson2d": []}
    for m, reps in ((100, 11), (316, 5), (1000, 1)):
        if m * m > args.max_n:
            continue
        reps = args.reps or reps
        A = poisson2d(m)
        b = 1.0 + (np.arange(m * m) % 7)
        row = {"grid": f"{m}x{m}", "n": m * m}
        row["spsolve_s"], x = timed(lambda: spla.spsolve(A, b), reps)
        row["spsolve_scaled_residual"] = float(
            np.abs(b - A @ x).max() / (spla.norm(A, np.inf) * np.abs(x).max() + np.abs(b).max()))
        row["splu_colamd_s"], _ = timed(lambda: spla.splu(A), reps)
        row["splu_mmd_ata_s"], lu = timed(lambda: spla.splu(A, permc_spec="MMD_AT_PLUS_A"), reps)
        row["splu_mmd_ata_nnz_LU"] = int(lu.L.nnz + lu.U.nnz)
        row["lu_solve_s"], _ = timed(lambda: lu.solve(b), max(reps, 5))
        res["poisson2d"].append(row)
        print(json.dumps(row), flush=True, file=__import__("sys").stderr)
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
