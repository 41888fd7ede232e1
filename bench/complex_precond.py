"""Complex IC(0) and complex LSQR, measured in one run (JSON on stdout).

1. The random-phase-free magnetic Laplacian (links −e^{iθ}, θ = 0.3·(y+1) along x, + 0.05 I,
   Hermitian positive definite) on s × s grids: CG + Jacobi against CG + IC(0), rtol 1e-8,
   iterations and solve time (CPU time of the process, best of `repeats`).
2. Complex LSQR on A = [D_x; D_y] ∘ e^{iφ} (the grid gradient with random unit phases, s² unknowns,
   b random complex, rtol 1e-8) against scipy.sparse.linalg.lsqr on the same complex matrix
   (atol = btol = rtol, conlim off): iterations and CPU time.
Usage: python3 bench/complex_precond.py [sizes...]"""
import json
import sys
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import torch

from torch_sla import SparseTensor


def magnetic(s):
    n = s * s
    idx = np.arange(n).reshape(s, s)            # idx[y, x]
    rows, cols, vals = [idx.ravel()], [idx.ravel()], [np.full(n, 4.05, complex)]
    y = np.repeat(np.arange(s), s - 1)
    i, j = idx[:, :-1].ravel(), idx[:, 1:].ravel()
    e = -np.exp(1j * 0.3 * (y + 1))
    rows += [i, j]; cols += [j, i]; vals += [e, np.conj(e)]
    i, j = idx[:-1, :].ravel(), idx[1:, :].ravel()
    rows += [i, j]; cols += [j, i]; vals += [-np.ones(i.size), -np.ones(i.size)]
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), (n, n))


def cpu(f, repeats):
    best, out = np.inf, None
    for _ in range(repeats):
        t = time.process_time()
        out = f()
        best = min(best, time.process_time() - t)
    return best, out


def grad_op(s, rng):
    n = s * s
    e = np.ones(s)
    D = sp.diags([-e[:-1], e[:-1]], [0, 1], shape=(s - 1, s))
    I = sp.identity(s)
    G = sp.vstack([sp.kron(I, D), sp.kron(D, I)]).tocsr()
    G.data = G.data * np.exp(2j * np.pi * rng.random(G.nnz))
    return G


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [100, 300]
    out = {"ic0": [], "lsqr": []}
    rng = np.random.default_rng(0)
    for s in sizes:
        M = magnetic(s)
        A = SparseTensor.from_scipy(M)
        b = torch.from_numpy(rng.standard_normal(s * s) + 1j * rng.standard_normal(s * s))
        row = {"grid": s, "n": s * s}
        for pc in ("jacobi", "ic0"):
            t, (x, info) = cpu(lambda: A.solve(b, method="cg", preconditioner=pc, rtol=1e-8,
                                               return_info=True), 3)
            r = np.linalg.norm(M @ x.numpy() - b.numpy()) / np.linalg.norm(b.numpy())
            row[pc] = {"iterations": int(info.iterations), "cpu_s": t, "relres": float(r)}
        row["iteration_ratio"] = row["jacobi"]["iterations"] / row["ic0"]["iterations"]
        row["time_ratio"] = row["jacobi"]["cpu_s"] / row["ic0"]["cpu_s"]
        out["ic0"].append(row)
        G = grad_op(s, rng)
        Gt = SparseTensor.from_scipy(G)
        c = torch.from_numpy(rng.standard_normal(G.shape[0]) + 1j * rng.standard_normal(G.shape[0]))
        ts, (x, info) = cpu(lambda: Gt.solve(c, method="lsqr", rtol=1e-8, maxiter=100000,
                                              return_info=True), 3)
        tp, res = cpu(lambda: spla.lsqr(G, c.numpy(), atol=1e-8, btol=1e-8, conlim=0,
                                        iter_lim=100000), 3)
        out["lsqr"].append({"grid": s, "m": G.shape[0], "n": G.shape[1],
                            "sla": {"iterations": int(info.iterations), "cpu_s": ts},
                            "scipy": {"iterations": int(res[2]), "cpu_s": tp},
                            "scipy_over_sla": tp / ts,
                            "x_rel_diff": float(np.linalg.norm(x.numpy() - res[0]) /
                                                np.linalg.norm(res[0]))})
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
