"""eigsh (libsla's sla_eigsh / sla_eigsh_vjp): SciPy references, eigenpair residuals, batches,
float32, gradcheck through eigenvalues and eigenvectors, errors."""
import numpy as np
import pytest
import scipy.sparse.linalg as spl
import torch
from torch.autograd import gradcheck

import torch_sla
from torch_sla import SparseTensor
from conftest import needs_symbol, poisson2d, random_sparse, symmetric_param

f64 = torch.float64
pytestmark = needs_symbol("sla_eigsh")


def test_eigsh_argument_checks():
    row, col, val = poisson2d(3)
    A = SparseTensor(val, row, col, (9, 9))
    with pytest.raises(ValueError, match="which"):
        A.eigsh(2, which="XX")
    with pytest.raises(ValueError, match="k = 10"):
        A.eigsh(10)
    with pytest.raises(ValueError, match="method"):
        A.eigsh(2, method="power")


@pytest.mark.parametrize("which", ["LA", "SA", "LM", "SM"])
@pytest.mark.parametrize("method", ["auto", "lobpcg", "lanczos", "dense"])
def test_eigsh_against_scipy(which, method):
    needs_factor = method == "lanczos" and which != "LM"
    if needs_factor and not torch_sla.method_available("auto"):
        pytest.skip("shift-invert Lanczos needs a direct backend")
    row, col, val = poisson2d(12, 10, shuffle=True)
    A = SparseTensor(val, row, col, (120, 120))
    w, V, info = A.eigsh(4, which=which, method=method, return_info=True)
    ref = np.sort(spl.eigsh(A.to_scipy(), k=4, which=which)[0])
    assert np.allclose(w.numpy(), ref, rtol=1e-9, atol=1e-10)
    D = A.to_dense()
    assert torch.allclose(D @ V, V * w, atol=1e-8)
    assert torch.allclose(V.t() @ V, torch.eye(4, dtype=f64), atol=1e-8)
    assert info.converged == 4 and info.method in ("lobpcg", "lanczos", "dense", "arpack")
    # sign convention: the largest-magnitude component of each vector is positive
    big = V.abs().argmax(0)
    assert (V[big, torch.arange(4)] > 0).all()


@pytest.mark.skipif(not torch_sla.method_available("auto"), reason="needs a direct backend")
def test_eigsh_sigma_nearest():
    row, col, val = poisson2d(10)
    A = SparseTensor(val, row, col, (100, 100))
    w, _ = A.eigsh(3, sigma=2.0)
    ref = np.sort(spl.eigsh(A.to_scipy(), k=3, sigma=2.0)[0])
    assert np.allclose(w.numpy(), ref, rtol=1e-9)


def test_eigsh_batched_and_float32():
    row, col, val = poisson2d(6)
    vb = torch.stack([val, 2.0 * val, val + 0.5 * (row == col)])
    A = SparseTensor(vb, row, col, (3, 36, 36))
    w, V = A.eigsh(3, which="SA")
    assert w.shape == (3, 3) and V.shape == (3, 36, 3)
    ref = torch.linalg.eigvalsh(A.to_dense())[:, :3]
    assert torch.allclose(w, ref, atol=1e-9)
    w32, V32 = SparseTensor(val.float(), row, col, (36, 36)).eigsh(2, which="LA")
    assert w32.dtype == torch.float32
    assert torch.allclose(w32.double(), torch.linalg.eigvalsh(A.to_dense()[0])[-2:], rtol=1e-5)
    w0, none = A.eigsh(2, which="LA", return_eigenvectors=False)
    assert none is None and w0.shape == (3, 2)


def _sym_system(n=8, seed=5):
    """SPD matrix with well-separated eigenvalues, as a function of its lower triangle."""
    row, col, val = random_sparse(n, density=0.5, seed=seed, spd=True)
    val = val + 3.0 * (row == col) * (row.to(f64) + 1)     # spread the diagonal
    return symmetric_param(row, col, val)


@pytest.mark.parametrize("which", ["SA", "LA"])
def test_gradcheck_eigenvalues(which):
    row, col, expand, v0 = _sym_system()
    f = lambda v: SparseTensor(expand(v), row, col, (8, 8)).eigsh(3, which=which,
                                                                  method="dense")[0]
    assert gradcheck(f, (v0.clone().requires_grad_(),), atol=1e-6)


@pytest.mark.skipif(not torch_sla.method_available("ldlt") and
                    not torch_sla.method_available("lu"),
                    reason="eigenvector gradients factor A − λI (LDLᵀ or LU)")
def test_gradcheck_eigenvectors():
    row, col, expand, v0 = _sym_system()
    f = lambda v: SparseTensor(expand(v), row, col, (8, 8)).eigsh(2, which="SA",
                                                                  method="dense")[1]
    assert gradcheck(f, (v0.clone().requires_grad_(),), atol=1e-6)


def test_eigenvalue_gradient_is_outer_product_on_pattern():
    row, col, val = poisson2d(5)
    v = val.clone().requires_grad_()
    w, V = SparseTensor(v, row, col, (25, 25)).eigsh(2, which="SA")
    w.sum().backward()
    V = V.detach()
    assert torch.allclose(v.grad, (V[row] * V[col]).sum(1), atol=1e-10)


def test_unsymmetric_matrix_message_from_c():
    row, col, val = random_sparse(6, seed=2)
    with pytest.raises(ValueError, match="symmetr"):
        SparseTensor(val, row, col, (6, 6)).eigsh(2)


def test_eigsh_nonconvergence_warns_or_raises():
    row, col, val = poisson2d(30)
    A = SparseTensor(val, row, col, (900, 900))
    with pytest.warns(torch_sla.ConvergenceWarning, match="eigsh did not converge"):
        w, V, info = A.eigsh(4, which="SA", method="lobpcg", maxiter=2, tol=1e-14,
                             return_info=True)
    assert info.converged < 4 and info.max_residual > 1e-14
    with pytest.raises(torch_sla.ConvergenceError):
        A.eigsh(4, which="SA", method="lobpcg", maxiter=2, tol=1e-14, strict=True)
