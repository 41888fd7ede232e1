"""SciPy reference for bench/bench_krylov.c: scipy.sparse.linalg.cg with a Jacobi preconditioner
on the same problems (2D 5-point Poisson 1000², 3D 7-point Poisson 100³, b = 1, rtol 1e-8).
Prints one JSON object. Run with Debian's /usr/bin/python3 (bench/krylov.sh does)."""
import json
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as sla


def laplacian_1d(n):
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])


def poisson(n, dim):
    T, I = laplacian_1d(n), sp.identity(n)
    if dim == 2:
        return (sp.kron(I, T) + sp.kron(T, I)).tocsr()
    return (sp.kron(sp.kron(I, I), T) + sp.kron(sp.kron(I, T), I) + sp.kron(sp.kron(T, I), I)).tocsr()


def cg_jacobi(A, rtol):
    b = np.ones(A.shape[0])
    M = sp.diags(1.0 / A.diagonal())
    its = [0]

    def count(_):
        its[0] += 1

    t = time.perf_counter()
    try:
        x, info = sla.cg(A, b, rtol=rtol, atol=0.0, M=M, maxiter=100000, callback=count)
    except TypeError:   # SciPy < 1.12 names the relative tolerance `tol`
        x, info = sla.cg(A, b, tol=rtol, atol=0.0, M=M, maxiter=100000, callback=count)
    t = time.perf_counter() - t
    rel = float(np.linalg.norm(b - A @ x) / np.linalg.norm(b))
    return {"info": int(info), "iterations": its[0], "solve_s": round(t, 4),
            "ms_per_iteration": round(1e3 * t / max(its[0], 1), 4), "relative_residual": rel}


def main():
    quick = "--quick" in sys.argv
    cases = [("poisson2d_200x200", 200, 2), ("poisson3d_30x30x30", 30, 3)] if quick else \
            [("poisson2d_1000x1000", 1000, 2), ("poisson3d_100x100x100", 100, 3)]
    out = {"benchmark": "krylov_scipy", "scipy": scipy.__version__, "numpy": np.__version__,
           "problems": {}}
    for name, n, dim in cases:
        A = poisson(n, dim)
        out["problems"][name] = {"n": A.shape[0], "nnz": int(A.nnz), "cg_jacobi": cg_jacobi(A, 1e-8)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
