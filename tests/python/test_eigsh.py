"""eigsh: argument checks, the eigenvalue adjoint (sla_pattern_outer_add) with a dense stand-in
forward, and — once libsla exports sla_eigsh — forward results against SciPy."""
import numpy as np
import pytest
import scipy.sparse.linalg as spl
import torch
from torch.autograd import gradcheck

import torch_sla
from torch_sla import SparseTensor, _functions
from conftest import needs_symbol, poisson2d, random_sparse

f64 = torch.float64


def test_eigsh_argument_checks():
    row, col, val = poisson2d(3)
    A = SparseTensor(val, row, col, (9, 9))
    with pytest.raises(ValueError, match="which"):
        A.eigsh(2, which="XX")
    with pytest.raises(ValueError, match="k = 10"):
        A.eigsh(10)


@pytest.mark.skipif(torch_sla._capi.lib.has("sla_eigsh"),
                    reason="sla_eigsh is present: the real tests apply")
def test_eigsh_says_not_implemented_until_c_lands():
    row, col, val = poisson2d(3)
    with pytest.raises(NotImplementedError, match="sla_eigsh"):
        SparseTensor(val, row, col, (9, 9)).eigsh(2)


def _dense_eigsh(pattern, values, k, which, sigma, tol, maxiter):
    """Stand-in forward for the adjoint test: dense eigh of the CSR values (symmetrised)."""
    rows, cols = pattern.csr_rows(), pattern.csr_cols()
    out_vals, out_vecs = [], []
    for v in values:
        D = torch.zeros(pattern.nrows, pattern.ncols, dtype=values.dtype)
        D[rows, cols] = v
        w, V = torch.linalg.eigh(D)
        idx = torch.argsort(w)[-k:] if which == "LA" else torch.argsort(w)[:k]
        out_vals.append(w[idx])
        out_vecs.append(V[:, idx])
    return torch.stack(out_vals), torch.stack(out_vecs).contiguous()


def test_eigenvalue_adjoint_gradcheck(monkeypatch):
    """The backward (C sla_pattern_outer_add) against finite differences of the forward,
    with symmetric perturbations (duplicates on both triangles keep A symmetric)."""
    monkeypatch.setattr(_functions, "eigsh_forward", _dense_eigsh)
    row, col, val = random_sparse(7, seed=3, spd=True)
    lower = row >= col
    r, c, v0 = row[lower], col[lower], val[lower]

    def f(v):      # symmetric matrix from its lower triangle: entries given twice off-diagonal
        off = r != c
        R = torch.cat([r, c[off]])
        C = torch.cat([c, r[off]])
        V = torch.cat([v, v[off]])
        return SparseTensor(V, R, C, (7, 7)).eigsh(3, which="LA")[0]

    assert gradcheck(f, (v0.clone().requires_grad_(),))
    full = torch.stack([val, 1.5 * val]).requires_grad_()
    ev, V = SparseTensor(full, row, col, (2, 7, 7)).eigsh(3, which="SA")
    assert ev.shape == (2, 3) and V.shape == (2, 7, 3)
    ev.sum().backward()                          # Σλ_i: gradient Σ_i v_i v_iᵀ on the pattern
    ref = (V.detach()[:, row, :] * V.detach()[:, col, :]).sum(-1)
    assert torch.allclose(full.grad, ref)


@needs_symbol("sla_eigsh")
@pytest.mark.parametrize("which", ["LA", "SA", "LM"])
def test_eigsh_against_scipy(which):
    row, col, val = poisson2d(10)
    A = SparseTensor(val, row, col, (100, 100))
    w, V = A.eigsh(4, which=which)
    ref = np.sort(spl.eigsh(A.to_scipy(), k=4, which=which)[0])
    assert np.allclose(np.sort(w.numpy()), ref, rtol=1e-8)
    D = A.to_dense()
    assert torch.allclose(D @ V, V * w, atol=1e-8)


@needs_symbol("sla_eigsh")
def test_eigsh_gradcheck_eigenvalues():
    row, col, val = poisson2d(4)
    v = val.clone().requires_grad_()
    assert gradcheck(lambda v: SparseTensor(v, row, col, (16, 16)).eigsh(2, which="SA")[0],
                     (v,))
