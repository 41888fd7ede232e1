"""Shared fixtures and helpers of the torch_sla tests (run by CTest: SLA_LIBRARY and PYTHONPATH
point at the build tree; run by hand: PYTHONPATH=python /usr/bin/python3 -m pytest tests/python)."""
import os
import sys

import pytest
import torch

_here = os.path.dirname(os.path.abspath(__file__))
_python = os.path.join(_here, "..", "..", "python")
if _python not in sys.path:
    sys.path.insert(0, _python)

import torch_sla  # noqa: E402

DIRECT = ("cholesky", "ldlt", "lu", "klu")
ITERATIVE = ("cg", "bicgstab", "gmres", "minres")
MATRIX_DIR = os.environ.get("SLA_MATRIX_DIR") or os.path.join(_here, "..", "..", "..", "shared",
                                                               "matrices")


def needs_method(method, dtype=torch.float64):
    """skipif-marker for a method that no compiled-in backend serves yet."""
    return pytest.mark.skipif(not torch_sla.method_available(method, dtype),
                              reason=f"no libsla backend serves method '{method}' for {dtype} "
                                     f"yet (see torch_sla.show_backends())")


def needs_symbol(name):
    return pytest.mark.skipif(not torch_sla._capi.lib.has(name),
                              reason=f"libsla does not export {name}() yet")


def poisson2d(nx, ny=None, dtype=torch.float64, shuffle=False, seed=0):
    """5-point Dirichlet Laplacian (4 on the diagonal, −1 to neighbours) as COO (row, col, val);
    shuffle=True returns the entries in random order."""
    ny = ny or nx
    idx = torch.arange(nx * ny).reshape(nx, ny)
    rows, cols = [idx.reshape(-1)], [idx.reshape(-1)]
    vals = [torch.full((nx * ny,), 4.0, dtype=dtype)]
    for a, b in ((idx[1:, :], idx[:-1, :]), (idx[:, 1:], idx[:, :-1])):
        for r, c in ((a, b), (b, a)):
            rows.append(r.reshape(-1))
            cols.append(c.reshape(-1))
            vals.append(torch.full((r.numel(),), -1.0, dtype=dtype))
    row, col, val = torch.cat(rows), torch.cat(cols), torch.cat(vals)
    if shuffle:
        g = torch.Generator().manual_seed(seed)
        p = torch.randperm(row.numel(), generator=g)
        row, col, val = row[p], col[p], val[p]
    return row, col, val


def random_sparse(n, density=0.3, seed=0, dtype=torch.float64, spd=False, dominant=True):
    """A random n×n sparse matrix as COO (row, col, val) with a full diagonal; spd=True gives
    a symmetric diagonally dominant (SPD) one, else diagonally dominant unsymmetric."""
    g = torch.Generator().manual_seed(seed)
    mask = torch.rand(n, n, generator=g) < density
    if spd:
        mask = mask | mask.t()
    mask |= torch.eye(n, dtype=torch.bool)
    dense = torch.randn(n, n, generator=g, dtype=dtype) * mask
    if spd:
        dense = 0.5 * (dense + dense.t())
    if dominant:
        dense += torch.diag(dense.abs().sum(1) + 1.0)
    row, col = mask.nonzero(as_tuple=True)
    return row, col, dense[row, col].clone()


def random_rect(m, n, seed, density=0.3):
    """A random m × n sparse matrix with a full diagonal (3 added: full rank), as COO."""
    g = torch.Generator().manual_seed(seed)
    dense = torch.randn(m, n, generator=g, dtype=torch.float64) * \
        (torch.rand(m, n, generator=g) < density)
    k = min(m, n)
    dense[torch.arange(k), torch.arange(k)] += 3.0
    row, col = dense.nonzero(as_tuple=True)
    return row, col, dense[row, col].clone()


def dense_of(row, col, val, shape):
    """Dense [*batch, M, N] with duplicates summed (reference)."""
    M, N = shape[-2:]
    B = val.reshape(-1, val.shape[-1])
    out = torch.zeros(B.shape[0], M, N, dtype=val.dtype)
    out.index_put_((torch.arange(B.shape[0])[:, None], row[None, :], col[None, :]), B,
                   accumulate=True)
    return out.reshape(*shape)


def symmetric_param(row, col, val, duplicates=2):
    """A symmetric matrix as a function of its lower triangle, for gradchecks of methods that
    read one triangle (cholesky, ldlt, ...): returns (R, C, expand, v0) with expand(v) the COO
    values for indices R, C (each off-diagonal entry stored in both triangles, the first
    `duplicates` lower entries split into two duplicate COO entries) and v0 the parameters."""
    lower = row >= col
    r, c, v0 = row[lower], col[lower], val[lower]
    off = r != c
    ids = torch.arange(r.numel())
    R = torch.cat([r, c[off], r[:duplicates]])
    C = torch.cat([c, r[off], c[:duplicates]])
    idx = torch.cat([ids, ids[off], ids[:duplicates]])
    w = torch.ones(idx.numel(), dtype=val.dtype)
    w[:duplicates] = 0.25
    w[-duplicates:] = 0.75 if duplicates else w[-duplicates:]

    def expand(v):
        return v[..., idx] * w

    return R, C, expand, v0.clone()
