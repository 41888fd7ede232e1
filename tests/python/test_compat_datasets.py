"""torch-sla compatibility, item 7 of issue 17: torch_sla.datasets generators (built in
libsla in CSR order) checked against independent references (Kronecker products of 1-D
operators, closed-form spectra, manufactured solutions), the graph Laplacian, the Synthetic
keys and the on-disk SuiteSparse loader (no downloads)."""
import math
import os

import numpy as np
import pytest
import scipy.sparse as sp
import torch

import torch_sla
from torch_sla import datasets as D
from torch_sla import gallery

from conftest import MATRIX_DIR

f64 = torch.float64


def T1(n):
    return sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1])


def Bd(n):                       # first-order backward difference
    return sp.diags([-np.ones(n - 1), np.ones(n)], [-1, 0])


def dense(problem):
    return problem.tensor().to_dense().numpy()


def test_laplacians_match_kronecker_references():
    I = sp.eye(7)
    assert np.array_equal(dense(D.laplacian_1d(7)), T1(7).toarray())
    assert np.array_equal(dense(D.laplacian_2d(7)), (sp.kron(I, T1(7)) + sp.kron(T1(7), I)).toarray())
    I4 = sp.eye(4)
    ref3 = sp.kron(sp.kron(I4, I4), T1(4)) + sp.kron(sp.kron(I4, T1(4)), I4) + \
        sp.kron(sp.kron(T1(4), I4), I4)
    assert np.array_equal(dense(D.laplacian_3d(4)), ref3.toarray())
    for p in (D.laplacian_1d(7), D.laplacian_2d(7), D.laplacian_3d(4)):
        assert p.tensor().pattern.identity                    # entries are the CSR slots
        assert torch.equal(p.val, p.tensor().values) and p.nnz() == p.tensor().nnz


def test_spectra_closed_forms():
    lam = torch.linalg.eigvalsh(torch.as_tensor(dense(D.laplacian_1d(12))))
    assert torch.allclose(lam, D.laplacian_1d_eigenvalues(12), atol=1e-12)
    lam2 = torch.linalg.eigvalsh(torch.as_tensor(dense(D.laplacian_2d(6))))
    assert torch.allclose(lam2, D.laplacian_2d_eigenvalues(6).sort().values, atol=1e-12)


@pytest.mark.parametrize("make,order", [(D.poisson_2d, 2), (D.poisson_3d, 2)])
def test_poisson_manufactured_solution_converges(make, order):
    errs = []
    for m in ((7, 15) if make is D.poisson_3d else (15, 31)):
        p = make(m)
        u = p.tensor().solve(p.rhs)
        errs.append(float((u - p.exact).abs().max()))
    assert errs[1] < errs[0] / 3.5                             # O(h²): ≈ 4× per halving


def test_other_generators_match_references():
    m, eps, h = 6, 0.01, 1.0 / 7
    I = sp.eye(m)
    ref = (eps * sp.kron(T1(m), I) + sp.kron(I, T1(m))) / h ** 2      # −ε u_xx on axis 0
    assert np.allclose(dense(D.anisotropic_diffusion_2d(m, eps)), ref.toarray(), rtol=1e-14)
    pe = 20.0
    ref = (sp.kron(I, T1(m)) + sp.kron(T1(m), I)) / h ** 2 + \
        pe / h * (sp.kron(I, Bd(m)) + sp.kron(Bd(m), I))
    A = D.advection_diffusion_2d(m, pe)
    assert np.allclose(dense(A), ref.toarray(), rtol=1e-14)
    assert not bool(A.tensor().is_symmetric())
    n, k = 9, 8.0
    H = D.helmholtz_1d(n, k)
    assert np.allclose(dense(H), T1(n).toarray() * (n + 1) ** 2 - k * k * np.eye(n))
    with pytest.raises(TypeError, match="complex"):
        D.helmholtz_1d(n, k, alpha=2.0)
    # Bratu: the exact solution satisfies A u = λ eᵘ to O(h²)
    for n in (50, 100):
        p = D.bratu_1d(n, lam=1.0)
        r = p.tensor() @ p.exact - torch.exp(p.exact)
        assert float(r.abs().max()) < 5e-4 * (50 / n) ** 2


