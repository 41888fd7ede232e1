"""Complex AMG (smoothed aggregation, R = Pᴴ) against Jacobi and IC(0) as CG preconditioners on
the magnetic Laplacian (JSON on stdout): links −e^{iθ(y+1)} along x, −1 along y, diagonal 4 + σ,
on s × s grids, two fields: "strong" θ = 0.3, σ = 0.05 (bench/complex_precond.py's matrix) and
"weak" θ = 10/s², σ = 1e-4 (a smooth field: as ill-conditioned as the Poisson matrix). b random
complex, rtol 1e-8; iterations, true relative residual and CPU time of the process (set-up and
solve, best of 3).
Usage: python3 bench/complex_amg.py [sizes...]"""
import json
import sys

import numpy as np
import scipy.sparse as sp
import torch

from complex_precond import cpu
from torch_sla import SparseTensor


def magnetic(s, theta, sigma):
    n = s * s
    idx = np.arange(n).reshape(s, s)            # idx[y, x]
    rows, cols, vals = [idx.ravel()], [idx.ravel()], [np.full(n, 4 + sigma, complex)]
    y = np.repeat(np.arange(s), s - 1)
    i, j = idx[:, :-1].ravel(), idx[:, 1:].ravel()
    e = -np.exp(1j * theta * (y + 1))
    rows += [i, j]; cols += [j, i]; vals += [e, np.conj(e)]
    i, j = idx[:-1, :].ravel(), idx[1:, :].ravel()
    rows += [i, j]; cols += [j, i]; vals += [-np.ones(i.size), -np.ones(i.size)]
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), (n, n))


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [100, 300]
    out = []
    rng = np.random.default_rng(0)
    for s in sizes:
        for field, theta, sigma in (("strong", 0.3, 0.05), ("weak", 10.0 / s ** 2, 1e-4)):
            M = magnetic(s, theta, sigma)
            A = SparseTensor.from_scipy(M)
            b = torch.from_numpy(rng.standard_normal(s * s) + 1j * rng.standard_normal(s * s))
            row = {"grid": s, "n": s * s, "field": field}
            for pc in ("jacobi", "ic0", "amg"):
                t, (x, info) = cpu(lambda: A.solve(b, method="cg", preconditioner=pc, rtol=1e-8,
                                                   maxiter=100000, return_info=True), 3)
                r = np.linalg.norm(M @ x.numpy() - b.numpy()) / np.linalg.norm(b.numpy())
                row[pc] = {"iterations": int(info.iterations), "cpu_s": t, "relres": float(r)}
            out.append(row)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
