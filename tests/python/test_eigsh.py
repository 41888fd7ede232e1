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


# ------------------------------------------------------------------------------------------------
# Generalized problem A v = λ M v (eigsh(k, M=B))
# ------------------------------------------------------------------------------------------------
def _fem1d(n):
    """1D P1 stiffness tridiag(−1, 2, −1)/h and consistent mass h/6·tridiag(1, 4, 1)."""
    h = 1.0 / (n + 1)
    i = torch.arange(n)
    row = torch.cat([i, i[1:], i[:-1]])
    col = torch.cat([i, i[:-1], i[1:]])
    def tri(diag, off):
        return torch.cat([torch.full((n,), diag, dtype=f64),
                          torch.full((2 * n - 2,), off, dtype=f64)])
    return row, col, tri(2.0 / h, -1.0 / h), tri(4 * h / 6, h / 6)


@pytest.mark.skipif(not torch_sla.method_available("cholesky"), reason="needs Cholesky")
@pytest.mark.parametrize("method", ["auto", "lanczos", "dense"])
def test_generalized_fem_closed_form(method):
    n = 400
    row, col, kv, mv = _fem1d(n)
    K = SparseTensor(kv, row, col, (n, n))
    M = SparseTensor(mv, row, col, (n, n))
    w, V, info = K.eigsh(5, which="SA", M=M, method=method, tol=1e-12, return_info=True)
    h, j = 1.0 / (n + 1), torch.arange(1, 6, dtype=f64)
    t = j * np.pi / (n + 1)
    exact = 6 / h**2 * (1 - torch.cos(t)) / (2 + torch.cos(t))
    assert torch.allclose(w, exact, rtol=1e-10)
    Md = M.to_dense()
    assert torch.allclose(V.t() @ Md @ V, torch.eye(5, dtype=f64), atol=1e-10)
    assert info.converged == 5
    # SciPy's eigsh(K, M=M, sigma=0) agrees
    ref = np.sort(spl.eigsh(K.to_scipy().tocsc(), k=5, M=M.to_scipy().tocsc(), sigma=0)[0])
    assert np.allclose(w.numpy(), ref, rtol=1e-9)


def _pair_param(n=8, seed=7):
    """An SPD pair (A, M) as functions of their lower triangles; M has its own pattern."""
    ra, ca, ea, a0 = _sym_system(n, seed)
    rm, cm, vm = random_sparse(n, density=0.3, seed=seed + 1, spd=True)
    vm = vm + 2.0 * (rm == cm)
    rm, cm, em, m0 = symmetric_param(rm, cm, vm)
    return (ra, ca, ea, a0), (rm, cm, em, m0)


@pytest.mark.parametrize("vectors", [False, True])
def test_generalized_gradcheck(vectors):
    if vectors and not (torch_sla.method_available("ldlt") or torch_sla.method_available("lu")):
        pytest.skip("eigenvector gradients factor A − λM (LDLᵀ or LU)")
    (ra, ca, ea, a0), (rm, cm, em, m0) = _pair_param()

    def f(a, m):
        A = SparseTensor(ea(a), ra, ca, (8, 8))
        M = SparseTensor(em(m), rm, cm, (8, 8))
        w, V = A.eigsh(3, which="SA", M=M, method="dense")
        return V if vectors else w
    assert gradcheck(f, (a0.clone().requires_grad_(), m0.clone().requires_grad_()), atol=1e-6)


def test_generalized_errors():
    row, col, kv, mv = _fem1d(10)
    K = SparseTensor(kv, row, col, (10, 10))
    r2, c2, _, mv2 = _fem1d(11)
    with pytest.raises(ValueError, match="A's size"):
        K.eigsh(2, M=SparseTensor(mv2, r2, c2, (11, 11)))
    with pytest.raises(TypeError, match="dtype"):
        K.eigsh(2, M=SparseTensor(mv.float(), row, col, (10, 10)))
    bad = mv.clone()
    bad[3] = -1.0                      # diagonal entry (3, 3) of M
    with pytest.raises(torch_sla.SlaError, match="column 3"):
        K.eigsh(2, which="SA", M=SparseTensor(bad, row, col, (10, 10)), method="lanczos")
    kind = kv.clone()
    kind[:10] -= 22.0                  # diagonal 0: an indefinite A
    with pytest.raises(torch_sla.SlaError, match="no regular mode"):
        SparseTensor(kind, row, col, (10, 10)).eigsh(2, which="LM", method="lanczos",
                                                     M=SparseTensor(mv, row, col, (10, 10)))


@pytest.mark.parametrize("method", ["lanczos", "lobpcg", "arpack", "dense"])
def test_generalized_semidefinite_mass_refused(method):
    """M = I − 11ᵀ/n is positive semidefinite: its Cholesky passes on a last pivot of rounding
    size (~1e-17), which once let the iterative methods return an infinite eigenvalue of the
    pencil (LA: 2.3e14); every method refuses it as dsygvd does."""
    if method == "arpack" and not torch_sla.method_available("cholesky"):
        pytest.skip("no direct backend")
    n = 50
    L = 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    Mp = np.eye(n) - np.ones((n, n)) / n

    def st(X):
        r, c = np.nonzero(X)
        return SparseTensor(torch.tensor(X[r, c]), torch.tensor(r), torch.tensor(c), X.shape)

    with pytest.raises(torch_sla.SlaError, match="mass matrix M"):
        st(L).eigsh(3, which="SA", M=st(Mp), method=method)
