"""SciPy reference for bench/bench_eigsh_gen.c: scipy.sparse.linalg.eigsh(K, k=6, M=M, sigma=0,
which='LM') (ARPACK mode 3, (K − σM)⁻¹ by SuperLU) on the same finite-element pairs (1D P1 with
m² nodes, 2D Q1 on an m × m grid, Dirichlet), tol 1e-10 (ARPACK's relative Ritz tolerance).
Operator applications are counted through an explicit OPinv. Prints one JSON object.
Usage: /usr/bin/python3 bench/eigsh_gen_scipy.py [m (256)] [repeats (3)]"""
import json
import sys
import time

import numpy as np
import scipy
import scipy.sparse as sp
import scipy.sparse.linalg as sla


def pair_1d(m):
    h = 1.0 / (m + 1)
    e = np.ones(m)
    K = sp.diags([-e[1:], 2 * e, -e[1:]], [-1, 0, 1]) / h
    M = sp.diags([e[1:], 4 * e, e[1:]], [-1, 0, 1]) * (h / 6)
    return K.tocsc(), M.tocsc()


def pair_2d(m):
    K1, M1 = pair_1d(m)
    return (sp.kron(M1, K1) + sp.kron(K1, M1)).tocsc(), sp.kron(M1, M1).tocsc()


def exact(m, dim, k):
    h = 1.0 / (m + 1)
    t = np.arange(1, k + 1) * np.pi / (m + 1)
    mu = 6 / h**2 * (1 - np.cos(t)) / (2 + np.cos(t))
    if dim == 1:
        return mu
    return np.sort((mu[:, None] + mu[None, :]).ravel())[:k]


def run(K, M, ex, repeats):
    times, ops = [], 0
    for _ in range(repeats):
        t = time.perf_counter()
        lu = sla.splu(K)   # σ = 0: K − σM = K
        cnt = [0]

        def solve(x):
            cnt[0] += 1
            return lu.solve(x)
        op = sla.LinearOperator(K.shape, matvec=solve, dtype=float)
        w, V = sla.eigsh(K, k=6, M=M, sigma=0.0, which="LM", OPinv=op, tol=1e-10)
        times.append(time.perf_counter() - t)
        ops = cnt[0]
    w = np.sort(w)
    err = float(np.max(np.abs(w - ex) / ex))
    times.sort()
    return {"n": K.shape[0], "time_s_median": round(times[len(times) // 2], 4),
            "time_s_min": round(times[0], 4), "time_s_max": round(times[-1], 4),
            "operator_applications": ops, "max_rel_err_closed_form": err,
            "lambda": [float(x) for x in w]}


def main():
    m = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    K1, M1 = pair_1d(m * m)
    K2, M2 = pair_2d(m)
    out = {"scipy": scipy.__version__, "method": "eigsh(K, M=M, sigma=0) with splu", "problems": {
        "fem1d_p1": run(K1, M1, exact(m * m, 1, 6), repeats),
        "fem2d_q1": run(K2, M2, exact(m, 2, 6), repeats)}}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
