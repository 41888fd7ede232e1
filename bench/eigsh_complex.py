"""Complex Hermitian eigsh: the magnetic Laplacian of an m × m grid (5-point, a random phase
e^{iθ}, θ uniform in [0, 1), on every link, Dirichlet), k = 6 lowest eigenpairs, in one run:
  torch_sla  complex eigsh, shift-invert at sigma = −0.01 (method lanczos, on the real form)
  torch_sla  complex eigsh, method auto (which = SA)
  torch_sla  real eigsh of the same grid at phi = 0 (the real Laplacian; same n, same options)
  SciPy      eigsh(A, k, sigma = −0.01) (ARPACK on the complex A, SuperLU complex factors)
Times are medians of `repeats`; the eigenvalues of each are checked against the others and the
residuals ‖Av − λv‖/‖A‖₁ reported. Prints one JSON object.
Usage: /usr/bin/python3 bench/eigsh_complex.py [m (150)] [repeats (3)]"""
import json
import sys
import time

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla
import torch

from torch_sla import SparseTensor


def magnetic_laplacian(m, phi):
    """phi: the flux per plaquette; phi = None: a random phase in [0, 1) on every link (a
    random magnetic field: a generic spectrum, no Landau-level clusters)."""
    n = m * m
    rng = np.random.default_rng(5)
    idx = np.arange(n).reshape(m, m)        # idx[y, x]
    rows, cols, vals = [np.arange(n)], [np.arange(n)], [np.full(n, 4.0 + 0j)]
    # x-links carry the phase exp(i·phi·y), y-links none (Landau gauge)
    a, b = idx[:, :-1].ravel(), idx[:, 1:].ravel()
    ph = np.exp(1j * (phi * np.repeat(np.arange(m), m - 1) if phi is not None
                      else rng.random(a.size)))
    rows += [a, b]; cols += [b, a]; vals += [-ph, -ph.conj()]
    a, b = idx[:-1, :].ravel(), idx[1:, :].ravel()
    ph = np.ones(a.size) if phi is not None else np.exp(1j * rng.random(a.size))
    rows += [a, b]; cols += [b, a]; vals += [-ph, -ph.conj()]
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(n, n))


def timed(f, repeats):
    ts, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)), out


def residual(A, w, V):
    R = A @ V - V * w
    return float(np.abs(R).sum(0).max() / abs(A).sum(0).max())  # column 1-norms, conservative


def main():
    m = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    k, sigma = 6, -0.01
    A = magnetic_laplacian(m, None)
    L = magnetic_laplacian(m, 0.0).real
    At, Lt = SparseTensor.from_scipy(A), SparseTensor.from_scipy(L)
    res = {"m": m, "n": m * m, "k": k, "sigma": sigma, "repeats": repeats,
           "threads": torch.get_num_threads()}

    def ours(T, **kw):
        w, V, info = T.eigsh(k, return_info=True, **kw)
        return w.numpy(), V.numpy(), info

    t, (w, V, info) = timed(lambda: ours(At, sigma=sigma, method="lanczos"), repeats)
    res["complex_shift_invert"] = {"s": t, "residual": residual(A, w, V),
                                   "iterations": info.iterations,
                                   "factorizations": info.factorizations}
    wref = w
    t, (w, V, info) = timed(lambda: ours(At, which="SA"), repeats)
    res["complex_auto_SA"] = {"s": t, "residual": residual(A, w, V), "method": info.method,
                              "max_dev": float(np.abs(w - wref).max())}
    t, (w, V, info) = timed(lambda: ours(Lt, sigma=sigma, method="lanczos"), repeats)
    res["real_shift_invert"] = {"s": t, "residual": residual(L, w, V),
                                "iterations": info.iterations}
    t, (w, V) = timed(lambda: sla.eigsh(A.tocsc(), k=k, sigma=sigma, which="LM", tol=1e-10),
                      repeats)
    order = np.argsort(w)
    w, V = w[order], V[:, order]
    res["scipy_shift_invert"] = {"s": t, "residual": residual(A, w, V),
                                 "max_dev": float(np.abs(w - wref).max())}
    res["ratio_scipy_over_ours"] = res["scipy_shift_invert"]["s"] / res["complex_shift_invert"]["s"]
    res["ratio_complex_over_real"] = res["complex_shift_invert"]["s"] / res["real_shift_invert"]["s"]
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