def test_registry():
    assert D.list_problems() == list(D.PROBLEMS)
    assert D.get("laplacian_1d", n=5).shape == (5, 5)
    with pytest.raises(KeyError):
        D.get("nope")
    for name in D.list_problems():
        kw = D.default_sizes(name)[0]
        p = D.get(name, **kw)
        assert p.shape[0] == p.meta["dof"]


def test_graph_laplacian():
    edges = torch.tensor([[0, 1], [1, 2], [2, 0], [1, 2], [3, 3], [4, 5]])
    w = torch.tensor([1.0, 2.0, 3.0, 0.5, 9.0, 1.0], dtype=f64)
    L = D.graph_laplacian(6, edges, w, shift=0.25).tensor()
    W = np.zeros((6, 6))
    for (i, j), x in zip(edges.tolist(), w.tolist()):
        if i != j:
            W[i, j] += x
            W[j, i] += x
    ref = np.diag(W.sum(1)) - W + 0.25 * np.eye(6)
    assert np.allclose(L.to_dense().numpy(), ref) and L.pattern.identity
    assert L.connected_components()[1] == 3                    # {0,1,2}, {3}, {4,5}
    with pytest.raises(torch_sla.SlaValueError, match="edge 0"):
        gallery.graph_laplacian(2, torch.tensor([[0, 2]]))


def test_gallery_argument_errors():
    with pytest.raises(ValueError, match="dims"):
        gallery.grid([0], 2.0, -1.0, -1.0)
    with pytest.raises(ValueError, match="entries for 2"):
        gallery.grid([3, 3], 4.0, [-1.0], -1.0)
    with pytest.raises(torch_sla.SlaValueError, match="INT32_MAX"):
        gallery.grid([70000, 70000], 4.0, -1.0, -1.0)


def test_synthetic_collection():
    assert "poisson_2d_64" in D.Synthetic and len(D.Synthetic) == 5
    p = D.Synthetic["poisson_2d_16"]
    I = sp.eye(16)
    assert np.array_equal(dense(p), (sp.kron(I, T1(16)) + sp.kron(T1(16), I)).toarray())
    I64 = sp.eye(64)
    an = D.Synthetic["anisotropic_2d_64_eps_001"]
    ref = sp.kron(I64, 0.01 * T1(64)) + sp.kron(T1(64), I64)
    assert abs(an.tensor().to_scipy() - ref).max() < 1e-15
    cd = D.Synthetic["convdiff_2d_64_peclet_10"]
    ref = sp.kron(I64, T1(64)) + sp.kron(T1(64), I64) + 10.0 * (sp.kron(I64, Bd(64)) +
                                                               sp.kron(Bd(64), I64))
    assert abs(cd.tensor().to_scipy() - ref).max() < 1e-13


@pytest.mark.skipif(not os.path.isfile(os.path.join(MATRIX_DIR, "nos6.mtx")),
                    reason="shared matrices not present")
def test_suitesparse_from_a_local_directory(tmp_path):
    assert D.is_suitesparse_available("nos6", directory=MATRIX_DIR)
    p = D.load_suitesparse("nos6", directory=MATRIX_DIR)
    assert p.shape == (675, 675) and p.properties["symmetric"]
    lam, _ = p.tensor().eigsh(k=1, which="SA")
    assert abs(float(lam[0]) - 1.000015) < 1e-5                # README of the matrices
    assert "nos6" in list(D.SuiteSparse(MATRIX_DIR))
    with pytest.raises(D.DatasetUnavailable, match="does not download"):
        D.load_suitesparse("nosuch", directory=str(tmp_path))
    assert not D.is_suitesparse_available("nosuch", directory=str(tmp_path))
